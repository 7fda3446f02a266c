import { didKey } from '../../domain/did/did.ts';
import { OBSOLETE_TOMBSTONE, stateAfter, type ReplicaEvent, type ReplicaState } from '../../domain/replica/replica.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected } from '../projection.ts';

/** One document per replica (file × RSE), with Rucio's column names. */
export type ReplicaDocument = Projected<{
  didKey: string;
  scope: string;
  name: string;
  rse: string;
  rse_id: string;
  bytes: number;
  md5: string | null;
  adler32: string | null;
  /** Stored path on a non-deterministic RSE. */
  path: string | null;
  state: ReplicaState;
  lock_cnt: number;
  tombstone: string | null;
  created_at: string;
  updated_at: string;
  accessed_at: string | null;
  /** `updated_at` again while the replica is BAD, absent otherwise: the key of the necromancer's sparse index. */
  bad_since?: string;
}>;

/**
 * Indexed by file (listings fetch the replicas of a page of files with one `$in`, sorted by
 * `didKey, _id` so the index gives the order and no sort is needed), by stored path and RSE (PFNs
 * of non-deterministic RSEs: sparse, since replicas on deterministic RSEs have no path and cost it
 * no entry; version 2), and for the reaper and the necromancer. What reads an RSE's replicas
 * reads them through the reaper's index, which starts with the RSE.
 */
export const replicasCollection: CollectionSpec = {
  name: 'replicas',
  indexes: [
    { fields: ['didKey', '_id'] },
    { fields: ['path', 'rse_id'], sparse: true },
    // The reaper's candidates of an RSE, unlocked, oldest tombstone first.
    { fields: ['rse_id', 'lock_cnt', 'tombstone', 'updated_at'] },
    // The necromancer's BAD replicas, oldest change first: the only replicas it holds (version 2;
    // version 1 indexed every replica by state and time for them).
    { fields: ['bad_since'], sparse: true },
  ],
};

/** The order in which replicas of several files come out of the file index without a sort. */
export const BY_FILE = { didKey: 1, _id: 1 } as const;

/** A space separates file and RSE id: names cannot contain spaces. */
export const replicaId = (scope: string, name: string, rseId: string): string => `${didKey(scope, name)} ${rseId}`;

/** The document with `bad_since` as its state says: the time of its last change while BAD, else none. */
const markedIfBad = (document: ReplicaDocument | null | undefined): ReplicaDocument | null | undefined => {
  if (!document) return document;
  if (document.state === 'BAD')
    return document.bad_since === document.updated_at ? document : { ...document, bad_since: document.updated_at };
  if (document.bad_since === undefined) return document;
  const { bad_since: _cleared, ...unmarked } = document;
  return unmarked;
};

/** How a replica event changes the replica's document (projections/replicaProjection.ts applies it). */
export const evolveReplica = (
  document: ReplicaDocument | null,
  event: ReplicaEvent,
): ReplicaDocument | null | undefined => markedIfBad(evolveFields(document, event));

const evolveFields = (document: ReplicaDocument | null, event: ReplicaEvent): ReplicaDocument | null | undefined => {
  if (event.type === 'ReplicaAdded') {
    const { scope, name, rse, rseId, bytes, md5, adler32, path, state, tombstone, lock, addedAt } = event.data;
    return {
      _id: replicaId(scope, name, rseId),
      didKey: didKey(scope, name),
      scope,
      name,
      rse,
      rse_id: rseId,
      bytes,
      md5,
      adler32,
      path,
      state,
      lock_cnt: lock ? 1 : 0,
      tombstone,
      created_at: addedAt,
      updated_at: addedAt,
      accessed_at: null,
    };
  }
  if (!document) return undefined;
  switch (event.type) {
    case 'ReplicaStateChanged':
      return {
        ...document,
        state: event.data.state,
        tombstone: event.data.tombstone,
        updated_at: event.data.changedAt,
      };
    case 'ReplicaDeclaredBad':
    case 'ReplicaDeclaredTemporarilyUnavailable':
      return { ...document, state: stateAfter(event), updated_at: event.data.declaredAt };
    case 'ReplicaTombstoneSet':
      return { ...document, tombstone: event.data.tombstone, updated_at: event.data.setAt };
    case 'ReplicaLocked':
      return {
        ...document,
        state: event.data.previousState === null ? document.state : 'COPYING',
        lock_cnt: document.lock_cnt + 1,
        tombstone: null,
        updated_at: event.data.lockedAt,
      };
    case 'ReplicaUnlocked':
      return {
        ...document,
        lock_cnt: Math.max(0, document.lock_cnt - 1),
        tombstone: event.data.tombstone,
        state: event.data.state,
        updated_at: event.data.unlockedAt,
      };
    case 'ReplicaDeletionStarted':
      return { ...document, state: 'BEING_DELETED', tombstone: OBSOLETE_TOMBSTONE, updated_at: event.data.changedAt };
    case 'ReplicaDeleted':
      return null;
    case 'ReplicaLost':
      return {
        ...document,
        state: 'UNAVAILABLE',
        lock_cnt: 0,
        tombstone: OBSOLETE_TOMBSTONE,
        updated_at: event.data.lostAt,
      };
    case 'ReplicaAccessed':
      // A read changes neither the replica's state nor when it last changed (the reaper's order within a tombstone).
      return { ...document, accessed_at: event.data.accessedAt, tombstone: event.data.tombstone };
    default:
      return undefined;
  }
};
