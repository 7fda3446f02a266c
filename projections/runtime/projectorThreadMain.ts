import { parentPort, workerData } from 'node:worker_threads';
import { parseServiceConfig } from '../../infra/config.ts';
import { isRecord } from '../../infra/narrowing.ts';
import { createLogger } from '../../infra/logger.ts';
import { openStores } from '../../infra/stores.ts';
import { startTracing, stopTracing } from '../../infra/tracing.ts';
import { allProjections } from '../index.ts';
import { ProjectionRunner } from './projectionRunner.ts';
import type { ProjectorThreadMessage } from './projectorThread.ts';
import { ReadModels } from './readModels.ts';

/**
 * The projections of `dms serve` on a thread of their own (see ProjectorThread): own store
 * connections, own ProjectionRunner; it reports the applied position after each batch and every
 * switch of generation, and stops when asked, closing its stores.
 */
const config = parseServiceConfig(isRecord(workerData) ? workerData.config : undefined);
const port = parentPort!;
const post = (message: ProjectorThreadMessage) => port.postMessage(message);
const logger = createLogger(config.logLevel, config.logFormat).child({ role: 'projector', thread: 'projections' });

await startTracing('projector-thread');
const { eventStore, readStore } = await openStores(config);
const readModels = new ReadModels(readStore, allProjections);
await readModels.refresh();
const runner = new ProjectionRunner({
  eventStore,
  readStore,
  readModels,
  projections: allProjections,
  logger,
  onProgress: (position) => post({ type: 'progress', position }),
  onServingGeneration: (name, generation) => post({ type: 'generation', name, generation }),
});
await runner.start();
post({
  type: 'ready',
  position: runner.position,
  generations: Object.fromEntries(
    allProjections.map((projection) => [projection.name, readModels.servingGeneration(projection.name)]),
  ),
});

port.on('message', (message: { type: 'stop' }) => {
  if (message.type !== 'stop') return;
  void (async () => {
    await runner.stop();
    await eventStore.close();
    await readStore.close();
    await stopTracing().catch((error: unknown) => logger.warn({ err: error }, 'could not send the last spans'));
    port.close();
  })();
});
