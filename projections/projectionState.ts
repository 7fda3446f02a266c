import type { CollectionSpec, Document } from '../infra/readstore/readStore.ts';

/**
 * One document per projection in the read store: which version and generation serve reads, and
 * the checkpoint (global position of the last event applied), written in the same transaction as
 * the documents that event changed.
 */
export type ProjectionStateDocument = Document & {
  version: number;
  /** The generation being written; increases with every rebuild. Collections carry it in their names. */
  generation: number;
  /** The generation reads use; lags `generation` while a rebuild catches up. */
  servingGeneration: number;
  /** A rebuild switches reads over once its checkpoint reaches this position. */
  switchAt?: string;
  /** Global position as a decimal string (positions are bigints). */
  checkpoint: string;
  status: 'running' | 'failed';
  error?: string;
  updatedAt: string;
};

export const projectionStateCollection: CollectionSpec = { name: 'projection_state', indexes: [] };

/** A logical collection of a projection stored under its generation, e.g. `accounts__g1`. */
export const physicalCollection = (logical: CollectionSpec, generation: number): CollectionSpec => ({
  name: `${logical.name}__g${generation}`,
  indexes: logical.indexes,
});
