import { join } from 'node:path';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runtime/projectionRunner.ts';
import { projectionStateCollection } from '../../projections/runtime/projectionState.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { newEvent } from './events.ts';
import { makeTempDir } from './tempDir.ts';

/** An event on its stream; `schemaVersion` for one stored in an older shape (default: its type's current one). */
export type StreamedEvent = Readonly<{ stream: string; type: string; data: object; schemaVersion?: number }>;
export type ReadCollection = <T>(spec: Parameters<ReadModels['collection']>[0]) => Promise<T[]>;

/**
 * given(events).then(read models), for projection tests: the events are appended to their
 * streams of a real SQLite event store and every projection runs over them through the real
 * runner, in batches of two so that one stream's events span several. With `twice`, the
 * checkpoints are forgotten and every event is delivered again: documents must not change.
 * `read` gets what the test looks at before the stores are closed and removed.
 */
export const projectEvents = async <R>(
  prefix: string,
  events: readonly StreamedEvent[],
  read: (collection: ReadCollection) => Promise<R>,
  options: { twice?: boolean } = {},
): Promise<R> => {
  const dir = makeTempDir(prefix);
  const eventStore = new SqliteEventStore(join(dir.path, 'events.sqlite'), { pollIntervalMs: 10 });
  const readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'));
  try {
    for (const event of events)
      await eventStore.appendToStream(event.stream, [newEvent(event.type, event.data, event.schemaVersion)]);
    const readModels = ReadModels.in(readStore);
    const run = async () => {
      const runner = new ProjectionRunner({
        eventStore,
        readStore,
        readModels,
        projections: allProjections,
        logger: silentLogger(),
        batchSize: 2,
      });
      await runner.start();
      await runner.waitFor(await eventStore.headPosition(), 5000);
      await runner.stop();
    };
    await run();
    if (options.twice) {
      await readStore.collection(projectionStateCollection).deleteMany({});
      await run();
    }
    return await read(
      async <T>(spec: Parameters<ReadModels['collection']>[0]) =>
        (await readModels
          .collection(spec)
          .find({}, { sort: { _id: 1 } })
          .toArray()) as T[],
    );
  } finally {
    await eventStore.close();
    await readStore.close();
    dir.dispose();
  }
};
