import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceConfig } from './config.ts';
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
  const log =
    config.eventStore.kind === 'sqlite'
      ? new SqliteEventStore(join(config.dataDir, 'events.sqlite'), {
          backgroundCheckpoints: checkpoints,
          // The process that writes the log commits on a thread: its fsync does not stop the API.
          writerThread: checkpoints && options.writerThread === true,
          ...(options.appended ? { crossProcess: options.appended } : {}),
        })
      : await (
          await import('./eventstore/esdbEventStoreOpening.ts')
        ).openEsdbEventStore(config.eventStore.url, options.logger?.child({ component: 'eventstore' }));
  const eventStore = options.appendsVia ? new ForwardingEventStore(log, options.appendsVia) : log;
  const readStore =
    config.readStore.kind === 'sqlite'
      ? new SqliteReadStore(join(config.dataDir, 'readmodels.sqlite'), { backgroundCheckpoints: checkpoints })
      : new (await import('./readstore/mongo/mongoReadStore.ts')).MongoReadStore(config.readStore.url);
  return { eventStore, readStore };
};

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
