import type { DidAccessed } from '../did/did.ts';
import { unknownCommand } from '../shared/decider.ts';
import type { Command } from '../shared/event.ts';
import { OBSOLETE_TOMBSTONE, type FileReplicas, type ReplicaAccessed } from './replica.ts';
import type { ReplicaTarget } from './replicaStates.ts';

/**
 * Reads recorded from traces (Rucio's kronos: `touch_replica`, `touch_dids`), decided on the DID's
 * stream. Kronos gathers a batch of traces first, so each command stands for every read of one
 * replica, or of one dataset, in the batch: many traces become one event, never one each.
 */

/** Reads of a file's replica on an RSE: how many, the latest when. */
export type RecordReplicaAccess = Command<
  'RecordReplicaAccess',
  ReplicaTarget & { accesses: number; accessedAt: string }
>;
/** Reads of a dataset: its files' downloads, or a touch of it. */
export type RecordDatasetAccess = Command<
  'RecordDatasetAccess',
  { scope: string; name: string; accesses: number; accessedAt: string }
>;

export type ReplicaAccessCommand = RecordReplicaAccess | RecordDatasetAccess;

const later = (a: string | null, b: string): string => (a !== null && a > b ? a : b);

/**
 * The replica's access time becomes the latest read (a batch of old traces never moves it back),
 * and a tombstone that was set moves with it, as Rucio's `touch_replica` does; a replica without a
 * tombstone (locked) or with an obsolete one keeps it. A trace of an RSE where the file has no
 * replica (deleted since, or never there) records nothing, as in Rucio.
 */
export const recordReplicaAccess = ({ data }: RecordReplicaAccess, state: FileReplicas): ReplicaAccessed[] => {
  const replica = state.replicas.get(data.rseId);
  if (state.did.status !== 'Live' || !replica) return [];
  const accessedAt = later(replica.accessedAt, data.accessedAt);
  const tombstone =
    replica.tombstone === null || replica.tombstone === OBSOLETE_TOMBSTONE ? replica.tombstone : accessedAt;
  const { scope, name, rse, rseId, accesses } = data;
  return [{ type: 'ReplicaAccessed', data: { scope, name, rse, rseId, accesses, accessedAt, tombstone } }];
};

/** A dataset that exists records its reads; anything else (gone, a file, a container) records nothing. */
export const recordDatasetAccess = ({ data }: RecordDatasetAccess, state: FileReplicas): DidAccessed[] => {
  if (state.did.status !== 'Live' || state.did.record.didType !== 'DATASET') return [];
  const { scope, name, accesses, accessedAt } = data;
  return [{ type: 'DidAccessed', data: { scope, name, accesses, accessedAt } }];
};

export const decideReplicaAccess = (
  command: ReplicaAccessCommand,
  state: FileReplicas,
): (ReplicaAccessed | DidAccessed)[] => {
  switch (command.type) {
    case 'RecordReplicaAccess':
      return recordReplicaAccess(command, state);
    case 'RecordDatasetAccess':
      return recordDatasetAccess(command, state);
    default:
      return unknownCommand('replica access', command);
  }
};
