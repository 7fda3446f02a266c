import type { ServiceConfig } from '../../infra/config.ts';
import { openStores } from '../../infra/stores.ts';
import { allProjections } from '../../projections/index.ts';
import { projectionStateCollection, type ProjectionStateDocument } from '../../projections/projectionState.ts';

/** Prints each projection's version, generation, checkpoint, the head of `$all` and the lag. */
export const projectionsStatusCommand = async (config: ServiceConfig): Promise<number> => {
  const { eventStore, readStore } = openStores(config);
  try {
    const head = await eventStore.headPosition();
    const states = readStore.collection<ProjectionStateDocument>(projectionStateCollection);
    const rows = [['projection', 'version', 'generation', 'checkpoint', 'head', 'lag', 'status']];
    for (const projection of allProjections) {
      const state = await states.get(projection.name);
      const checkpoint = BigInt(state?.checkpoint ?? '0');
      const generation = state ? `${state.generation}${state.servingGeneration !== state.generation ? ` (serving ${state.servingGeneration})` : ''}` : '-';
      rows.push([
        projection.name,
        String(state?.version ?? projection.version),
        generation,
        checkpoint.toString(),
        head.toString(),
        (head - checkpoint).toString(),
        state ? `${state.status}${state.error ? `: ${state.error}` : ''}` : 'not started',
      ]);
    }
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
    for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
    return 0;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
