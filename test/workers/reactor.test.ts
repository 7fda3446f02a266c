import { expect } from 'chai';
import { Queue } from 'bullmq';
import { silentLogger } from '../../infra/logger.ts';
import { redisConnectionOptions } from '../../infra/queue/connection.ts';
import { Reactor, reactionsOf, workerCheckpointsCollection, type EventJob } from '../../workers/reactor.ts';
import type { Event } from '../../domain/shared/event.ts';
import type { EventRole } from '../../workers/role.ts';
import { RoleStatusStore } from '../../workers/roleStatus.ts';
import { WorkerHost } from '../../workers/workerHost.ts';
import { waitUntil } from '../infra/eventStore.contract.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { workerContextOver, workerStoresEachTest } from '../support/workerStores.ts';
import { systemClock } from '../../infra/clock.ts';

describe('Reactor and workers (real Redis)', () => {
  const redisUrl = () => process.env.REDIS_URL!;
  const stores = workerStoresEachTest({ pollIntervalMs: 10 });
  let prefix: string;
  let queueName: string;

  beforeEach(() => {
    prefix = uniqueName('test');
    queueName = uniqueName('queue');
  });
  afterEach(async () => {});

  const reactorFor = () =>
    new Reactor({
      eventStore: stores.eventStore,
      readStore: stores.readStore,
      redisUrl: redisUrl(),
      reactions: [{ queue: queueName, eventTypes: ['SomethingHappened'] }],
      logger: silentLogger(),
      prefix,
      clock: systemClock,
    });

  it('turns chosen events into jobs whose id is the event id, once, even when replayed', async () => {
    const stream = uniqueName('thing-');
    const events = [
      newEvent('SomethingHappened', { n: 1 }),
      newEvent('Ignored'),
      newEvent('SomethingHappened', { n: 2 }),
    ];
    const appended = await stores.eventStore.appendToStream(stream, events);
    const queue = new Queue(queueName, { connection: redisConnectionOptions(redisUrl()), prefix });
    try {
      let reactor = reactorFor();
      await reactor.start();
      await waitUntil(() => reactor.position >= appended.position);
      await reactor.stop();
      const jobs = await queue.getJobs(['waiting']);
      expect(jobs.map((job) => job.id).sort()).to.deep.equal([events[0]!.id, events[2]!.id].sort());
      expect((jobs.find((job) => job.id === events[0]!.id)!.data as EventJob).data).to.deep.equal({ n: 1 });

      // Lose the checkpoint: the replay enqueues the same job ids, so nothing doubles.
      await stores.readStore.collection(workerCheckpointsCollection).deleteMany({});
      reactor = reactorFor();
      await reactor.start();
      await waitUntil(() => reactor.position >= appended.position);
      await reactor.stop();
      expect(await queue.getJobCounts('waiting')).to.deep.equal({ waiting: 2 });
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it('hands the jobs to the role of their queue, as the data the role made of the event', async () => {
    const processed: { n: number; eventId: string }[] = [];
    const role: EventRole<Event<'SomethingHappened', { n: number }>, { n: number; eventId: string }> = {
      kind: 'event',
      name: queueName,
      handles: { SomethingHappened: true },
      jobOf: (event, { id }) => ({ n: event.data.n, eventId: id }),
      async process(job) {
        processed.push(job);
        return { done: 1, skipped: [] };
      },
    };
    const host = new WorkerHost({
      redisUrl: redisUrl(),
      roles: [role],
      context: workerContextOver(stores),
      logger: silentLogger(),
      prefix,
    });
    await host.start();
    const reactor = new Reactor({
      eventStore: stores.eventStore,
      readStore: stores.readStore,
      redisUrl: redisUrl(),
      reactions: reactionsOf([role]),
      logger: silentLogger(),
      prefix,
      clock: systemClock,
    });
    await reactor.start();
    const event = newEvent('SomethingHappened', { n: 3 });
    await stores.eventStore.appendToStream(uniqueName('thing-'), [event]);
    try {
      await waitUntil(() => processed.some((job) => job.eventId === event.id), 10_000);
      expect(processed).to.deep.equal([{ n: 3, eventId: event.id }]);
      // The cycle is recorded once `process` has returned: wait for it rather than race it.
      const status = new RoleStatusStore(redisUrl(), prefix);
      try {
        let [reported] = await status.statusOf([role]);
        for (const deadline = Date.now() + 10_000; !reported?.lastCycle && Date.now() < deadline;) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          [reported] = await status.statusOf([role]);
        }
        expect(reported!.lastCycle).to.include({ jobId: event.id, done: 1, skipped: 0, error: null });
      } finally {
        await status.close();
      }
    } finally {
      await reactor.stop();
      await host.stop();
      const queue = new Queue(queueName, { connection: redisConnectionOptions(redisUrl()), prefix });
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
