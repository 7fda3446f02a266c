import type { EventStore } from '../../infra/eventstore/eventStore.ts';
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
import type { ProjectionStores } from './projectionStores.ts';

/**
 * What operators see of the projections, read from the read store (so any process can tell,
 * whichever process projects): `dms projections status` and `GET /admin/projections`.
 */
export type ProjectionReport = Readonly<{
  name: string;
  /** Its projection group (projections/index.ts). */
  group: string;
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

/** Each projection's report, read from its group's store (`projections`: default all of `stores`). */
export const projectionReports = async (
  eventStore: EventStore,
  stores: ProjectionStores,
  projections: readonly AnyProjection[] = stores.projections(),
): Promise<ProjectionReport[]> => {
  const head = await eventStore.headPosition();
  const reports: ProjectionReport[] = [];
  for (const projection of projections) {
    const group = stores.groupOf(projection.name);
    if (!group) continue;
    const readStore = stores.storeOfGroup(group.name);
    const states = readStore.collection<ProjectionStateDocument>(projectionStateCollection);
    const rebuilds = readStore.collection<ProjectionRebuildDocument>(projectionRebuildsCollection);
    const checkpoints = readStore.collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection);
    const checkpointOf = async (id: string) => BigInt((await checkpoints.get(id))?.checkpoint ?? '0');
    const state = await states.get(projection.name);
    const rebuild = await rebuilds.get(projection.name);
    const checkpoint = await checkpointOf(servingCheckpointId(projection.name));
    const rebuildCheckpoint = rebuild ? await checkpointOf(rebuildCheckpointId(projection.name)) : 0n;
    reports.push({
      name: projection.name,
      group: group.name,
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
 * Asks for a rebuild of one projection into a new generation, in its group's store (the
 * projector of the group picks it up within a second); a rebuild already under way is left
 * alone. Says whether a projector of the group is alive to do it.
 */
export const requestProjectionRebuild = async (
  stores: ProjectionStores,
  projection: AnyProjection,
  now = new Date(),
): Promise<RebuildRequest> => {
  const group = stores.groupOf(projection.name);
  if (!group) throw new Error(`The projection ${projection.name} is in no group here`);
  const readStore = stores.storeOfGroup(group.name);
  const rebuilds = readStore.collection<ProjectionRebuildDocument>(projectionRebuildsCollection);
  const existing = await rebuilds.get(projection.name);
  const [alive] = await aliveProjectors(readStore, group.name);
  const projector = alive ? { projectorRunning: true, projector: alive._id } : { projectorRunning: false };
  if (existing && !existing.error) return { generation: existing.generation, alreadyUnderWay: true, ...projector };
  const state = await readStore.collection<ProjectionStateDocument>(projectionStateCollection).get(projection.name);
  const generation = Math.max(state?.servingGeneration ?? 1, existing?.generation ?? 0) + 1;
  await requestRebuild(readStore, newRebuild(projection, generation, now.toISOString()));
  return { generation, alreadyUnderWay: false, ...projector };
};
