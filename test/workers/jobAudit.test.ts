import { expect } from 'chai';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { systemClock } from '../../infra/clock.ts';
import { silentLogger } from '../../infra/logger.ts';
import { redisConnectionOptions } from '../../infra/queue/connection.ts';
import { SETTINGS } from '../../domain/config/settings.ts';
import { allProjections } from '../../projections/index.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { EventJobs } from '../../workers/eventJobs.ts';
import { JobQueues } from '../../workers/jobQueues.ts';
import { auditEventJobs, SETTLED_MS } from '../../workers/reconcile/jobAudit.ts';
import { Reactor } from '../../workers/reactor.ts';
import type { ScheduledRole } from '../../workers/role.ts';
import { WorkerHost } from '../../workers/workerHost.ts';
import { waitUntil } from '../infra/eventStore.contract.ts';
import { eventually } from '../support/eventually.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { workerContextOver, workerStoresEachTest } from '../support/workerStores.ts';

/**
 * The reconciler's pass over the log (issue 34), on a real SQLite log and a real Redis: every
 * event a role reacts to has its job; a job Redis lost (its last second unwritten when it was
 * killed) is enqueued again, with the same id, and one that failed is tried again. And the worker
 * host gives a scheduled role whose next cycle was lost a next cycle again.
 */
describe('Reconciler: jobs found again from the log (real Redis)', () => {
  const redisUrl = () => process.env.REDIS_URL!;
  const stores = workerStoresEachTest({ pollIntervalMs: 10 });
  let prefix: string;
  let queueName: string;
  let queue: Queue;
  let queues: JobQueues;

  beforeEach(() => {
    prefix = uniqueName('audit');
    queueName = uniqueName('queue');
    queue = new Queue(queueName, { connection: redisConnectionOptions(redisUrl()), prefix });
    queues = new JobQueues(redisUrl(), prefix);
  });
  afterEach(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    await queues.close();
  });

  const reactions = () => [{ queue: queueName, eventTypes: ['SomethingHappened'] }];
  const audit = (now: number) =>
    auditEventJobs(
      { eventStore: stores.eventStore, readStore: stores.readStore, jobs: new EventJobs(reactions()), queues },
      { maxEvents: 10_000, now },
    );
  const later = () => Date.now() + SETTLED_MS + 1000;

  it('enqueues again, under its own id, the job of an event that Redis lost; the others it leaves', async () => {
    const events = [
      newEvent('SomethingHappened', { n: 1 }),
      newEvent('Ignored'),
      newEvent('SomethingHappened', { n: 2 }),
    ];
    const appended = await stores.eventStore.appendToStream(uniqueName('thing-'), events);
    const reactor = new Reactor({
      eventStore: stores.eventStore,
      readStore: stores.readStore,
      redisUrl: redisUrl(),
      reactions: reactions(),
      logger: silentLogger(),
      clock: systemClock,
      prefix,
    });
    await reactor.start();
    await waitUntil(() => reactor.position >= appended.position);
    await reactor.stop();
    // Redis's last second lost: the second job is gone, the reactor's checkpoint past it.
    await (await queue.getJob(events[2]!.id))!.remove();

    const report = await audit(later());
    expect(report).to.include({ events: 3, present: 1, added: 1, retried: 0, checkpoint: appended.position });
    const job = (await queue.getJob(events[2]!.id))!;
    expect(job.data).to.deep.include({ eventId: events[2]!.id, data: { n: 2 } });
    expect(await queue.getJobCounts('waiting')).to.deep.equal({ waiting: 2 });
    // Done twice, nothing twice: the pass has moved past these events.
    expect(await audit(later())).to.include({ events: 0, added: 0 });
  });

  it('makes sure of every job again from the start of the log when Redis came back without its data', async () => {
    const events = [newEvent('SomethingHappened', { n: 1 }), newEvent('SomethingHappened', { n: 2 })];
    await stores.eventStore.appendToStream(uniqueName('thing-'), events);
    expect(await audit(later())).to.include({ events: 2, added: 2, rewound: false });
    // Another, empty, Redis at the same address: no job, no id of its data.
    await queue.obliterate({ force: true });
    const redis = new Redis(redisUrl());
    try {
      await redis.del(`${prefix}:reconciler:epoch`);
    } finally {
      redis.disconnect();
    }
    expect(await audit(later())).to.include({ events: 2, added: 2, rewound: true });
    expect(await audit(later())).to.include({ events: 0, rewound: false });
  });

  it('waits for events too young for Redis to have written their jobs', async () => {
    await stores.eventStore.appendToStream(uniqueName('thing-'), [newEvent('SomethingHappened', { n: 1 })]);
    expect(await audit(Date.now())).to.include({ events: 0, added: 0 });
    expect(await audit(later())).to.include({ events: 1, added: 1 });
  });

  it('tries again a job that failed for good', async () => {
    const event = newEvent('SomethingHappened', { n: 1 });
    await stores.eventStore.appendToStream(uniqueName('thing-'), [event]);
    const failing = new Worker(
      queueName,
      async () => {
        throw new Error('gave up');
      },
      { connection: redisConnectionOptions(redisUrl()), prefix },
    );
    try {
      await queue.add('SomethingHappened', {}, { jobId: event.id, attempts: 1 });
      await eventually(async () => (await queue.getJobState(event.id)) === 'failed', 10_000, 'the job failed');
    } finally {
      await failing.close();
    }
    expect(await audit(later())).to.include({ events: 1, retried: 1, added: 0 });
    expect(await queue.getJobState(event.id)).to.equal('waiting');
  });

  it('gives a scheduled role whose next cycle was lost a next cycle again', async function () {
    this.timeout(30_000);
    let cycles = 0;
    const role: ScheduledRole = {
      kind: 'scheduled',
      name: queueName,
      interval: SETTINGS.reconcilerInterval,
      async run() {
        cycles += 1;
        return { done: 0, skipped: [] };
      },
    };
    const host = new WorkerHost({
      redisUrl: redisUrl(),
      roles: [role],
      context: workerContextOver(stores, ReadModels.in(stores.readStore, allProjections)),
      logger: silentLogger(),
      prefix,
      scheduleRefreshMs: 100,
    });
    await host.start();
    try {
      await eventually(() => cycles >= 1, 10_000, 'the first cycle');
      // The next cycle (delayed by the interval) is lost, as Redis's last second would lose it.
      await eventually(async () => (await queue.getJobScheduler(queueName))?.next !== undefined, 10_000);
      const lost = `repeat:${queueName}:${(await queue.getJobScheduler(queueName))!.next}`;
      await eventually(async () => (await queue.getJobState(lost)) === 'delayed', 10_000, 'the next cycle delayed');
      // BullMQ refuses to remove a scheduler's job: its keys go as Redis's lost second takes them.
      const redis = new Redis(redisUrl());
      try {
        await redis.zrem(queue.toKey('delayed'), lost);
        await redis.del(queue.toKey(lost));
      } finally {
        redis.disconnect();
      }
      expect(await queue.getJobState(lost)).to.equal('unknown');
      await eventually(
        async () => {
          const next = (await queue.getJobScheduler(queueName))?.next;
          return next !== undefined && (await queue.getJobState(`repeat:${queueName}:${next}`)) === 'delayed';
        },
        10_000,
        'a next cycle queued again',
      );
    } finally {
      await host.stop();
    }
  });
});
