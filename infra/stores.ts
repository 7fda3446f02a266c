import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceConfig } from './config.ts';
import type { EventStore } from './eventstore/eventStore.ts';
import { SqliteEventStore } from './eventstore/sqliteEventStore.ts';
import type { ReadStore } from './readstore/readStore.ts';
import { SqliteReadStore } from './readstore/sqlite/sqliteReadStore.ts';

/**
 * Opens the event store and read store the configuration names (SQLite files under DMS_DATA_DIR
 * by default). The EventStoreDB and MongoDB drivers are loaded only when configured: they take
 * about 0.4 s to load, paid by every process and projection thread otherwise.
 */
export const openStores = async (config: ServiceConfig): Promise<{ eventStore: EventStore; readStore: ReadStore }> => {
  if (config.eventStore.kind === 'sqlite' || config.readStore.kind === 'sqlite') mkdirSync(config.dataDir, { recursive: true });
  const eventStore =
    config.eventStore.kind === 'sqlite'
      ? new SqliteEventStore(join(config.dataDir, 'events.sqlite'), { backgroundCheckpoints: true })
      : new (await import('./eventstore/esdbEventStore.ts')).EsdbEventStore(config.eventStore.url);
  const readStore =
    config.readStore.kind === 'sqlite'
      ? new SqliteReadStore(join(config.dataDir, 'readmodels.sqlite'), { backgroundCheckpoints: true })
      : new (await import('./readstore/mongo/mongoReadStore.ts')).MongoReadStore(config.readStore.url);
  return { eventStore, readStore };
};
