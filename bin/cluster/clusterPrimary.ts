import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { aggregateMetrics } from '../../api/metrics/serviceMetrics.ts';
import type { ServiceConfig } from '../../infra/config.ts';
import { appendFailureOf, parseStreamAppends } from '../../infra/eventstore/forwardedAppends.ts';
import type { Logger } from '../../infra/logger.ts';
import { entryModule } from '../../infra/moduleFiles.ts';
import { errorMessage, isRecord } from '../../infra/narrowing.ts';
import { logListening, PortInUseError, startRuntime, type Roles, type Runtime } from '../runtime.ts';
import type { ProgressFeed } from '../../projections/runtime/progressRelay.ts';
import { dmsMessageKind, type PrimaryMessage } from './clusterMessages.ts';

const WORKER_ENTRY = fileURLToPath(entryModule(import.meta.url, './apiWorkerMain.ts', 'apiWorker'));

/** How long a worker may take to finish its requests once asked to stop (the API's own drain is 10 s). */
const WORKER_STOP_MS = 15_000;
/** How long a worker may take to hand over its metrics before a scrape goes on without them. */
const METRICS_WAIT_MS = 2000;
/** Pauses before a worker that died is started again: growing while workers keep dying young. */
const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 10_000;
const STABLE_AFTER_MS = 60_000;

export type ServingCluster = Readonly<{ url: string; daemonsReady: Promise<void>; stop(): Promise<void> }>;

/**
 * `dms serve` on several cores: this process (the cluster's primary) takes the data directory's
 * locks, writes the event log, runs the projections (on their thread) and the daemons, and forks
 * `workers` API workers (apiWorkerMain.ts) that share the HTTP port (Node's cluster hands each
 * new connection to the next worker in turn).
 *
 * - Appends: each worker decides commands itself on what it reads, and sends the appends here.
 *   Appends arriving together (from every worker and the daemons) share one SQLite transaction
 *   and one fsync, each checked against its expected revisions inside it (sqliteEventStore.ts);
 *   the worker answers its client once the commit holding its events is on disk.
 * - Read your writes: every report of the projections (position applied, generation switched) is
 *   relayed to every worker, so a write answered by one worker and read through another finds
 *   the read models showing it, as in one process.
 * - Metrics: `GET /metrics` on any worker, and DMS_METRICS_PORT here, sum every process's.
 * - A worker that dies is started again; the primary's death ends the workers (Node's cluster),
 *   and nothing they had answered is lost, since answers follow the fsync.
 */
export const serveCluster = async (
  config: ServiceConfig,
  roles: Roles,
  logger: Logger,
  workers: number,
): Promise<ServingCluster> => {
  // The API workers are forked first: they load their code while this process opens the stores,
  // starts the projections and makes root, and are told to start once that is done. The daemons
  // start once the workers listen, so that nothing of theirs delays the first answer.
  let runtime: Runtime | undefined;
  let allListening: (() => void) | undefined;
  let startFailed: ((error: Error) => void) | undefined;
  const workersListening = new Promise<void>((resolve, reject) => {
    allListening = resolve;
    startFailed = reject;
  });
  // Heard through the start below (startRuntime's daemonsAfter, and the wait after it).
  workersListening.catch(() => undefined);
  const started = new Set<Worker>();
  const birth = new Map<Worker, number>();
  const metricsRequests = new Map<number, (metrics: readonly object[]) => void>();
  let nextMetricsId = 1;
  let stopping = false;
  let restartDelayMs = FIRST_RESTART_DELAY_MS;
  let listening: { url: string } | undefined;
  const listeningWorkers = new Set<Worker>();

  const send = (worker: Worker, message: PrimaryMessage): void => {
    if (worker.isConnected()) worker.send(message);
  };

  let stopRelaying = (): void => undefined;

  /** Every process's metrics, summed: this one's and each started worker's (those that answer in time). */
  const clusterMetrics = async (): Promise<string> => {
    const own = runtime ? await runtime.services.metrics.json() : [];
    const others = await Promise.all(
      [...started].map(
        (worker) =>
          new Promise<readonly object[]>((resolve) => {
            const id = nextMetricsId++;
            const timer = setTimeout(() => {
              metricsRequests.delete(id);
              resolve([]);
            }, METRICS_WAIT_MS);
            metricsRequests.set(id, (metrics) => {
              clearTimeout(timer);
              metricsRequests.delete(id);
              resolve(metrics);
            });
            send(worker, { dms: 'collect-metrics', id });
          }),
      ),
    );
    return aggregateMetrics([own, ...others]);
  };

  const onMessage = (worker: Worker, message: unknown): void => {
    if (!isRecord(message)) return;
    switch (dmsMessageKind(message)) {
      case 'append': {
        const eventStore = runtime?.eventStore;
        const id = message.id;
        const appends = parseStreamAppends(message.appends);
        if (typeof id !== 'number' || !eventStore) return;
        if (!appends) {
          send(worker, { dms: 'append-failed', id, failure: { kind: 'failed', message: 'malformed appends' } });
          return;
        }
        // Joins the group commit under way's successor (SqliteEventStore.appendToStreams).
        eventStore.appendToStreams(appends).then(
          (results) => send(worker, { dms: 'appended', id, results }),
          (error: unknown) => send(worker, { dms: 'append-failed', id, failure: appendFailureOf(error) }),
        );
        return;
      }
      case 'metrics': {
        const id = message.id;
        if (typeof id !== 'number') return;
        clusterMetrics().then(
          (text) => send(worker, { dms: 'metrics-text', id, text }),
          (error: unknown) => send(worker, { dms: 'metrics-failed', id, message: errorMessage(error) }),
        );
        return;
      }
      case 'metrics-json': {
        const answer = typeof message.id === 'number' ? metricsRequests.get(message.id) : undefined;
        // Another process's metrics, made by prom-client there: summed as they are.
        if (answer && Array.isArray(message.metrics)) answer(message.metrics.filter(isRecord));
        return;
      }
      case 'hello':
        // A worker that loaded before this process was ready is told to start once it is.
        primaryReady.then(
          (feed) => {
            started.add(worker);
            send(worker, { dms: 'start', config, progress: feed.snapshot() });
          },
          () => undefined,
        );
        return;
      case 'listening':
        if (typeof message.url !== 'string') return;
        listeningWorkers.add(worker);
        if (!listening && listeningWorkers.size >= workers) {
          listening = { url: message.url };
          allListening?.();
        }
        return;
      case 'start-failed':
        startFailed?.(
          message.portInUse === true
            ? new PortInUseError(config.host, config.port)
            : new Error(`An API worker could not start: ${String(message.message)}`),
        );
        return;
      default:
        return;
    }
  };

  // Each worker accepts from the shared socket itself (SCHED_NONE) rather than the primary
  // accepting and handing connections over (round robin): a connection handed to a worker that
  // dies before taking it would stay open in the primary, unanswered, for ever; and the primary's
  // loop stays free for appends. The kernel wakes whichever worker waits for connections, so a
  // busy one takes fewer.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  cluster.setupPrimary({ exec: WORKER_ENTRY, serialization: 'advanced' });
  const fork = (): void => {
    const worker = cluster.fork();
    birth.set(worker, Date.now());
    worker.on('message', (message: unknown) => onMessage(worker, message));
    // A message sent to a worker killed a moment before ('disconnect' not yet seen) fails with
    // EPIPE as an 'error' event: unheard, it would end the primary. Its 'exit' replaces it.
    worker.on('error', (error: Error) =>
      logger.warn({ pid: worker.process.pid, err: error }, 'a message to an API worker was lost'),
    );
    worker.on('exit', (code, signal) => {
      started.delete(worker);
      listeningWorkers.delete(worker);
      const lived = Date.now() - (birth.get(worker) ?? 0);
      birth.delete(worker);
      if (stopping) return;
      if (!listening) {
        startFailed?.(new Error(`An API worker exited (code ${code}, signal ${signal}) before the API listened`));
        return;
      }
      if (lived >= STABLE_AFTER_MS) restartDelayMs = FIRST_RESTART_DELAY_MS;
      const delay = restartDelayMs;
      restartDelayMs = Math.min(restartDelayMs * 2, MAX_RESTART_DELAY_MS);
      logger.error(
        { pid: worker.process.pid, code, signal, restartInMs: delay },
        'an API worker died; starting another',
      );
      setTimeout(() => {
        if (!stopping) fork();
      }, delay).unref();
    });
  };

  const stopWorkers = async (): Promise<void> => {
    stopping = true;
    const exits = Object.values(cluster.workers ?? {})
      .filter((worker): worker is Worker => worker !== undefined)
      .map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) {
              resolve();
              return;
            }
            const kill = setTimeout(() => worker.process.kill('SIGKILL'), WORKER_STOP_MS);
            worker.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            if (worker.isConnected()) worker.send({ dms: 'stop' });
            else worker.process.kill('SIGTERM');
          }),
      );
    await Promise.all(exits);
  };

  let readyFeed: ((feed: ProgressFeed) => void) | undefined;
  let notReady: ((error: unknown) => void) | undefined;
  const primaryReady = new Promise<ProgressFeed>((resolve, reject) => {
    readyFeed = resolve;
    notReady = reject;
  });
  primaryReady.catch(() => undefined);
  for (let index = 0; index < workers; index += 1) fork();
  try {
    runtime = await startRuntime(config, { ...roles, api: false }, logger, {
      cluster: { kind: 'primary' },
      daemonsAfter: workersListening,
    });
    const feed = runtime.progressFeed;
    if (!feed) throw new Error('The cluster primary runs no projections to relay');
    runtime.services.metrics.gatherWith(clusterMetrics);
    stopRelaying = feed.subscribe((report) => {
      for (const worker of started) send(worker, { dms: 'progress', report });
    });
    readyFeed?.(feed);
    await workersListening;
  } catch (error) {
    notReady?.(error);
    await stopWorkers();
    stopRelaying();
    await runtime?.stop();
    throw error;
  }
  startFailed = undefined;
  const primary = runtime;
  const url = listening!.url;
  primary.announce(url);
  primary.phases.mark('api workers');
  logListening(logger.child({ workers }), config, url, primary.phases);

  let stopped: Promise<void> | undefined;
  return {
    url,
    daemonsReady: primary.daemonsReady,
    stop: () =>
      (stopped ??= (async () => {
        // The workers finish their requests first: their appends still need this process.
        await stopWorkers();
        stopRelaying();
        await primary.stop();
      })()),
  };
};
