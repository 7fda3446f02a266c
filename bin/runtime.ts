import { startTracing, stopTracing } from '../infra/tracing.ts';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { createApp } from '../api/app.ts';
import { createHttpServer } from '../api/httpServer.ts';
import { MeteredEventStore } from '../api/metrics/meteredEventStore.ts';
import { startMetricsServer, type MetricsServer } from '../api/metrics/metricsServer.ts';
import { ServiceMetrics } from '../api/metrics/serviceMetrics.ts';
import { Oidc } from '../api/auth/oidc/oidc.ts';
import { SessionAccess } from '../api/auth/sessionAccess.ts';
import { TokenStore } from '../api/auth/tokenStore.ts';
import type { Services } from '../api/services.ts';
import { ensureRootAccount } from '../commands/bootstrap.ts';
import { createCommandContext } from '../commands/commandContext.ts';
import { dateOf, systemClock, type Clock } from '../infra/clock.ts';
import type { ServiceConfig } from '../infra/config.ts';
import type { Upcasters } from '../domain/shared/upcasting.ts';
import type { EventStore } from '../infra/eventstore/eventStore.ts';
import { SqliteEventStore } from '../infra/eventstore/sqliteEventStore.ts';
import type { Logger } from '../infra/logger.ts';
import type { TransferTools } from '../infra/transfer/transferTools.ts';
import type { BrokerConnections } from '../infra/messaging/brokerConnections.ts';
import type { Reactor } from '../workers/reactor.ts';
import type { Role } from '../workers/role.ts';
import type { WorkerHost } from '../workers/workerHost.ts';
import { packageVersion } from '../infra/moduleFiles.ts';
import { StartupPhases } from '../infra/startupPhases.ts';
import { startPrivateRedisServer } from '../infra/queue/redisServer.ts';
import type { RedisPositionSignals, PositionSignalName } from '../infra/queue/redisPositionSignals.ts';
import type { ReadStore } from '../infra/readstore/readStore.ts';
import { openStores } from '../infra/stores.ts';
import { CheckpointWatcher } from '../projections/runtime/checkpointWatcher.ts';
import { allProjections } from '../projections/index.ts';
import { ProjectionRunner, type ProjectionProgress } from '../projections/runtime/projectionRunner.ts';
import { ProjectorThread } from '../projections/runtime/projectorThread.ts';
import { ProgressFeed, type RelayedProgress } from '../projections/runtime/progressRelay.ts';
import type { AppendChannel } from '../infra/eventstore/forwardedAppends.ts';
import { projectionReports } from '../projections/runtime/projectionStatus.ts';
import { ReadModels } from '../projections/runtime/readModels.ts';
import { readModelPorts } from '../projections/readModelPorts.ts';
import { findRedisUrl, forgetRedisUrl, rememberRedisUrl } from '../infra/queue/redisUrlFile.ts';
import { lockDataDir, type DataDirLock, type LockName } from '../infra/dataDirLock.ts';
import { geoLocator } from '../infra/geoLocator.ts';
import { RseAccounts } from '../infra/security/rseAccounts.ts';
import { UrlSigner } from '../infra/storage/urlSigner.ts';
import { EnvironmentError } from '../infra/environmentError.ts';

/**
 * Which parts run in this process: `dms serve` runs all three, the scaled-out commands one each.
 * `daemonRoles` narrows the workers to some daemon roles (default: all of them).
 */
export type Roles = Readonly<{ api: boolean; projector: boolean; workers: boolean; daemonRoles?: readonly string[] }>;

/**
 * This process's part in a `dms serve` of several API workers (bin/cluster/), absent when it
 * runs alone. The primary writes the event log, runs the projections and daemons, and serves no
 * HTTP itself; each worker serves the API, reads the stores through its own connections, sends
 * its appends to the primary and hears the projections' progress from it.
 */
export type ClusterPart =
  | Readonly<{ kind: 'primary' }>
  | Readonly<{
      kind: 'worker';
      appends: AppendChannel;
      progress: RelayedProgress;
      /** The metrics of every process of the cluster, summed. */
      gatherMetrics: () => Promise<string>;
    }>;

export type Runtime = Readonly<{
  /** Base URL of the HTTP API when this process serves it. */
  url: string | undefined;
  /** Base URL of the metrics port (DMS_METRICS_PORT) when this process serves one. */
  metricsUrl: string | undefined;
  services: Services;
  eventStore: EventStore;
  readStore: ReadStore;
  runner: ProjectionRunner | undefined;
  /** The Redis the daemons use (REDIS_URL, or the private one once started); undefined before. */
  readonly redisUrl: string | undefined;
  /**
   * Settles once the daemons run (at once when this process runs none). They start after the API
   * listens, since nothing the API answers waits for them: the reactor takes up the events from
   * its checkpoint, whenever it starts. A failure is logged, and rejects this.
   */
  daemonsReady: Promise<void>;
  /** How long each phase of this process's start took (StartupPhases). */
  phases: StartupPhases;
  /** In a cluster primary: where the projections stand and each step after, for the workers. */
  progressFeed: ProgressFeed | undefined;
  /** Records the API's URL beside the data directory's locks (a cluster primary learns it from its workers). */
  announce(url: string): void;
  stop(): Promise<void>;
}>;

export type RuntimeOverrides = Readonly<{
  /**
   * Upcasters other than the domain's (tests of schema evolution). They reach the commands, the
   * audit and projections run here; a projection thread always runs the domain's, so turn it off.
   */
  upcasters?: Upcasters;
  cluster?: ClusterPart;
  /**
   * The daemons start once this settles (a cluster's primary: once its API workers listen), so
   * that the start of what answers requests does not share the cores with theirs. Rejected: they
   * do not start.
   */
  daemonsAfter?: Promise<unknown>;
  /**
   * What the API and the workers decide by time (infra/clock.ts); default the system's. Tests pass
   * one they move. The projections decide nothing by time and keep the system's.
   */
  clock?: Clock;
}>;

/** How long in-flight requests may take to finish after a stop request before they are cut. */
const DRAIN_MS = 10_000;

/** The port is taken by another program: said plainly, without a stack trace (bin/dms.ts). */
export class PortInUseError extends EnvironmentError {
  constructor(host: string, port: number) {
    super(`${host}:${port} is already in use by another program. Stop it, or start dms with another PORT.`);
    this.name = 'PortInUseError';
  }
}

/**
 * Takes this process's locks on the data directory (infra/dataDirLock.ts), then opens the stores
 * and starts its roles. Order matters: projections catch up before the API listens, and the API
 * listens before the daemons start (Runtime.daemonsReady says when they run); on stop the
 * API stops accepting first and finishes what it has, then the workers, projections, stores and
 * the private redis-server are closed, in that order, and the locks let go last. A start that
 * fails half-way stops what it had started and lets the locks go.
 */
export const startRuntime = async (
  config: ServiceConfig,
  roles: Roles,
  logger: Logger,
  overrides: RuntimeOverrides = {},
): Promise<Runtime> => {
  const phases = new StartupPhases();
  // Before anything is opened or started: a second process on the same data directory stops here.
  const locks = takeDataDirLocks(config, roles, overrides.cluster);
  const undo: (() => Promise<void> | void)[] = [];
  try {
    return await startRoles(config, roles, logger, overrides, locks, undo, phases);
  } catch (error) {
    for (const step of undo.reverse()) {
      try {
        await step();
      } catch (stopError) {
        logger.warn({ err: stopError }, 'could not stop a part of a failed start');
      }
    }
    for (const lock of locks) lock.release();
    throw error;
  }
};

/**
 * The locks the roles need: the projector's where the stores are the data directory's SQLite
 * files, the private Redis's where this process would start one. `dms api` takes none.
 */
const takeDataDirLocks = (config: ServiceConfig, roles: Roles, cluster: ClusterPart | undefined): DataDirLock[] => {
  const command =
    (roles.api || cluster?.kind === 'primary') && roles.projector
      ? 'dms serve'
      : roles.projector
        ? 'dms projector'
        : roles.workers
          ? 'dms worker'
          : 'dms api';
  const names: LockName[] = [];
  if (roles.projector && (config.eventStore.kind === 'sqlite' || config.readStore.kind === 'sqlite'))
    names.push('projector');
  if (roles.workers && !config.redisUrl) names.push('redis');
  const locks: DataDirLock[] = [];
  try {
    for (const name of names) locks.push(lockDataDir(config.dataDir, name, command));
  } catch (error) {
    for (const lock of locks) lock.release();
    throw error;
  }
  return locks;
};

/** What a process runs, for its spans' resource (`dms.component`). */
const processKind = (roles: Roles, primary: boolean): string =>
  (roles.api || primary) && roles.projector
    ? 'serve'
    : roles.projector
      ? 'projector'
      : roles.workers
        ? 'worker'
        : 'api';

const startRoles = async (
  config: ServiceConfig,
  roles: Roles,
  logger: Logger,
  overrides: RuntimeOverrides,
  locks: readonly DataDirLock[],
  /** What to stop, should the start fail later on. */
  undo: (() => Promise<void> | void)[],
  phases: StartupPhases,
): Promise<Runtime> => {
  const cluster = overrides.cluster;
  const clock = overrides.clock ?? systemClock;
  const worker = cluster?.kind === 'worker' ? cluster : undefined;
  const primary = cluster?.kind === 'primary';
  // Spans are exported only where OTEL_EXPORTER_OTLP_ENDPOINT asks; otherwise this loads nothing.
  await startTracing(worker ? 'api-worker' : processKind(roles, primary));
  undo.push(() => stopTracing());
  const signals = cluster ? undefined : await openPositionSignals(config, roles, logger);
  undo.push(() => signals?.close());
  const { eventStore, readStore } = await openStores(config, {
    logger,
    ...(signals && config.eventStore.kind === 'sqlite' ? { appended: signals.signal('appended') } : {}),
    ...(worker && config.eventStore.kind === 'sqlite' ? { appendsVia: worker.appends } : {}),
    // Where requests wait on the log's commits: its fsync off the event loop that serves them.
    writerThread: config.logWriterThread && (roles.api || primary),
  });
  undo.push(
    () => eventStore.close(),
    () => readStore.close(),
  );
  const readModels = new ReadModels(readStore, allProjections);
  await readModels.refresh();
  phases.mark('stores');
  const upcasters = overrides.upcasters ? { upcasters: overrides.upcasters } : {};
  const metrics = new ServiceMetrics((what, error) => logger.warn({ err: error, what }, 'could not read a metric'));
  // Commands append through the metered store; projections and the reactor read the store itself.
  const commands = createCommandContext({
    eventStore: new MeteredEventStore(eventStore, metrics),
    ...readModelPorts(readModels),
    ...upcasters,
  });

  // Root is made (or found) on the streams while the projections start: neither waits for the other.
  const rootCreation =
    roles.api || primary
      ? ensureRootAccount(
          commands,
          { username: config.rootUsername, password: config.rootPassword, email: config.rootEmail },
          dateOf(clock),
        )
      : undefined;
  // Awaited below; a start failing before then must not leave its failure unheard.
  rootCreation?.catch(() => undefined);

  let runner: ProjectionRunner | undefined;
  let thread: ProjectorThread | undefined;
  let watcher: CheckpointWatcher | undefined;
  let progress: ProjectionProgress;
  const progressFeed = primary ? new ProgressFeed() : undefined;
  if (worker) {
    // The primary relays the projections' progress; generation switches come with it.
    progress = worker.progress;
    worker.progress.follow(readModels);
    undo.push(() => worker.progress.close());
  } else if (roles.projector && (roles.api || primary) && config.projectionThread) {
    // Answering requests (or, in a cluster primary, appending) and projecting take two cores
    // instead of turns on one.
    thread = await ProjectorThread.start(config, readModels, logger);
    const started = thread;
    undo.push(() => started.stop());
    if (progressFeed) {
      started.onReport((report) => progressFeed.report(report));
      progressFeed.report({
        type: 'ready',
        position: started.appliedPosition(),
        generations: servingGenerations(readModels),
      });
    }
    logger.info({ projections: allProjections.length, thread: true }, 'projections running');
    progress = thread;
  } else if (roles.projector) {
    runner = new ProjectionRunner({
      eventStore,
      readStore,
      readModels,
      projections: allProjections,
      logger: logger.child({ role: 'projector' }),
      ...upcasters,
      // Processes waiting for the projections elsewhere hear of each committed batch at once.
      onProgress: (position: bigint) => {
        signals?.signal('applied').publish(position);
        progressFeed?.report({ type: 'progress', position });
      },
      ...(progressFeed
        ? {
            onServingGeneration: (name: string, generation: number) =>
              progressFeed.report({ type: 'generation', name, generation }),
          }
        : {}),
    });
    await runner.start();
    signals?.signal('applied').publish(runner.position);
    progressFeed?.report({ type: 'ready', position: runner.position, generations: servingGenerations(readModels) });
    const started = runner;
    undo.push(() => started.stop());
    logger.info({ projections: allProjections.length }, 'projections running');
    progress = runner;
  } else {
    watcher = new CheckpointWatcher(
      readStore,
      allProjections.map((projection) => projection.name),
      signals ? { applied: signals.signal('applied') } : {},
    );
    const outcomes = watcher;
    metrics.watchReadYourWrites(() => outcomes.waitOutcomes());
    progress = watcher;
  }
  phases.mark('projections');
  if (signals) metrics.watchPositionSignals(() => signals.signalCounts());
  // The process that writes a SQLite log (not a cluster's workers, which send their appends).
  if (eventStore instanceof SqliteEventStore) metrics.watchCommits(() => eventStore.commitStats());
  // The lag of the projections this process runs, from their stored checkpoints, when scraped.
  if (roles.projector) metrics.watchProjections(() => projectionReports(eventStore, readStore, allProjections));
  // Without projections here, follow the projector when a rebuild switches reads to a new generation.
  const stopRefreshing =
    roles.projector || worker
      ? () => undefined
      : readModels.refreshEvery(1000, (error) =>
          logger.warn({ err: error }, 'could not refresh the serving generations'),
        );
  undo.push(stopRefreshing);

  const daemons: Daemons = {};
  const sessions = new SessionAccess(readModels, progress);
  const tokens = new TokenStore(readStore, config.tokenLifetimeSeconds, clock, sessions);
  const services: Services = {
    config,
    logger,
    clock,
    commands,
    readModels,
    progress,
    tokens,
    oidc: new Oidc(config.oidcProviders, { readStore, readModels, commands, tokens, sessions, logger, clock }),
    metrics,
    urlSigner: new UrlSigner(config.rseAccounts ? new RseAccounts(config.rseAccounts, logger) : undefined),
    geoLocator: geoLocator(config.geoipDatabase, logger),
    // Asked when an admin looks: this process's private Redis once started, else REDIS_URL, else
    // the private Redis of the `dms serve` sharing the data directory.
    daemons: async () => {
      const url = config.redisUrl ?? daemons.redis?.url ?? findRedisUrl(config.redisUrl, config.dataDir);
      if (!url) return undefined;
      const [{ daemonStatus }, { allRoles }] = await Promise.all([
        import('../workers/daemonStatus.ts'),
        import('../workers/roles.ts'),
      ]);
      return daemonStatus(url, config.queuePrefix, readModels, allRoles);
    },
  };
  if (worker) metrics.gatherWith(worker.gatherMetrics);

  // A cluster primary makes root before its workers start; they then find it.
  if (rootCreation) {
    const created = await rootCreation;
    if (created === 'created') {
      logger.info({ username: config.rootUsername }, 'created the root account and its userpass identity');
      if (config.rootPasswordIsDefault) {
        logger.warn(
          'the root password is the default one; set DMS_ROOT_PASSWORD before the first start of a real deployment',
        );
      }
    }
    // Read your writes for what start-up wrote (root, or another process's start just before):
    // a token is checked against the read models, so a login answered before they show root
    // would give a token refused at its first use.
    const head = await eventStore.headPosition();
    if (!(await progress.waitFor(head, config.readYourWritesTimeoutMs)))
      logger.warn(
        { position: head.toString() },
        'the read models lag behind the event log (is a projector running?): logins to accounts they do not show yet give tokens that are refused',
      );
    phases.mark('root');
  }

  let server: Server | undefined;
  let url: string | undefined;
  if (roles.api) {
    const app = createApp(services);
    const httpServer = createHttpServer(app, {
      maxBodyBytes: config.maxBodyBytes,
      logger,
      bounds: config.connections,
      trustProxy: config.trustProxy,
    });
    server = await new Promise<Server>((resolve, reject) => {
      httpServer.once('error', (error: NodeJS.ErrnoException) =>
        reject(error.code === 'EADDRINUSE' ? new PortInUseError(config.host, config.port) : error),
      );
      httpServer.listen(config.port, config.host, () => resolve(httpServer));
    });
    const listening = server;
    undo.push(() => closeServer(listening));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('The API server listens on no TCP port');
    url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
    for (const lock of locks) lock.describe(url);
    phases.mark('listening');
    // A cluster's primary says 'API listening' once every worker listens.
    if (worker) logger.info({ url }, 'API worker listening');
    else logListening(logger, config, url, phases);
  }
  const metricsServer: MetricsServer | undefined =
    // A cluster's metrics port is its primary's, which serves every process's metrics summed.
    config.metricsPort === undefined || worker
      ? undefined
      : await startMetricsServer(metrics, { port: config.metricsPort, host: config.host, logger });
  undo.push(() => metricsServer?.stop());

  // The daemons start once the API listens: nothing it answers waits for them.
  const daemonsReady = roles.workers
    ? (async () => {
        try {
          await overrides.daemonsAfter;
        } catch {
          return;
        }
        await startDaemons(
          config,
          roles,
          logger,
          { eventStore, readStore, commands, readModels, progress, metrics, phases, clock },
          daemons,
        );
      })()
    : Promise.resolve();
  daemonsReady.then(
    () => {
      if (roles.workers) phases.mark('daemons');
      logStarted(logger, config, phases);
    },
    (error: unknown) => logger.error({ err: error }, 'the daemons could not start'),
  );

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (server) await closeServer(server);
      await metricsServer?.stop();
      stopRefreshing();
      // A start still under way finishes (or fails, stopping what it had started) first.
      await daemonsReady.catch(() => undefined);
      await daemons.workerHost?.stop();
      await daemons.transferTools?.close();
      await daemons.brokers?.close();
      await daemons.reactor?.stop();
      await runner?.stop();
      await thread?.stop();
      await eventStore.close();
      await readStore.close();
      watcher?.close();
      worker?.progress.close();
      await signals?.close();
      await daemons.redis?.stop();
      await stopTracing().catch((error: unknown) => logger.warn({ err: error }, 'could not send the last spans'));
      for (const lock of locks) lock.release();
    })());

  return {
    url,
    metricsUrl: metricsServer?.url,
    services,
    eventStore,
    readStore,
    runner,
    get redisUrl() {
      return config.redisUrl ?? daemons.redis?.url;
    },
    daemonsReady,
    phases,
    progressFeed,
    announce: (announced) => {
      for (const lock of locks) lock.describe(announced);
    },
    stop,
  };
};

/** What runs the daemons in this process, as far as it has started. */
type Daemons = {
  redis?: { url: string; stop(): Promise<void> };
  reactor?: Reactor;
  transferTools?: TransferTools;
  brokers?: BrokerConnections;
  workerHost?: WorkerHost;
};

/**
 * Starts the private redis-server (without REDIS_URL), the reactor and the worker host, filling
 * `started` as it goes; a failure stops what it had started before it rejects.
 */
const startDaemons = async (
  config: ServiceConfig,
  roles: Roles,
  logger: Logger,
  parts: Readonly<{
    eventStore: EventStore;
    readStore: ReadStore;
    commands: ReturnType<typeof createCommandContext>;
    readModels: ReadModels;
    progress: ProjectionProgress;
    metrics: ServiceMetrics;
    phases: StartupPhases;
    clock: Clock;
  }>,
  started: Daemons,
): Promise<void> => {
  try {
    // The daemons' modules (BullMQ, the roles, the transfer tools) are loaded by the processes that run them.
    const [
      { allRoles },
      { Reactor, reactionsOf },
      { WorkerHost },
      { createWorkerContext },
      { createTransferTools },
      { BrokerConnections },
      { createStorages },
      { ServiceTokens },
    ] = await Promise.all([
      import('../workers/roles.ts'),
      import('../workers/reactor.ts'),
      import('../workers/workerHost.ts'),
      import('../workers/workerContext.ts'),
      import('../infra/transfer/transferTools.ts'),
      import('../infra/messaging/brokerConnections.ts'),
      import('../infra/storage/storages.ts'),
      import('../infra/security/clientCredentialsTokens.ts'),
    ]);
    const { HeartbeatStore } = await import('../infra/heartbeats/heartbeatStore.ts');
    let redisUrl = config.redisUrl;
    if (!redisUrl) {
      const redis = await startPrivateRedisServer({ persistenceDir: join(config.dataDir, 'redis') });
      started.redis = {
        url: redis.url,
        stop: async () => {
          forgetRedisUrl(config.dataDir);
          await redis.stop();
        },
      };
      redisUrl = redis.url;
      // Only the holder of the data directory's `redis` lock gets here (takeDataDirLocks).
      rememberRedisUrl(config.dataDir, redisUrl);
      logger.info({ url: redisUrl }, 'started a private redis-server');
      parts.phases.mark('redis');
    }
    const daemonRoles = selectRoles(allRoles, roles.daemonRoles);
    started.reactor = new Reactor({
      eventStore: parts.eventStore,
      readStore: parts.readStore,
      redisUrl,
      prefix: config.queuePrefix,
      reactions: reactionsOf(daemonRoles),
      logger: logger.child({ role: 'reactor' }),
      clock: parts.clock,
    });
    await started.reactor.start();
    started.transferTools = createTransferTools({ dataDir: config.dataDir, clock: parts.clock });
    started.brokers = new BrokerConnections();
    const workerContext = createWorkerContext(
      parts.commands,
      parts.readModels,
      parts.progress,
      logger.child({ role: 'worker' }),
      started.transferTools,
      {
        clock: parts.clock,
        storages: createStorages(),
        messaging: { brokers: started.brokers, password: config.messagingPassword },
        serviceTokens: new ServiceTokens(config.oidcProviders, { now: () => parts.clock.now() }),
      },
    );
    started.workerHost = new WorkerHost({
      redisUrl,
      prefix: config.queuePrefix,
      roles: daemonRoles,
      context: workerContext,
      logger: logger.child({ role: 'worker' }),
      onJobFinished: (role, outcome, seconds) => parts.metrics.observeJob(role, outcome, seconds),
      heartbeats: new HeartbeatStore(parts.readStore),
      jobLockMs: config.jobLockSeconds * 1000,
    });
    await started.workerHost.start();
    const host = started.workerHost;
    parts.metrics.watchQueues(() => host.jobCounts());
    logger.info({ roles: daemonRoles.map((role) => role.name) }, 'daemon roles running');
  } catch (error) {
    await started.workerHost?.stop().catch(() => undefined);
    await started.transferTools?.close().catch(() => undefined);
    await started.brokers?.close().catch(() => undefined);
    await started.reactor?.stop().catch(() => undefined);
    await started.redis?.stop().catch(() => undefined);
    started.workerHost = undefined;
    started.transferTools = undefined;
    started.brokers = undefined;
    started.reactor = undefined;
    started.redis = undefined;
    throw error;
  }
};

/**
 * The line that says where the service is: for people, `dms 0.1.0 listening on http://… —
 * console at /console, metrics at /metrics`; as JSON, `API listening` with the same facts and the
 * time each phase of the start took.
 */
export const logListening = (logger: Logger, config: ServiceConfig, url: string, phases: StartupPhases): void => {
  const version = packageVersion();
  const metricsPath = config.metrics === 'off' ? undefined : '/metrics';
  const metricsText = metricsPath
    ? `metrics at ${metricsPath}`
    : config.metricsPort !== undefined
      ? `metrics on port ${config.metricsPort}`
      : 'metrics off';
  if (config.logFormat === 'pretty')
    logger.info(`dms ${version} listening on ${url} — console at /console, ${metricsText}`);
  else
    logger.info(
      { url, version, console: '/console', metrics: metricsPath ?? null, phasesMs: phases.durations() },
      'API listening',
    );
};

/** The line that says the start is complete, with what each phase took. */
const logStarted = (logger: Logger, config: ServiceConfig, phases: StartupPhases): void => {
  const durations = phases.durations();
  if (config.logFormat === 'pretty') {
    const parts = Object.entries(durations)
      .filter(([name]) => name !== 'total')
      .map(([name, ms]) => `${name} ${Math.round(ms)}`);
    logger.info(`started in ${Math.round(durations.total ?? 0)} ms (${parts.join(', ')})`);
  } else logger.info({ phasesMs: durations }, 'started');
};

const servingGenerations = (readModels: ReadModels): Record<string, number> =>
  Object.fromEntries(
    allProjections.map((projection) => [projection.name, readModels.servingGeneration(projection.name)]),
  );

/**
 * The processes of a split deployment (`dms api`, `dms projector`, `dms worker`) tell each other
 * their progress through the shared Redis: writers that events were appended (which wakes the
 * projector's and the reactor's subscriptions on a SQLite log; EventStoreDB pushes new events by
 * itself), the projector what it has applied (which ends the writes' waits). `dms serve` keeps its
 * projections in the process and needs none. Without REDIS_URL both sides poll.
 */
const openPositionSignals = async (
  config: ServiceConfig,
  roles: Roles,
  logger: Logger,
): Promise<RedisPositionSignals | undefined> => {
  if (roles.api && roles.projector) return undefined;
  if (!config.redisUrl) {
    logger.info(
      'REDIS_URL is unset: this process finds the progress of the others by polling the stores (writes answer about 200 ms later)',
    );
    return undefined;
  }
  const listen: PositionSignalName[] = [];
  if (config.eventStore.kind === 'sqlite' && (roles.projector || roles.workers)) listen.push('appended');
  if (!roles.projector) listen.push('applied');
  const { RedisPositionSignals } = await import('../infra/queue/redisPositionSignals.ts');
  return RedisPositionSignals.open({
    url: config.redisUrl,
    prefix: config.queuePrefix,
    listen,
    logger: logger.child({ component: 'position-signals' }),
  });
};

/** The daemon roles named (all when none are), refusing unknown names. */
const selectRoles = (allRoles: readonly Role[], names: readonly string[] | undefined): readonly Role[] => {
  if (!names || names.length === 0) return allRoles;
  const unknown = names.filter((name) => !allRoles.some((role) => role.name === name));
  if (unknown.length > 0)
    throw new Error(
      `Unknown daemon roles: ${unknown.join(', ')} (known: ${allRoles.map((role) => role.name).join(', ')})`,
    );
  return allRoles.filter((role) => names.includes(role.name));
};

/** Stops accepting connections, lets in-flight requests finish, then cuts what is left. */
const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
