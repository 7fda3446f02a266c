import { expect } from 'chai';
import { Redis } from 'ioredis';
import { join } from 'node:path';
import type { AppendPath } from '../../infra/eventstore/esdbAppendPath.ts';
import { openEsdbEventStore, storeForPath } from '../../infra/eventstore/esdbEventStoreOpening.ts';
import type { EventStore, StreamAppend } from '../../infra/eventstore/eventStore.ts';
import {
  StepEventType,
  SteppedEventStore,
  stepIdOf,
  stepStreamName,
  type SteppedEventStoreOptions,
} from '../../infra/eventstore/steppedEventStore.ts';
import { StreamLeases, type StreamLease } from '../../infra/eventstore/streamLeases.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { expectRejection } from '../support/expectRejection.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { SequentialSqliteEventStore, SimulatedCrash } from './sequentialSqliteEventStore.ts';

/**
 * What the service writes through once the path is chosen, over a SQLite store that appends one
 * stream per call (as an EventStoreDB server does) and the run's real Redis.
 */
describe('The event store for a path of multi-stream appends', () => {
  const atomic: AppendPath = { kind: 'atomic', reason: 'test' };
  const stepped: AppendPath = { kind: 'stepped', reason: 'test' };
  let dir: ReturnType<typeof makeTempDir>;
  let prefix: string;
  let admin: Redis;
  let cleanups: (() => Promise<unknown>)[];

  beforeEach(() => {
    dir = makeTempDir();
    prefix = uniqueName('opening-');
    const url = process.env.REDIS_URL;
    if (!url) throw new Error('REDIS_URL is set by the root hooks');
    admin = new Redis(url);
    cleanups = [];
  });

  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    const keys = await admin.keys(`${prefix}:*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
    dir.dispose();
  });

  const inner = (): SequentialSqliteEventStore => {
    const store = new SequentialSqliteEventStore(join(dir.path, 'events.sqlite'));
    cleanups.push(() => store.close());
    return store;
  };

  const steps = (redis: Redis, options: Partial<SteppedEventStoreOptions> = {}): SteppedEventStoreOptions => ({
    redis,
    keyPrefix: prefix,
    leaseTtlMs: 300,
    recoveryIntervalMs: 0,
    ...options,
  });

  const twoStreams = (): StreamAppend[] =>
    ['rule-', 'replica-'].map((category, index) => ({
      streamName: uniqueName(category),
      events: [newEvent(`Decided${index}`)],
      expectedRevision: 'no_stream' as const,
    }));

  /** A writer of the stepped protocol that dies inside a step, after its first stream. */
  const dieInsideAStep = async (): Promise<StreamAppend[]> => {
    const redis = new Redis(admin.options);
    const writer = await SteppedEventStore.open(inner(), steps(redis));
    cleanups.push(() => writer.close());
    const appends = twoStreams();
    const dying = new SequentialSqliteEventStore(join(dir.path, 'events.sqlite'));
    const store = new SteppedEventStore(dying, steps(redis));
    cleanups.push(() => store.close());
    dying.crashAfter(1, {
      counts: (name) => appends.some((append) => append.streamName === name),
      onCrash: () => redis.disconnect(),
    });
    await expectRejection(store.appendToStreams(appends), SimulatedCrash);
    return appends;
  };

  it('wraps the store in the stepped protocol on the stepped path', async () => {
    const redis = new Redis(admin.options);
    const store = await storeForPath(inner(), stepped, steps(redis));
    cleanups.push(async () => {
      await store.close();
      redis.disconnect();
    });
    expect(store).to.be.instanceOf(SteppedEventStore);
    const appends = twoStreams();
    await store.appendToStreams(appends);
    const [event] = await store.readStream(appends[0]!.streamName);
    expect(event!.metadata.step).to.deep.equal({ id: stepIdOf(appends), count: 2 });
  });

  it('writes through the store itself on the atomic path, after completing the steps the stepped protocol left', async () => {
    const appends = await dieInsideAStep();
    const reader = inner();
    expect(await reader.readStream(appends[1]!.streamName)).to.deep.equal([]);

    const redis = new Redis(admin.options);
    cleanups.push(async () => redis.disconnect());
    const store: EventStore = await storeForPath(reader, atomic, steps(redis));
    expect(store).to.equal(reader);
    for (const append of appends)
      expect((await reader.readStream(append.streamName)).map((event) => event.type)).to.deep.equal(
        append.events.map((event) => event.type),
      );
    expect((await reader.readStream(stepStreamName(stepIdOf(appends)))).map((event) => event.type)).to.deep.equal([
      StepEventType.started,
      StepEventType.completed,
    ]);
    expect(redis.status, 'its own Redis connection is left to its owner').to.equal('ready');
  });

  it('refuses the atomic path while a writer of the stepped protocol still holds a step', async () => {
    const appends = await dieInsideAStep();
    // A live writer of the old path (completing that very step, say) holds its second stream, once
    // the dead writer's lease lapsed, and keeps renewing its own.
    const leases = new StreamLeases(admin, { keyPrefix: prefix, ttlMs: 60_000 });
    let live: StreamLease | undefined;
    await eventually(async () => {
      const outcome = await leases.tryAcquire([appends[1]!.streamName], { allowPendingOf: stepIdOf(appends) });
      if (outcome.kind === 'taken') live = outcome.lease;
      return live !== undefined;
    });
    cleanups.push(() => live!.release());

    const redis = new Redis(admin.options);
    cleanups.push(async () => redis.disconnect());
    const refusal = await expectRejection(storeForPath(inner(), atomic, steps(redis, { leaseWaitMs: 200 })), Error);
    expect(refusal.message).to.match(/1 multi-stream steps are held by writers of the stepped protocol/);
  });

  it('fails to open when the server cannot be reached, before anything is written', async () => {
    const failure = await expectRejection(
      openEsdbEventStore('esdb://127.0.0.1:1?tls=false', { steps: { redis: admin, keyPrefix: prefix } }),
      Error,
    );
    expect(failure.message).to.match(/UNAVAILABLE/);
    expect(await admin.keys(`${prefix}:*`)).to.deep.equal([]);
  });
});
