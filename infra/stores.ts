import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceConfig } from './config.ts';
import { EsdbEventStore } from './eventstore/esdbEventStore.ts';
import type { EventStore } from './eventstore/eventStore.ts';
import { SqliteEventStore } from './eventstore/sqliteEventStore.ts';
import { MongoReadStore } from './readstore/mongo/mongoReadStore.ts';
import type { ReadStore } from './readstore/readStore.ts';
import { SqliteReadStore } from './readstore/sqlite/sqliteReadStore.ts';

/** Opens the event store and read store the configuration names (SQLite files under DMS_DATA_DIR by default). */
export const openStores = (config: ServiceConfig): { eventStore: EventStore; readStore: ReadStore } => {
  if (config.eventStore.kind === 'sqlite' || config.readStore.kind === 'sqlite') mkdirSync(config.dataDir, { recursive: true });
  const eventStore =
    config.eventStore.kind === 'sqlite'
      ? new SqliteEventStore(join(config.dataDir, 'events.sqlite'), { backgroundCheckpoints: true })
      : new EsdbEventStore(config.eventStore.url);
  const readStore =
    config.readStore.kind === 'sqlite'
      ? new SqliteReadStore(join(config.dataDir, 'readmodels.sqlite'), { backgroundCheckpoints: true })
      : new MongoReadStore(config.readStore.url);
  return { eventStore, readStore };
};
