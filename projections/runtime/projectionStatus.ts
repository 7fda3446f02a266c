import type { EventStore } from '../../infra/eventstore/eventStore.ts';
import type { ReadStore } from '../../infra/readstore/readStore.ts';
import type { AnyProjection } from '../projection.ts';
import { newRebuild, requestRebuild } from './projectionRunner.ts';
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
} from './projectionState.ts';

/**
 * What operators see of the projections, read from the read store (so any process can tell,
 * whichever process projects): `dms projections status` and `GET /admin/projections`.
 */
export type ProjectionReport = Readonly<{
  name: string;
  version: number;
  /** The generation reads use; undefined before the projection first ran. */
  generation: number | undefined;
  checkpoint: bigint;
  head: bigint;
  /** Events of `$all` the serving generation has not applied yet (head − checkpoint). */
  lag: bigint;
  status: 'running' | 'failed' | 'not started';
  error?: string;
  rebuild?: Readonly<{
    generation: number;
    version: number;
    checkpoint: bigint;
    lag: bigint;
    /** How far through the log the rebuild is, 0 to 1 (by position). */
    progress: number;
    requestedAt: string;
    error?: string;
  }>;
}>;

export const projectionReports = async (
  eventStore: EventStore,
  readStore: ReadStore,
  projections: readonly AnyProjection[],
): Promise<ProjectionReport[]> => {
  const head = await eventStore.headPosition();
  const states = readStore.collection<ProjectionStateDocument>(projectionStateCollection);
  const rebuilds = readStore.collection<ProjectionRebuildDocument>(projectionRebuildsCollection);
  const checkpoints = readStore.collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection);
  const checkpointOf = async (id: string) => BigInt((await checkpoints.get(id))?.checkpoint ?? '0');
  const reports: ProjectionReport[] = [];
  for (const projection of projections) {
    const state = await states.get(projection.name);
    const rebuild = await rebuilds.get(projection.name);
    const checkpoint = await checkpointOf(servingCheckpointId(projection.name));
    const rebuildCheckpoint = rebuild ? await checkpointOf(rebuildCheckpointId(projection.name)) : 0n;
    reports.push({
      name: projection.name,
      version: state?.version ?? projection.version,
      generation: state?.servingGeneration,
      checkpoint,
      head,
      lag: head - checkpoint,
      status: state ? state.status : 'not started',
      ...(state?.error ? { error: state.error } : {}),
      ...(rebuild
        ? {
            rebuild: {
              generation: rebuild.generation,
              version: rebuild.version,
              checkpoint: rebuildCheckpoint,
              lag: head - rebuildCheckpoint,
              progress: head === 0n ? 1 : Number((rebuildCheckpoint * 10_000n) / head) / 10_000,
              requestedAt: rebuild.requestedAt,
              ...(rebuild.error ? { error: rebuild.error } : {}),
            },
          }
        : {}),
    });
  }
  return reports;
};

export type RebuildRequest = Readonly<{
  generation: number;
  alreadyUnderWay: boolean;
  projectorRunning: boolean;
  /** A live projector process (`host:pid`) that will do the work, when one is running. */
  projector?: string;
}>;

/**
 * Asks for a rebuild of one projection into a new generation (the projector picks it up within a
 * second); a rebuild already under way is left alone. Says whether a projector is alive to do it.
 */
export const requestProjectionRebuild = async (
  readStore: ReadStore,
  projection: AnyProjection,
  now = new Date(),
): Promise<RebuildRequest> => {
  const rebuilds = readStore.collection<ProjectionRebuildDocument>(projectionRebuildsCollection);
  const existing = await rebuilds.get(projection.name);
  const [alive] = await aliveProjectors(readStore);
  const projector = alive ? { projectorRunning: true, projector: alive._id } : { projectorRunning: false };
  if (existing && !existing.error) return { generation: existing.generation, alreadyUnderWay: true, ...projector };
  const state = await readStore.collection<ProjectionStateDocument>(projectionStateCollection).get(projection.name);
  const generation = Math.max(state?.servingGeneration ?? 1, existing?.generation ?? 0) + 1;
  await requestRebuild(readStore, newRebuild(projection, generation, now.toISOString()));
  return { generation, alreadyUnderWay: false, ...projector };
};
