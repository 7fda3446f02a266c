import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigurationInvalidError, REDIS_URL_REQUIRED, type ServiceConfig } from './serviceConfig.ts';
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
 * SQLite appends several streams in one transaction, and so does KurrentDB 25.1 or later. Older
 * servers (EventStoreDB 20.x to 24.x) cannot, so their store is wrapped in SteppedEventStore, which
 * makes multi-stream appends whole through leases in the deployment's Redis (REDIS_URL, required
 * with EventStoreDB) and completes steps earlier writers left unfinished before this returns
 * (infra/eventstore/esdbEventStoreOpening.ts).
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
      : await openEsdb(config.eventStore.url, config, options.logger);
  const eventStore = options.appendsVia ? new ForwardingEventStore(log, options.appendsVia) : log;
  const readStore =
    config.readStore.kind === 'sqlite'
      ? new SqliteReadStore(join(config.dataDir, 'readmodels.sqlite'), { backgroundCheckpoints: checkpoints })
      : new (await import('./readstore/mongo/mongoReadStore.ts')).MongoReadStore(config.readStore.url);
  return { eventStore, readStore };
};

const openEsdb = async (url: string, config: ServiceConfig, logger: Logger | undefined): Promise<EventStore> => {
  // loadServiceConfig refuses this already; a hand-made configuration gets the same message.
  if (!config.redisUrl) throw new ConfigurationInvalidError([REDIS_URL_REQUIRED]);
  const { openEsdbEventStore } = await import('./eventstore/esdbEventStoreOpening.ts');
  return openEsdbEventStore(url, {
    steps: {
      redis: config.redisUrl,
      keyPrefix: config.queuePrefix,
      ...(logger ? { logger: logger.child({ component: 'steps' }) } : {}),
    },
  });
};
