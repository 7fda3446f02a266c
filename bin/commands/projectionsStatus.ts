import type { ServiceConfig } from '../../infra/config.ts';
import { openStores } from '../../infra/stores.ts';
import { printTable } from './table.ts';
import { allProjections } from '../../projections/index.ts';
import {
  aliveProjectors,
  projectionCheckpointsCollection,
  projectionRebuildsCollection,
  projectionStateCollection,
  rebuildCheckpointId,
  servingCheckpointId,
  type ProjectionCheckpointDocument,
  type ProjectionRebuildDocument,
  type ProjectionStateDocument,
} from '../../projections/runtime/projectionState.ts';

/**
 * Prints each projection's version, serving generation, checkpoint, the head of `$all`, the lag,
 * its status (with any rebuild in progress), and which projector processes are alive.
 */
export const projectionsStatusCommand = async (config: ServiceConfig): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  try {
    const head = await eventStore.headPosition();
    const states = readStore.collection<ProjectionStateDocument>(projectionStateCollection);
    const rebuilds = readStore.collection<ProjectionRebuildDocument>(projectionRebuildsCollection);
    const checkpoints = readStore.collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection);
    const checkpointOf = async (id: string) => BigInt((await checkpoints.get(id))?.checkpoint ?? '0');
    const rows = [['projection', 'version', 'generation', 'checkpoint', 'head', 'lag', 'status']];
    for (const projection of allProjections) {
      const state = await states.get(projection.name);
      const rebuild = await rebuilds.get(projection.name);
      const checkpoint = await checkpointOf(servingCheckpointId(projection.name));
      let status = state ? state.status : 'not started';
      if (state?.error) status += `: ${state.error}`;
      if (rebuild) {
        const lag = head - (await checkpointOf(rebuildCheckpointId(projection.name)));
        status += `; rebuilding generation ${rebuild.generation} (version ${rebuild.version}), lag ${lag}${rebuild.error ? `, failed: ${rebuild.error}` : ''}`;
      }
      rows.push([
        projection.name,
        String(state?.version ?? projection.version),
        state ? String(state.servingGeneration) : '-',
        checkpoint.toString(),
        head.toString(),
        (head - checkpoint).toString(),
        status,
      ]);
    }
    printTable(rows);
    const alive = await aliveProjectors(readStore);
    console.log(alive.length > 0 ? `projectors: ${alive.map((heartbeat) => heartbeat._id).join(', ')}` : 'projectors: none running');
    return 0;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
