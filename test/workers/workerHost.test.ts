import { expect } from 'chai';
import { Queue } from 'bullmq';
import type { ConfigSections } from '../../domain/config/settings.ts';
import { SETTINGS } from '../../domain/config/settings.ts';
import { silentLogger } from '../../infra/logger.ts';
import { redisConnectionOptions } from '../../infra/queue/connection.ts';
import type { ScheduledRole } from '../../workers/role.ts';
import type { WorkerContext } from '../../workers/workerContext.ts';
import { WorkerHost } from '../../workers/workerHost.ts';
import { eventually } from '../support/eventually.ts';
import { uniqueName } from '../support/events.ts';
import { workerContextOver, workerStoresEachTest } from '../support/workerStores.ts';

describe('Worker host: the schedules of scheduled roles (real Redis)', () => {
  const redisUrl = () => process.env.REDIS_URL!;
  const stores = workerStoresEachTest({ pollIntervalMs: 10 });
  let prefix: string;
  let queue: Queue;
  let name: string;

  beforeEach(() => {
    prefix = uniqueName('test');
    name = uniqueName('scheduled');
    queue = new Queue(name, { connection: redisConnectionOptions(redisUrl()), prefix });
  });
  afterEach(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
  });

  /** A worker context whose `/config` is what `sections()` gives at the moment it is asked. */
  const contextWith = (sections: () => ConfigSections): WorkerContext => {
    return {
      ...workerContextOver(stores),
      settings: async () => sections(),
    };
  };

  const hostOf = (role: ScheduledRole, context: WorkerContext) =>
    new WorkerHost({
      redisUrl: redisUrl(),
      roles: [role],
      context,
      logger: silentLogger(),
      prefix,
      scheduleRefreshMs: 50,
    });

  const scheduler = () => queue.getJobScheduler(name);

  it('keeps an interval changed in /config across restarts, its first cycles included', async () => {
    let cycles = 0;
    const role: ScheduledRole = {
      kind: 'scheduled',
      name,
      interval: SETTINGS.throttlerInterval,
      run: async () => {
        cycles += 1;
        return { done: 0, skipped: [] };
      },
    };
    let sections: ConfigSections = {};
    const context = contextWith(() => sections);

    // Made at the default interval (600 s), then changed to 1 s while the host runs.
    const first = hostOf(role, context);
    await first.start();
    try {
      await eventually(async () => (await scheduler())?.every === 600_000, 10_000, 'the default schedule');
      sections = { 'conveyor-throttler': { interval: '1' } };
      await eventually(async () => (await scheduler())?.every === 1000, 10_000, 'the changed schedule');
    } finally {
      await first.stop();
    }
    // The scheduler's phase fits the new interval, not the old one.
    expect((await scheduler())?.offset ?? 0).to.be.below(1000);

    // Down long enough for the schedule to fall behind, then started again twice.
    for (const restart of [1, 2]) {
      await eventually(async () => ((await scheduler())?.next ?? Infinity) < Date.now(), 10_000, 'a missed cycle');
      const before = cycles;
      const again = hostOf(role, context);
      await again.start();
      try {
        // The missed cycle, then the next one a second later: not after the old 600 s phase.
        await eventually(() => cycles >= before + 2, 15_000, `two cycles after restart ${restart}`);
      } finally {
        await again.stop();
      }
      expect((await scheduler())?.every).to.equal(1000);
    }
  });
});
