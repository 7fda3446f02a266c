import { expect } from 'chai';
import { Queue, type Job } from 'bullmq';
import { join } from 'node:path';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import { redisConnectionOptions } from '../../infra/queue/connection.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { Reactor, workerCheckpointsCollection, type EventJob } from '../../workers/reactor.ts';
import { WorkerHost } from '../../workers/workerHost.ts';
import { waitUntil } from '../infra/eventStore.contract.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';

describe('Reactor and workers (real Redis)', () => {
  const redisUrl = () => process.env.REDIS_URL!;
  let dir: ReturnType<typeof makeTempDir>;
  let eventStore: SqliteEventStore;
  let readStore: SqliteReadStore;
  let prefix: string;
  let queueName: string;

  beforeEach(() => {
    dir = makeTempDir();
    eventStore = new SqliteEventStore(join(dir.path, 'events.sqlite'), { pollIntervalMs: 10 });
    readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'));
    prefix = uniqueName('test');
    queueName = uniqueName('queue');
  });
  afterEach(async () => {
    await eventStore.close();
    await readStore.close();
    dir.dispose();
  });

  const reactorFor = () =>
    new Reactor({
      eventStore,
      readStore,
      redisUrl: redisUrl(),
      reactions: [{ queue: queueName, eventTypes: ['SomethingHappened'] }],
      logger: silentLogger(),
      prefix,
    });

  it('turns chosen events into jobs whose id is the event id, once, even when replayed', async () => {
    const stream = uniqueName('thing-');
    const events = [newEvent('SomethingHappened', { n: 1 }), newEvent('Ignored'), newEvent('SomethingHappened', { n: 2 })];
    const appended = await eventStore.appendToStream(stream, events);
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
      await readStore.collection(workerCheckpointsCollection).deleteMany({});
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

  it('hands the jobs to the processor of their queue', async () => {
    const processed: string[] = [];
    const host = new WorkerHost(
      redisUrl(),
      [{ queue: queueName, process: async (job: Job<EventJob>) => void processed.push(job.data.eventId) }],
      silentLogger(),
      prefix,
    );
    host.start();
    const reactor = reactorFor();
    await reactor.start();
    const event = newEvent('SomethingHappened', { n: 3 });
    await eventStore.appendToStream(uniqueName('thing-'), [event]);
    try {
      await waitUntil(() => processed.includes(event.id), 10_000);
    } finally {
      await reactor.stop();
      await host.stop();
      const queue = new Queue(queueName, { connection: redisConnectionOptions(redisUrl()), prefix });
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
