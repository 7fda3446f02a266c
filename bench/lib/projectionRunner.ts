import { join } from 'node:path';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { allProjections } from '../../projections/index.ts';
import { ProjectionRunner } from '../../projections/runtime/projectionRunner.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';

/**
 * Every projection of a stopped service's data directory, run in this process (as `dms projector`
 * would) while `work` measures it; the runner and both stores are closed afterwards.
 */
export const withProjectionRunner = async <T>(
  dataDir: string,
  work: (runner: ProjectionRunner, stores: { eventStore: SqliteEventStore; readStore: SqliteReadStore }) => Promise<T>,
): Promise<T> => {
  const eventStore = new SqliteEventStore(join(dataDir, 'events.sqlite'), { backgroundCheckpoints: true });
  const readStore = new SqliteReadStore(join(dataDir, 'readmodels.sqlite'), { backgroundCheckpoints: true });
  const runner = new ProjectionRunner({
    eventStore,
    readStore,
    readModels: ReadModels.in(readStore),
    projections: allProjections,
    logger: silentLogger(),
  });
  try {
    return await work(runner, { eventStore, readStore });
  } finally {
    await runner.stop();
    await eventStore.close();
    await readStore.close();
  }
};
