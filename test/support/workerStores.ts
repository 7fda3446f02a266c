import { join } from 'node:path';
import { createCommandContext } from '../../commands/commandContext.ts';
import { systemClock } from '../../infra/clock.ts';
import { SqliteEventStore, type SqliteEventStoreOptions } from '../../infra/eventstore/sqliteEventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { createTransferTools } from '../../infra/transfer/transferTools.ts';
import { readModelPorts } from '../../projections/readModelPorts.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { createWorkerContext, type WorkerContext } from '../../workers/workerContext.ts';
import { makeTempDir } from './tempDir.ts';

/** What a worker test runs on: a real SQLite event store and read store in a folder of its own. */
export type WorkerStores = Readonly<{ dir: string; eventStore: SqliteEventStore; readStore: SqliteReadStore }>;

/**
 * Fresh worker stores for every test of the `describe` that calls this (mocha hooks open them
 * before each test and close them after): read their fields inside tests and hooks only.
 */
export const workerStoresEachTest = (options: SqliteEventStoreOptions = {}): WorkerStores => {
  let open:
    { dir: ReturnType<typeof makeTempDir>; eventStore: SqliteEventStore; readStore: SqliteReadStore } | undefined;
  const current = () => {
    if (!open) throw new Error('worker stores are open only while a test runs');
    return open;
  };
  beforeEach(() => {
    const dir = makeTempDir();
    open = {
      dir,
      eventStore: new SqliteEventStore(join(dir.path, 'events.sqlite'), options),
      readStore: new SqliteReadStore(join(dir.path, 'read.sqlite')),
    };
  });
  afterEach(async () => {
    const { dir, eventStore, readStore } = current();
    open = undefined;
    await eventStore.close();
    await readStore.close();
    dir.dispose();
  });
  return {
    get dir() {
      return current().dir.path;
    },
    get eventStore() {
      return current().eventStore;
    },
    get readStore() {
      return current().readStore;
    },
  };
};

/**
 * A worker context over the stores, as a worker process makes it but with nothing to wait for, a
 * silent log, the system clock and transfer tools that write below the stores' folder.
 */
export const workerContextOver = (
  stores: WorkerStores,
  readModels: ReadModels = ReadModels.in(stores.readStore),
): WorkerContext =>
  createWorkerContext(
    createCommandContext({ eventStore: stores.eventStore, ...readModelPorts(readModels) }),
    readModels,
    { waitFor: async () => true },
    silentLogger(),
    createTransferTools({ dataDir: stores.dir, clock: systemClock }),
    { clock: systemClock },
  );
