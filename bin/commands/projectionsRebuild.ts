import type { ServiceConfig } from '../../infra/config.ts';
import type { Logger } from '../../infra/logger.ts';
import { openStores } from '../../infra/stores.ts';
import { allProjections } from '../../projections/index.ts';
import { newRebuild, ProjectionRunner, requestRebuild } from '../../projections/runtime/projectionRunner.ts';
import {
  aliveProjectors,
  projectionRebuildsCollection,
  projectionStateCollection,
  type ProjectionRebuildDocument,
  type ProjectionStateDocument,
} from '../../projections/runtime/projectionState.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';

/**
 * `dms projections rebuild NAME`: fills a new generation of the projection from the start of the
 * event log beside the serving one, then switches reads over. A running projector picks the
 * request up; without one, this command does the work itself and returns when reads have switched.
 */
export const projectionsRebuildCommand = async (config: ServiceConfig, name: string, logger: Logger): Promise<number> => {
  const projection = allProjections.find((candidate) => candidate.name === name);
  if (!projection) {
    console.error(`unknown projection ${name}; known: ${allProjections.map((candidate) => candidate.name).join(', ')}`);
    return 2;
  }
  const { eventStore, readStore } = await openStores(config);
  try {
    const rebuilds = readStore.collection<ProjectionRebuildDocument>(projectionRebuildsCollection);
    const existing = await rebuilds.get(name);
    if (existing && !existing.error) {
      console.log(`a rebuild of ${name} into generation ${existing.generation} is already under way`);
    } else {
      const state = await readStore.collection<ProjectionStateDocument>(projectionStateCollection).get(name);
      const generation = Math.max(state?.servingGeneration ?? 1, existing?.generation ?? 0) + 1;
      await requestRebuild(readStore, newRebuild(projection, generation, new Date().toISOString()));
      console.log(`requested a rebuild of ${name} into generation ${generation}`);
    }
    const projectors = await aliveProjectors(readStore);
    if (projectors.length > 0) {
      console.log(`projector ${projectors[0]!._id} is running and will do it; follow it with: dms projections status`);
      return 0;
    }
    console.log('no projector is running: rebuilding here');
    const runner = new ProjectionRunner({
      eventStore,
      readStore,
      readModels: new ReadModels(readStore, allProjections),
      projections: allProjections,
      logger,
    });
    await runner.start();
    await runner.rebuildsFinished();
    await runner.dropReplacedGenerations();
    await runner.stop();
    console.log(`reads of ${name} now use the rebuilt generation`);
    return 0;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
