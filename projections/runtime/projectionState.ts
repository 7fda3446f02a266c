import { hostname } from 'node:os';
import type { CollectionSpec, Document, ReadStore } from '../../infra/readstore/readStore.ts';

/**
 * The serving state of a projection, one document each: which generation answers reads and the
 * version of the code that built it.
 */
export type ProjectionStateDocument = Document & {
  version: number;
  /** The generation reads use; its collections carry it in their names (`accounts__g2`). */
  servingGeneration: number;
  status: 'running' | 'failed';
  error?: string;
  updatedAt: string;
};

/** A rebuild in progress: a new generation filled from the start of `$all` beside the serving one. */
export type ProjectionRebuildDocument = Document & {
  version: number;
  generation: number;
  requestedAt: string;
  updatedAt: string;
  error?: string;
};

/**
 * A checkpoint: the global position (a decimal string; positions are bigints) of the last event a
 * lane applied to a projection, written in the same transaction as the documents it changed. Each
 * lane writes only its own checkpoint documents, whole, so lanes never overwrite each other.
 */
export type ProjectionCheckpointDocument = Document & { checkpoint: string; updatedAt: string };

export const servingCheckpointId = (projectionName: string): string => `serving:${projectionName}`;
export const rebuildCheckpointId = (projectionName: string): string => `rebuild:${projectionName}`;

/**
 * A projector says it is alive every second, one document per process and group it runs, in
 * that group's store: a rebuild request finds there whether a projector will take it up.
 */
export type ProjectorHeartbeatDocument = Document & { host: string; pid: number; group?: string; at: string };

export const projectorHeartbeatId = (group: string): string => `${hostname()}:${process.pid}:${group}`;

export const projectionStateCollection: CollectionSpec = { name: 'projection_state', indexes: [] };
export const projectionRebuildsCollection: CollectionSpec = { name: 'projection_rebuilds', indexes: [] };
export const projectionCheckpointsCollection: CollectionSpec = { name: 'projection_checkpoints', indexes: [] };
export const projectorHeartbeatsCollection: CollectionSpec = { name: 'projector_heartbeats', indexes: [] };

/** A projector whose heartbeat is older than this is taken for dead. */
export const PROJECTOR_HEARTBEAT_STALE_MS = 10_000;

/** A logical collection of a projection stored under its generation, e.g. `accounts__g1`. */
export const physicalCollection = (logical: CollectionSpec, generation: number): CollectionSpec => ({
  name: `${logical.name}__g${generation}`,
  indexes: logical.indexes,
});

/** The projectors whose heartbeat in `readStore` is recent, of `group` when one is named. */
export const aliveProjectors = async (
  readStore: ReadStore,
  group?: string,
  now = Date.now(),
): Promise<ProjectorHeartbeatDocument[]> =>
  (await readStore.collection<ProjectorHeartbeatDocument>(projectorHeartbeatsCollection).find({}).toArray()).filter(
    (heartbeat) =>
      now - Date.parse(heartbeat.at) < PROJECTOR_HEARTBEAT_STALE_MS &&
      (group === undefined || heartbeat.group === group),
  );
