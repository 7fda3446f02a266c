import { expect } from 'chai';
import { join } from 'node:path';
import type { Event } from '../../domain/shared/event.ts';
import type { RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import {
  asHandled,
  documentProjection,
  type AnyProjection,
  type Projected,
  type Projection,
} from '../../projections/projection.ts';
import { ProjectionContext } from '../../projections/runtime/projectionContext.ts';
import { newRebuild, ProjectionRunner } from '../../projections/runtime/projectionRunner.ts';
import { physicalCollection, projectionRebuildsCollection } from '../../projections/runtime/projectionState.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { waitUntil } from '../infra/eventStore.contract.ts';
import { eventually } from '../support/eventually.ts';

type Counter = Projected<{ count: number; names: string[] }>;
type Ticked = Event<'Ticked', { name: string }>;
type Reset = Event<'Reset'>;
type Opened = Event<'Opened'>;

const counters: CollectionSpec = { name: 'counters', indexes: [{ fields: ['count'] }] };

/** Counts `Ticked` events per stream; `Reset` deletes the counter. Not idempotent by itself. */
const counterProjection = (version = 1): Projection<Ticked | Reset> =>
  documentProjection<Counter, Ticked | Reset>({
    name: 'counters',
    version,
    collection: counters,
    handles: { Ticked: true, Reset: true },
    documentId: (_event, envelope) => envelope.streamName,
    evolve: (document, event, envelope) => {
      if (event.type === 'Reset') return null;
      return {
        _id: envelope.streamName,
        count: (document?.count ?? 0) + version,
        names: [...(document?.names ?? []), event.data.name],
      };
    },
  });

describe('ProjectionRunner', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let eventStore: SqliteEventStore;
  let readStore: SqliteReadStore;
  let runner: ProjectionRunner | undefined;

  const open = () => {
    eventStore = new SqliteEventStore(join(dir.path, 'events.sqlite'), { pollIntervalMs: 10 });
    readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'));
  };
  const startRunner = async (
    projections: AnyProjection[],
    options: { batchSize?: number; dropGraceMs?: number } = {},
  ) => {
    const readModels = ReadModels.in(readStore, projections);
    runner = new ProjectionRunner({
      eventStore,
      readStore,
      readModels,
      projections,
      logger: silentLogger(),
      attempts: 2,
      dropGraceMs: 0,
      housekeepingMs: 20,
      ...options,
    });
    await runner.start();
    return readModels;
  };
  const closeAll = async () => {
    await runner?.stop();
    runner = undefined;
    await eventStore.close();
    await readStore.close();
  };

  beforeEach(() => {
    dir = makeTempDir();
    open();
  });
  afterEach(async () => {
    await closeAll();
    dir.dispose();
  });

  it('applies events in batches and lets writers wait for their position', async () => {
    const readModels = await startRunner([counterProjection()], { batchSize: 2 });
    const stream = uniqueName('counter-');
    let position = 0n;
    for (const name of ['a', 'b', 'c', 'd', 'e'])
      ({ position } = await eventStore.appendToStream(stream, [newEvent('Ticked', { name })]));
    expect(await runner!.waitFor(position, 2000)).to.equal(true);
    const counter = await readModels.collection<Counter>(counters).get(stream);
    expect(counter).to.include({ count: 5, _pos: Number(position) });
    expect(counter!.names).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
  });

  it('resumes from its stored checkpoint after a restart without applying anything twice', async () => {
    const stream = uniqueName('counter-');
    await startRunner([counterProjection()]);
    const first = await eventStore.appendToStream(stream, [
      newEvent('Ticked', { name: 'a' }),
      newEvent('Ticked', { name: 'b' }),
    ]);
    await runner!.waitFor(first.position, 2000);
    await closeAll();

    open();
    await eventStore.appendToStream(stream, [newEvent('Ticked', { name: 'c' })]);
    const readModels = await startRunner([counterProjection()]);
    const head = await eventStore.headPosition();
    expect(await runner!.waitFor(head, 2000)).to.equal(true);
    expect((await readModels.collection<Counter>(counters).get(stream))?.names).to.deep.equal(['a', 'b', 'c']);
    expect(runner!.status()[0]).to.include({ name: 'counters', checkpoint: head, status: 'running' });
  });

  it('creates documents without reading them, and keeps a stored one when a creation is delivered again', async () => {
    // `Opened` creates the counter blind; `Ticked` counts. Delivered again in a later batch, the
    // creation must not reset what later events made of the document.
    const opening = documentProjection<Counter, Opened | Ticked>({
      name: 'opened',
      version: 1,
      collection: counters,
      handles: { Opened: true, Ticked: true },
      creates: ['Opened'],
      documentId: (_event, envelope) => envelope.streamName,
      evolve: (document, event, envelope) =>
        event.type === 'Opened'
          ? { _id: envelope.streamName, count: 0, names: [] }
          : document
            ? { ...document, count: document.count + 1 }
            : undefined,
    });
    const stream = uniqueName('opened-');
    await eventStore.appendToStream(stream, [newEvent('Opened'), newEvent('Ticked'), newEvent('Ticked')]);
    const events = await eventStore.readAll({ maxCount: 10 });
    const collectionName = uniqueName('opened_');
    const apply = (deliveries: RecordedEvent[]) =>
      readStore.transaction(async (transaction) => {
        const context = new ProjectionContext(transaction, (logical) => ({
          ...physicalCollection(logical, 1),
          name: collectionName,
        }));
        for (const event of deliveries) {
          context.beginEvent(event);
          await opening.apply(asHandled(event), context);
        }
        await context.flush();
      });
    const stored = () => readStore.collection<Counter>({ name: collectionName, indexes: counters.indexes }).get(stream);
    await apply(events);
    expect(await stored()).to.include({ count: 2, _pos: Number(events[2]!.position) });
    await apply(events.slice(0, 2));
    expect(await stored()).to.include({ count: 2, _pos: Number(events[2]!.position) });
  });

  it('converges to the same documents when every event is delivered twice', async () => {
    const streams = [uniqueName('counter-'), uniqueName('counter-')];
    for (const [index, name] of ['a', 'b', 'c', 'd'].entries()) {
      await eventStore.appendToStream(streams[index % 2]!, [newEvent('Ticked', { name })]);
    }
    await eventStore.appendToStream(streams[0]!, [newEvent('Reset')]);
    await eventStore.appendToStream(streams[0]!, [newEvent('Ticked', { name: 'e' })]);
    const events = await eventStore.readAll({ maxCount: 100 });

    const project = async (deliveries: RecordedEvent[], collectionName: string) => {
      const projection = counterProjection();
      const physical = (logical: CollectionSpec) => ({ ...physicalCollection(logical, 1), name: collectionName });
      await readStore.transaction(async (transaction) => {
        const context = new ProjectionContext(transaction, physical);
        for (const event of deliveries) {
          context.beginEvent(event);
          await projection.apply(asHandled(event), context);
        }
        await context.flush();
      });
      return readStore
        .collection({ name: collectionName, indexes: counters.indexes })
        .find({}, { sort: { _id: 1 } })
        .toArray();
    };
    const once = await project(events, uniqueName('once_'));
    const twice = await project(
      events.flatMap((event) => [event, event]),
      uniqueName('twice_'),
    );
    expect(twice).to.deep.equal(once);
    expect(once.map((d) => (d as Counter).names)).to.deep.include(['e']);
  });

  it('rebuilds a new version beside the serving one and then switches reads over', async () => {
    const stream = uniqueName('counter-');
    await startRunner([counterProjection(1)]);
    const written = await eventStore.appendToStream(
      stream,
      ['a', 'b'].map((name) => newEvent('Ticked', { name })),
    );
    await runner!.waitFor(written.position, 2000);
    await runner!.stop();

    const readModels = await startRunner([counterProjection(10)]);
    // Until the new generation has caught up, reads stay on the one version 1 built.
    expect(readModels.servingGeneration('counters')).to.equal(1);
    await runner!.rebuildsFinished();
    expect((await readModels.collection<Counter>(counters).get(stream))?.count).to.equal(20);
    expect(runner!.status()[0]).to.include({ version: 10, servingGeneration: 2, status: 'running' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await readStore.listCollections()).not.to.include('counters__g1');
  });

  it('drops at its next start a replaced generation it stopped before dropping', async () => {
    const stream = uniqueName('counter-');
    await startRunner([counterProjection(1)]);
    const written = await eventStore.appendToStream(stream, [newEvent('Ticked', { name: 'a' })]);
    await runner!.waitFor(written.position, 2000);
    await runner!.stop();
    // The rebuild switches reads, then the process stops within the grace period.
    await startRunner([counterProjection(2)], { dropGraceMs: 60_000 });
    await runner!.rebuildsFinished();
    await runner!.stop();
    expect(await readStore.listCollections()).to.include.members(['counters__g1', 'counters__g2']);

    const readModels = await startRunner([counterProjection(2)]);
    await eventually(async () => !(await readStore.listCollections()).includes('counters__g1'), 5000, 'g1 dropped');
    expect(await readStore.listCollections()).to.include('counters__g2');
    expect((await readModels.collection<Counter>(counters).get(stream))?.count).to.equal(2);
  });

  it('rebuilds on request in its own lane while the serving generation stays current', async () => {
    const stream = uniqueName('counter-');
    const readModels = await startRunner([counterProjection()], { batchSize: 5 });
    for (let index = 0; index < 20; index += 1)
      await eventStore.appendToStream(stream, [newEvent('Ticked', { name: `n${index}` })]);
    await runner!.waitFor(await eventStore.headPosition(), 2000);

    // Hold the rebuild's reading of the log (the live lane subscribed long ago) until released.
    let releaseRebuild!: () => void;
    const rebuildHeld = new Promise<void>((resolve) => (releaseRebuild = resolve));
    const subscribe = eventStore.subscribeToAll.bind(eventStore);
    eventStore.subscribeToAll = (options) => {
      const subscription = subscribe(options);
      if ((options?.after ?? 0n) !== 0n) return subscription;
      return {
        async *[Symbol.asyncIterator]() {
          await rebuildHeld;
          yield* subscription;
        },
        close: () => subscription.close(),
      };
    };
    await readStore
      .collection(projectionRebuildsCollection)
      .insertOne(newRebuild(counterProjection(), 2, new Date().toISOString()));
    await waitUntil(() => runner!.status()[0]!.rebuild !== undefined);
    const during = await eventStore.appendToStream(stream, [newEvent('Ticked', { name: 'during' })]);
    expect(await runner!.waitFor(during.position, 2000)).to.equal(true);
    expect(readModels.servingGeneration('counters')).to.equal(1);
    expect((await readModels.collection<Counter>(counters).get(stream))?.count).to.equal(21);

    releaseRebuild();
    await runner!.rebuildsFinished();
    expect(readModels.servingGeneration('counters')).to.equal(2);
    const rebuilt = await readModels.collection<Counter>(counters).get(stream);
    expect(rebuilt?.count).to.equal(21);
    expect(rebuilt?.names.at(-1)).to.equal('during');
    const after = await eventStore.appendToStream(stream, [newEvent('Ticked', { name: 'after' })]);
    await runner!.waitFor(after.position, 2000);
    expect((await readModels.collection<Counter>(counters).get(stream))?.count).to.equal(22);
  });

  it('sets a failing projection aside and keeps the others running', async () => {
    const failing: Projection<Ticked> = {
      name: 'failing',
      version: 1,
      collections: [{ name: 'failing_docs', indexes: [] }],
      handles: { Ticked: true },
      async apply(event) {
        if (event.data.name === 'poison') throw new Error('cannot project poison');
      },
    };
    const readModels = await startRunner([counterProjection(), failing]);
    const stream = uniqueName('counter-');
    const written = await eventStore.appendToStream(stream, [newEvent('Ticked', { name: 'poison' })]);
    expect(await runner!.waitFor(written.position, 5000)).to.equal(true);
    expect((await readModels.collection<Counter>(counters).get(stream))?.count).to.equal(1);
    const failed = runner!.status().find((status) => status.name === 'failing');
    expect(failed?.status).to.equal('failed');
    expect(failed?.error).to.match(/^Projection failing failed on Ticked at \d+: cannot project poison/);
  });
});
