import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceConfig } from './serviceConfig.ts';
import type { EventStore } from './eventstore/eventStore.ts';
import { ForwardingEventStore, type AppendChannel } from './eventstore/forwardedAppends.ts';
import type { Logger } from './logger.ts';
import type { PositionSignal } from './positionSignal.ts';
import { SqliteEventStore } from './eventstore/sqliteEventStore.ts';
import type { ReadStore } from './readstore/readStore.ts';
import { SqliteReadStore } from './readstore/sqlite/sqliteReadStore.ts';

/**
 * Opens the event store and read store the configuration names (SQLite files under DMS_DATA_DIR
 * by default). The EventStoreDB and MongoDB drivers are loaded only when configured: they take
 * about 0.4 s to load, paid by every process and projection thread otherwise.
 *
 * SQLite appends several streams in one transaction, and KurrentDB 25.1 or later in one atomic
 * `multiStreamAppend`; an older server is refused (infra/eventstore/esdbEventStoreOpening.ts).
 */
export const openStores = async (
  config: ServiceConfig,
  options: Readonly<{
    logger?: Logger;
    /**
     * "Appended up to P" between processes, for a SQLite event store shared by several processes
     * (see SqliteEventStore's `crossProcess`). EventStoreDB's subscriptions are pushed by the
     * server already, so it needs none.
     */
    appended?: PositionSignal;
    /**
     * An API worker of `dms serve` (bin/cluster/): the log is read here and appended by the
     * process at the other end of the channel, which also checkpoints the SQLite files.
     */
    appendsVia?: AppendChannel;
    /**
     * Commit the SQLite log on a thread of its own (SqliteEventStore's `writerThread`): for the
     * process serving the API or a cluster's primary (DMS_LOG_WRITER_THREAD), not for tools.
     */
    writerThread?: boolean;
  }> = {},
): Promise<{ eventStore: EventStore; readStore: ReadStore }> => {
  if (config.eventStore.kind === 'sqlite' || config.readStore.kind === 'sqlite')
    mkdirSync(config.dataDir, { recursive: true });
  const checkpoints = options.appendsVia === undefined;
  const log = await openEventStore(config, {
    ...options,
    backgroundCheckpoints: checkpoints,
    // The process that writes the log commits on a thread: its fsync does not stop the API.
    writerThread: checkpoints && options.writerThread === true,
  });
  const eventStore = options.appendsVia ? new ForwardingEventStore(log, options.appendsVia) : log;
  const readStore = await openReadStoreAt(readStorePlace(config), { backgroundCheckpoints: checkpoints });
  return { eventStore, readStore };
};

/**
 * The event store alone (SQLite's `events.sqlite` under DMS_DATA_DIR, or the KurrentDB server).
 * `backgroundCheckpoints` and `writerThread` are for the process that writes a SQLite log
 * (default off: a projection thread only reads it).
 */
export const openEventStore = async (
  config: ServiceConfig,
  options: Readonly<{
    logger?: Logger;
    appended?: PositionSignal;
    backgroundCheckpoints?: boolean;
    writerThread?: boolean;
  }> = {},
): Promise<EventStore> => {
  if (config.eventStore.kind !== 'sqlite')
    return (await import('./eventstore/esdbEventStoreOpening.ts')).openEsdbEventStore(
      config.eventStore.url,
      options.logger?.child({ component: 'eventstore' }),
    );
  mkdirSync(config.dataDir, { recursive: true });
  return new SqliteEventStore(join(config.dataDir, 'events.sqlite'), {
    backgroundCheckpoints: options.backgroundCheckpoints ?? false,
    writerThread: options.writerThread ?? false,
    ...(options.appended ? { crossProcess: options.appended } : {}),
  });
};

/** Where a read store lives: a SQLite file, or a MongoDB database (the one its URL names). */
export type ReadStorePlace = Readonly<{ kind: 'sqlite'; path: string } | { kind: 'mongodb'; url: string }>;

/**
 * The read store of a part of the read models: without `part`, the shared one
 * (`readmodels.sqlite`, or DMS_READ_STORE's database), which holds sessions, heartbeats and the
 * projections of a single-group layout; with one (a projection group's name), that part's own
 * (`readmodels-<part>.sqlite`, or its DMS_READ_STORE_<PART> database, else the shared one's).
 */
export const readStorePlace = (config: ServiceConfig, part?: string): ReadStorePlace => {
  if (config.readStore.kind === 'sqlite')
    return {
      kind: 'sqlite',
      path: join(config.dataDir, part === undefined ? 'readmodels.sqlite' : `readmodels-${part}.sqlite`),
    };
  return {
    kind: 'mongodb',
    url: (part === undefined ? undefined : config.readStore.groupUrls[part]) ?? config.readStore.url,
  };
};

/** Two places are one store: the same file, or the same MongoDB URL. */
export const samePlace = (a: ReadStorePlace, b: ReadStorePlace): boolean =>
  a.kind === 'sqlite' ? b.kind === 'sqlite' && a.path === b.path : b.kind === 'mongodb' && a.url === b.url;

/**
 * Opens the read store at a place. `backgroundCheckpoints` (SQLite): checkpoint its WAL on a
 * thread, for the process that writes it (SqliteReadStore).
 */
export const openReadStoreAt = async (
  place: ReadStorePlace,
  options: Readonly<{ backgroundCheckpoints?: boolean }> = {},
): Promise<ReadStore> =>
  place.kind === 'sqlite'
    ? new SqliteReadStore(place.path, { backgroundCheckpoints: options.backgroundCheckpoints ?? false })
    : new (await import('./readstore/mongo/mongoReadStore.ts')).MongoReadStore(place.url);

/**
 * The event log as the command-line tools that write into a log no service is writing open it
 * (`dms events import` into an empty store, `dms events finish-steps`): on EventStoreDB or
 * KurrentDB without asking the server what it offers, appending stream by stream, so that they
 * work on a server of any version, before or after its upgrade.
 */
export const openEventLogForTools = async (config: ServiceConfig): Promise<EventStore> => {
  if (config.eventStore.kind === 'sqlite') {
    mkdirSync(config.dataDir, { recursive: true });
    return new SqliteEventStore(join(config.dataDir, 'events.sqlite'));
  }
  const { EsdbEventStore } = await import('./eventstore/esdbEventStore.ts');
  return new EsdbEventStore(config.eventStore.url);
};
