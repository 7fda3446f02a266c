import { parentPort, workerData } from 'node:worker_threads';
import { parseServiceConfig } from '../../infra/serviceConfig.ts';
import { isRecord } from '../../infra/typeGuards.ts';
import { createLogger } from '../../infra/logger.ts';
import { openEventStore } from '../../infra/stores.ts';
import { startTracing, stopTracing } from '../../infra/tracing.ts';
import type { ProjectorThreadMessage } from './projectorThread.ts';
import { openGroupStore, runGroup } from './runningProjections.ts';

/**
 * Projection groups on a thread (see ProjectorThread): its own store connections (the event log
 * read here, each group's read store written here and checkpointed beside), a ProjectionRunner per
 * group; it reports each group's applied position after each batch and every switch of
 * generation, and stops when asked, closing its stores.
 */
const config = parseServiceConfig(isRecord(workerData) ? workerData.config : undefined);
const groups =
  isRecord(workerData) && Array.isArray(workerData.groups)
    ? workerData.groups.filter((group): group is string => typeof group === 'string')
    : [];
const port = parentPort!;
const post = (message: ProjectorThreadMessage) => port.postMessage(message);
const logger = createLogger(config.logLevel, config.logFormat).child({ role: 'projector' });

/**
 * An error crosses to the parent thread by structured clone, which keeps the message and stack
 * of the built-in Error classes only: a SqliteError arrived as `{ code: 'SQLITE_ERROR' }`, with
 * nothing to say what failed. So a failure to start leaves as a plain Error that says it all.
 */
const crossing = (error: unknown): Error => {
  if (!(error instanceof Error)) return new Error(String(error));
  const plain = new Error(`${error.name}: ${error.message}`, { cause: error.cause });
  plain.stack = error.stack ?? plain.stack;
  if ('code' in error) Object.assign(plain, { code: error.code });
  return plain;
};

const start = async () => {
  await startTracing('projector-thread');
  // The log is only read here: the process that writes it checkpoints it.
  const eventStore = await openEventStore(config);
  const running = await Promise.all(
    groups.map(async (group) => {
      const readStore = await openGroupStore(config, group);
      const run = await runGroup({
        config,
        group,
        eventStore,
        readStore,
        logger: logger.child({ group }),
        report: post,
      });
      return { run, readStore };
    }),
  );
  return { eventStore, running };
};
const { eventStore, running } = await start().catch((error: unknown) => {
  throw crossing(error);
});

port.on('message', (message: { type: 'stop' }) => {
  if (message.type !== 'stop') return;
  void (async () => {
    for (const { run } of running) await run.stop();
    await eventStore.close();
    for (const { readStore } of running) await readStore.close();
    await stopTracing().catch((error: unknown) => logger.warn({ err: error }, 'could not send the last spans'));
    port.close();
  })();
});
