import { isRecord, errorMessage } from '../../infra/narrowing.ts';
import { parseServiceConfig } from '../../infra/config.ts';
import {
  errorOfAppendFailure,
  parseAppendFailure,
  parseAppendResults,
  type AppendChannel,
} from '../../infra/eventstore/forwardedAppends.ts';
import type { AppendResult } from '../../infra/eventstore/eventStore.ts';
import { createLogger } from '../../infra/logger.ts';
import { isProgressReport, RelayedProgress } from '../../projections/runtime/progressRelay.ts';
import { PortInUseError, startRuntime, type Runtime } from '../runtime.ts';
import { dmsMessageKind, type WorkerMessage } from './clusterMessages.ts';

/**
 * An API worker of `dms serve` (forked by clusterPrimary.ts): the HTTP API over the shared port,
 * reading the stores through its own connections, appending through the primary, and following
 * the projections' progress as the primary relays it. It starts when the primary sends its
 * configuration and stops when the primary asks (or on SIGTERM), after finishing its requests.
 */

type Pending = { resolve(value: unknown): void; reject(error: Error): void };

const pending = new Map<number, Pending>();
let nextId = 1;
const progress = new RelayedProgress();
let runtime: Runtime | undefined;
let stopping: Promise<void> | undefined;

const send = (message: WorkerMessage): void => {
  if (process.send && process.connected) process.send(message);
};

/** Sends a request and resolves with the primary's answer (what `settle` makes of it). */
const ask = <T>(message: (id: number) => WorkerMessage, settle: (answer: unknown) => T): Promise<T> => {
  if (!process.send || !process.connected) return Promise.reject(new Error('The cluster primary is gone'));
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    pending.set(id, {
      resolve: (answer) => {
        try {
          resolve(settle(answer));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      },
      reject,
    });
    send(message(id));
  });
};

const appends: AppendChannel = {
  append: (list) =>
    ask(
      (id) => ({ dms: 'append', id, appends: list }),
      (answer): AppendResult[] => {
        if (!isRecord(answer)) throw new Error('The cluster primary answered an append with nothing');
        if (answer.dms === 'appended') {
          const results = parseAppendResults(answer.results);
          if (results) return results;
        }
        const failure = answer.dms === 'append-failed' ? parseAppendFailure(answer.failure) : undefined;
        if (failure) throw errorOfAppendFailure(failure);
        throw new Error('The cluster primary answered an append with something else');
      },
    ),
};

const gatherMetrics = (): Promise<string> =>
  ask(
    (id) => ({ dms: 'metrics', id }),
    (answer) => {
      if (isRecord(answer) && answer.dms === 'metrics-text' && typeof answer.text === 'string') return answer.text;
      throw new Error(
        `The cluster's metrics could not be gathered: ${isRecord(answer) && typeof answer.message === 'string' ? answer.message : 'no answer'}`,
      );
    },
  );

const start = async (configuration: unknown): Promise<void> => {
  const config = parseServiceConfig(configuration);
  const logger = createLogger(config.logLevel, config.logFormat);
  try {
    runtime = await startRuntime(config, { api: true, projector: false, workers: false }, logger, {
      cluster: { kind: 'worker', appends, progress, gatherMetrics },
    });
  } catch (error) {
    logger.error({ err: error }, 'the API worker could not start');
    send({ dms: 'start-failed', portInUse: error instanceof PortInUseError, message: errorMessage(error) });
    process.exit(1);
  }
  if (runtime.url) send({ dms: 'listening', url: runtime.url });
};

const stop = (): Promise<void> =>
  (stopping ??= (async () => {
    try {
      await runtime?.stop();
    } finally {
      process.exit(0);
    }
  })());

process.on('message', (message: unknown) => {
  if (!isRecord(message)) return;
  const kind = dmsMessageKind(message);
  if (kind === 'progress') {
    if (isProgressReport(message.report)) progress.receive(message.report);
  } else if (kind === 'start') {
    if (isProgressReport(message.progress)) progress.receive(message.progress);
    void start(message.config);
  } else if (kind === 'collect-metrics' && typeof message.id === 'number') {
    const id = message.id;
    void runtime?.services.metrics.json().then(
      (metrics) => send({ dms: 'metrics-json', id, metrics }),
      () => send({ dms: 'metrics-json', id, metrics: [] }),
    );
  } else if (kind === 'stop') {
    void stop();
  } else if (kind !== undefined && typeof message.id === 'number') {
    const request = pending.get(message.id);
    pending.delete(message.id);
    request?.resolve(message);
  }
});

// The primary is gone: nothing can be appended any more (Node's cluster then ends this process).
process.on('disconnect', () => {
  for (const request of pending.values()) request.reject(new Error('The cluster primary is gone'));
  pending.clear();
});
// SIGTERM to this worker alone: finish, exit, and the primary starts another. Ctrl-C reaches the
// whole process group: the primary stops the workers itself, after they finish their requests.
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => undefined);

send({ dms: 'hello' });
