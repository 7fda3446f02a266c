import type { ReadStore } from '../../infra/readstore/readStore.ts';
import type { ProjectionProgress } from './projectionRunner.ts';
import {
  projectionCheckpointsCollection,
  projectionStateCollection,
  servingCheckpointId,
  type ProjectionCheckpointDocument,
  type ProjectionStateDocument,
} from './projectionState.ts';

/**
 * Read-your-writes for an API process whose projections run in another process (`dms api`
 * beside `dms projector`): polls the checkpoints the projector stores with every batch.
 */
export class CheckpointWatcher implements ProjectionProgress {
  constructor(
    private readonly readStore: ReadStore,
    private readonly projectionNames: readonly string[],
    /** Time between two looks at the checkpoints; default 10 ms. */
    private readonly pollMs = 10,
  ) {}

  /** Another process applies the events; this one learns where it stands only by polling. */
  appliedPosition(): undefined {
    return undefined;
  }

  async waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const states = this.readStore.collection<ProjectionStateDocument>(projectionStateCollection);
    const checkpoints = this.readStore.collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection);
    for (;;) {
      const running = await states.find({ _id: { $in: [...this.projectionNames] }, status: 'running' }).toArray();
      const ids = running.map((state) => servingCheckpointId(state._id));
      const positions = await checkpoints.find({ _id: { $in: ids } }).toArray();
      if (positions.length === ids.length && positions.every((document) => BigInt(document.checkpoint) >= position))
        return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
    }
  }
}
