import { expect } from 'chai';
import { join } from 'node:path';
import type { RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { documentProjection, type Projected, type Projection } from '../../projections/projection.ts';
import { ProjectionContext } from '../../projections/projectionContext.ts';
import { ProjectionRunner } from '../../projections/projectionRunner.ts';
import { physicalCollection } from '../../projections/projectionState.ts';
import { ReadModels } from '../../projections/readModels.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';

type Counter = Projected<{ count: number; names: string[] }>;

const counters: CollectionSpec = { name: 'counters', indexes: [{ fields: ['count'] }] };

/** Counts `Ticked` events per stream; `Reset` deletes the counter. Not idempotent by itself. */
const counterProjection = (version = 1): Projection =>
  documentProjection<Counter>({
    name: 'counters',
    version,
    collection: counters,
    handles: ['Ticked', 'Reset'],
    documentId: (event) => event.streamName,
    evolve: (document, event) => {
      if (event.type === 'Reset') return null;
      const name = (event.data as { name: string }).name;
      return {
        _id: event.streamName,
        count: (document?.count ?? 0) + version,
        names: [...(document?.names ?? []), name],
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
  const startRunner = async (projections: Projection[], options: { batchSize?: number } = {}) => {
    const readModels = new ReadModels(readStore, projections);
    runner = new ProjectionRunner({ eventStore, readStore, readModels, projections, logger: silentLogger(), attempts: 2, ...options });
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
    let result;
    for (const name of ['a', 'b', 'c', 'd', 'e']) result = await eventStore.appendToStream(stream, [newEvent('Ticked', { name })]);
    expect(await runner!.waitFor(result!.position, 2000)).to.equal(true);
    const counter = await readModels.collection<Counter>(counters).get(stream);
    expect(counter).to.include({ count: 5, _pos: Number(result!.position) });
    expect(counter!.names).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
  });

  it('resumes from its stored checkpoint after a restart without applying anything twice', async () => {
    const stream = uniqueName('counter-');
    await startRunner([counterProjection()]);
    const first = await eventStore.appendToStream(stream, [newEvent('Ticked', { name: 'a' }), newEvent('Ticked', { name: 'b' })]);
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
          await projection.apply(event, context);
        }
        await context.flush();
      });
      return readStore.collection({ name: collectionName, indexes: counters.indexes }).find({}, { sort: { _id: 1 } }).toArray();
    };
    const once = await project(events, uniqueName('once_'));
    const twice = await project(events.flatMap((event) => [event, event]), uniqueName('twice_'));
    expect(twice).to.deep.equal(once);
    expect(once.map((d) => (d as Counter).names)).to.deep.include(['e']);
  });

  it('rebuilds a new version beside the serving one and then switches reads over', async () => {
    const stream = uniqueName('counter-');
    await startRunner([counterProjection(1)]);
    const written = await eventStore.appendToStream(stream, ['a', 'b'].map((name) => newEvent('Ticked', { name })));
    await runner!.waitFor(written.position, 2000);
    await runner!.stop();

    const readModels = await startRunner([counterProjection(10)]);
    expect(await runner!.waitFor(written.position, 2000)).to.equal(true);
    expect((await readModels.collection<Counter>(counters).get(stream))?.count).to.equal(20);
    expect(runner!.status()[0]).to.include({ version: 10, generation: 2, servingGeneration: 2 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await readStore.listCollections()).not.to.include('counters__g1');
  });

  it('sets a failing projection aside and keeps the others running', async () => {
    const failing: Projection = {
      name: 'failing',
      version: 1,
      collections: [{ name: 'failing_docs', indexes: [] }],
      handles: ['Ticked'],
      async apply(event) {
        if ((event.data as { name: string }).name === 'poison') throw new Error('cannot project poison');
      },
    };
    const readModels = await startRunner([counterProjection(), failing]);
    const stream = uniqueName('counter-');
    const written = await eventStore.appendToStream(stream, [newEvent('Ticked', { name: 'poison' })]);
    expect(await runner!.waitFor(written.position, 5000)).to.equal(true);
    expect((await readModels.collection<Counter>(counters).get(stream))?.count).to.equal(1);
    const failed = runner!.status().find((status) => status.name === 'failing');
    expect(failed?.status).to.equal('failed');
    expect(failed?.error).to.match(/cannot project poison/);
  });
});
