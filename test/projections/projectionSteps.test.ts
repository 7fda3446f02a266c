import { expect } from 'chai';
import { Redis } from 'ioredis';
import { join } from 'node:path';
import type { Event } from '../../domain/shared/event.ts';
import type { StreamAppend } from '../../infra/eventstore/eventStore.ts';
import { SteppedEventStore } from '../../infra/eventstore/steppedEventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { documentProjection, type Projected } from '../../projections/projection.ts';
import { ProjectionRunner } from '../../projections/runtime/projectionRunner.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { expectRejection } from '../support/expectRejection.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { SequentialSqliteEventStore, SimulatedCrash } from '../infra/sequentialSqliteEventStore.ts';

type Decided = Event<'Decided', { index: number }>;
type Marker = Projected<{ index: number }>;
const markers: CollectionSpec = { name: 'markers', indexes: [] };

/** One document per stream that received a `Decided` event. */
const markerProjection = documentProjection<Marker, Decided>({
  name: 'markers',
  version: 1,
  collection: markers,
  handles: { Decided: true },
  creates: ['Decided'],
  documentId: (_event, envelope) => envelope.streamName,
  evolve: (_document, event, envelope) => ({ _id: envelope.streamName, index: event.data.index }),
});

describe('Projections and multi-stream steps written stream by stream (EventStoreDB)', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let prefix: string;
  const closers: (() => Promise<unknown>)[] = [];

  beforeEach(() => {
    dir = makeTempDir();
    prefix = uniqueName('lane-steps-');
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    const redis = new Redis(process.env.REDIS_URL!);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    dir.dispose();
  });

  const writer = async () => {
    const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
    const inner = new SequentialSqliteEventStore(join(dir.path, 'events.sqlite'));
    const store = await SteppedEventStore.open(inner, {
      redis,
      keyPrefix: prefix,
      leaseTtlMs: 300,
      recoveryIntervalMs: 0,
    });
    closers.push(async () => {
      await store.close().catch(() => inner.close());
      redis.disconnect();
    });
    return { inner, redis, store };
  };

  it('shows none of a step whose writer died after one of three streams, and all of it once the step is completed', async () => {
    const dying = await writer();
    const readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'));
    const readModels = new ReadModels(readStore, [markerProjection]);
    const runner = new ProjectionRunner({
      eventStore: dying.inner,
      readStore,
      readModels,
      projections: [markerProjection],
      logger: silentLogger(),
      dropGraceMs: 0,
      housekeepingMs: 20,
    });
    closers.push(
      async () => readStore.close(),
      async () => runner.stop(),
    );
    await runner.start();

    const before = uniqueName('before-');
    await dying.store.appendToStream(before, [newEvent('Decided', { index: -1 })], 'no_stream');
    const streams = [uniqueName('a-'), uniqueName('b-'), uniqueName('c-')];
    const appends: StreamAppend[] = streams.map((streamName, index) => ({
      streamName,
      events: [newEvent('Decided', { index })],
      expectedRevision: 'no_stream',
    }));
    dying.inner.crashAfter(1, { counts: (name) => streams.includes(name), onCrash: () => dying.redis.disconnect() });
    await expectRejection(dying.store.appendToStreams(appends), SimulatedCrash);

    const shown = async () =>
      (await readModels.collection<Marker>(markers).find({}).toArray()).map((marker) => marker._id).sort();
    await eventually(async () => (await shown()).length > 0, 5000, 'the first write projected');
    expect(await shown()).to.deep.equal([before]);
    // The first stream's event is stored, but the lane holds it while the step is half written.
    const stored = await dying.inner.readStream(streams[0]!);
    expect(stored).to.have.length(1);
    await eventually(
      () => runner.status()[0]!.waitingFrom === stored[0]!.position,
      5000,
      'the lane holding the half-written step',
    );
    expect(await shown()).to.deep.equal([before]);

    await writer(); // a restarted writer completes the step
    await eventually(async () => (await shown()).length === 4, 5000, 'the completed step projected');
    expect(await shown()).to.deep.equal([before, ...streams].sort());
  });
});
