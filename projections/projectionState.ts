import type { CollectionSpec, Document } from '../infra/readstore/readStore.ts';

/**
 * The serving state of a projection, one document each: which generation answers reads, the
 * version of the code that built it, and its checkpoint (the global position of the last event
 * applied), written in the same transaction as the documents that event changed.
 */
export type ProjectionStateDocument = Document & {
  version: number;
  /** The generation reads use; its collections carry it in their names (`accounts__g2`). */
  servingGeneration: number;
  /** Global position as a decimal string (positions are bigints). */
  checkpoint: string;
  status: 'running' | 'failed';
  error?: string;
  updatedAt: string;
};

/**
 * A rebuild in progress: a new generation filled from the start of `$all` beside the serving
 * one. Kept in its own document so the rebuilding lane and the live lane never overwrite each
 * other's checkpoints.
 */
export type ProjectionRebuildDocument = Document & {
  version: number;
  generation: number;
  checkpoint: string;
  requestedAt: string;
  updatedAt: string;
};

/** A projector process says it is alive every few seconds. */
export type ProjectorHeartbeatDocument = Document & { host: string; pid: number; at: string };

export const projectionStateCollection: CollectionSpec = { name: 'projection_state', indexes: [] };
export const projectionRebuildsCollection: CollectionSpec = { name: 'projection_rebuilds', indexes: [] };
export const projectorHeartbeatsCollection: CollectionSpec = { name: 'projector_heartbeats', indexes: [] };

/** A projector whose heartbeat is older than this is taken for dead. */
export const PROJECTOR_HEARTBEAT_STALE_MS = 10_000;

/** A logical collection of a projection stored under its generation, e.g. `accounts__g1`. */
export const physicalCollection = (logical: CollectionSpec, generation: number): CollectionSpec => ({
  name: `${logical.name}__g${generation}`,
  indexes: logical.indexes,
});
