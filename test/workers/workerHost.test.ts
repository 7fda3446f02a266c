import { expect } from 'chai';
import { Queue } from 'bullmq';
import { join } from 'node:path';
import { createCommandContext } from '../../commands/commandContext.ts';
import type { ConfigSections } from '../../domain/config/settings.ts';
import { SETTINGS } from '../../domain/config/settings.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { systemClock } from '../../infra/clock.ts';
import { silentLogger } from '../../infra/logger.ts';
import { redisConnectionOptions } from '../../infra/queue/connection.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { createTransferTools } from '../../infra/transfer/transferTools.ts';
import { readModelPorts } from '../../projections/readModelPorts.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import type { ScheduledRole } from '../../workers/role.ts';
import { createWorkerContext, type WorkerContext } from '../../workers/workerContext.ts';
import { WorkerHost } from '../../workers/workerHost.ts';
import { eventually } from '../support/eventually.ts';
import { uniqueName } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';

describe('Worker host: the schedules of scheduled roles (real Redis)', () => {
  const redisUrl = () => process.env.REDIS_URL!;
  let dir: ReturnType<typeof makeTempDir>;
  let eventStore: SqliteEventStore;
  let readStore: SqliteReadStore;
  let prefix: string;
  let queue: Queue;
  let name: string;

  beforeEach(() => {
    dir = makeTempDir();
    eventStore = new SqliteEventStore(join(dir.path, 'events.sqlite'), { pollIntervalMs: 10 });
    readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'));
    prefix = uniqueName('test');
    name = uniqueName('scheduled');
    queue = new Queue(name, { connection: redisConnectionOptions(redisUrl()), prefix });
  });
  afterEach(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    await eventStore.close();
    await readStore.close();
    dir.dispose();
  });

  /** A worker context whose `/config` is what `sections()` gives at the moment it is asked. */
  const contextWith = (sections: () => ConfigSections): WorkerContext => {
    const readModels = ReadModels.in(readStore);
    return {
      ...createWorkerContext(
        createCommandContext({ eventStore, ...readModelPorts(readModels) }),
        readModels,
        { waitFor: async () => true },
        silentLogger(),
        createTransferTools({ dataDir: dir.path, clock: systemClock }),
        { clock: systemClock },
      ),
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
