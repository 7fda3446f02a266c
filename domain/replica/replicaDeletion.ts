import type { Command } from '../shared/event.ts';
import { replicaClimbReason } from '../shared/names.ts';
import type { DidEvent } from '../did/did.ts';
import {
  OBSOLETE_TOMBSTONE,
  type FileReplicas,
  type Replica,
  type ReplicaEvent,
  type StorageDeletion,
} from './replica.ts';
import type { ReplicaTarget } from './replicaStates.ts';

/**
 * The reaper's decisions on a file's stream (behaviour rule 21). A replica is deleted in three
 * steps: marked BEING_DELETED here (refused while a lock holds it), deleted from storage by the
 * worker, then recorded deleted here (refused if a lock took it back meanwhile: it is COPYING
 * again, and its transfer brings the file back). Locks are decided on the same stream, so a new
 * lock and a deletion of the same replica cannot both win.
 */

/** Why the reaper may not delete the replica now, or undefined when it may. */
export const undeletableBecause = (
  file: FileReplicas,
  rseId: string,
  now: string,
  obsoleteOnly: boolean,
): string | undefined => {
  const replica = file.replicas.get(rseId);
  if (!replica) return 'no such replica';
  // Stored before names were checked: its file would be looked for outside the RSE's prefix.
  const climb =
    file.did.status === 'Absent'
      ? undefined
      : replicaClimbReason(file.did.record.scope, file.did.record.name, replica.path);
  if (climb) return climb;
  if (replica.locks.size > 0) return 'a replication rule locks it';
  if (!DELETABLE_STATES.has(replica.state)) return `it is ${replica.state}`;
  if (replica.tombstone === null) return 'it has no tombstone';
  if (obsoleteOnly ? replica.tombstone !== OBSOLETE_TOMBSTONE : replica.tombstone >= now)
    return `its tombstone ${replica.tombstone} has not passed`;
  return transferReason(file, replica);
};

/** Rucio's `list_and_mark_unlocked_replicas` takes these states (BEING_DELETED: a deletion not finished). */
const DELETABLE_STATES: ReadonlySet<Replica['state']> = new Set(['AVAILABLE', 'UNAVAILABLE', 'BAD', 'BEING_DELETED']);

/**
 * While a transfer of the file is pending (another replica waits for its copy), an AVAILABLE
 * replica may be its source, and the last readable copy must stay: Rucio keeps replicas used as
 * sources and never deletes a last copy while a request for the file exists.
 */
const transferReason = (file: FileReplicas, replica: Replica): string | undefined => {
  const others = [...file.replicas.values()].filter((other) => other.rseId !== replica.rseId);
  if (!others.some((other) => other.pendingRequest !== null)) return undefined;
  if (replica.state === 'AVAILABLE') return 'it may be the source of a pending transfer';
  if (!others.some((other) => other.state === 'AVAILABLE'))
    return 'it is the last copy of a file whose transfer is pending';
  return undefined;
};

/**
 * Marks a replica BEING_DELETED (obsolete tombstone) if the reaper may delete it now; nothing
 * otherwise (the read model the candidate came from may lag). A replica already BEING_DELETED (a
 * deletion a crash interrupted) stays so: the deletion goes on.
 */
export type StartReplicaDeletion = Command<
  'StartReplicaDeletion',
  ReplicaTarget & { obsoleteOnly: boolean; daemon: string; reason: string }
>;

/**
 * Records the replica deleted, its file gone from storage; nothing if it is no longer
 * BEING_DELETED without locks (a rule locked it meanwhile: it is COPYING, its transfer under way).
 */
export type RecordReplicaDeletion = Command<
  'RecordReplicaDeletion',
  ReplicaTarget & { storage: StorageDeletion; daemon: string; reason: string }
>;

/**
 * The reaper's cleanup (Rucio's `__cleanup_after_replica_deletion`): a file left without any
 * replica, neither LOST nor held by a rule, is deleted. Its parents detach it in the same step.
 */
export type EraseFileWithoutReplicas = Command<
  'EraseFileWithoutReplicas',
  { scope: string; name: string; reason: string }
>;

export type ReplicaDeletionCommand = StartReplicaDeletion | RecordReplicaDeletion | EraseFileWithoutReplicas;

const ref = ({ scope, name, rse, rseId }: ReplicaTarget) => ({ scope, name, rse, rseId });

export const startReplicaDeletion = ({ data, metadata }: StartReplicaDeletion, state: FileReplicas): ReplicaEvent[] => {
  const now = metadata.now.toISOString();
  if (undeletableBecause(state, data.rseId, now, data.obsoleteOnly) !== undefined) return [];
  const replica = state.replicas.get(data.rseId)!;
  if (replica.state === 'BEING_DELETED') return [];
  return [
    {
      type: 'ReplicaDeletionStarted',
      data: {
        ...ref(data),
        previousState: replica.state,
        previousTombstone: replica.tombstone,
        daemon: data.daemon,
        reason: data.reason,
        changedAt: now,
      },
    },
  ];
};

/** Whether the replica is marked for deletion and nothing holds it: what deleting its file needs. */
export const beingDeleted = (state: FileReplicas, rseId: string): boolean => {
  const replica = state.replicas.get(rseId);
  return replica !== undefined && replica.state === 'BEING_DELETED' && replica.locks.size === 0;
};

export const recordReplicaDeletion = (
  { data, metadata }: RecordReplicaDeletion,
  state: FileReplicas,
): ReplicaEvent[] => {
  if (!beingDeleted(state, data.rseId)) return [];
  const replica = state.replicas.get(data.rseId)!;
  return [
    {
      type: 'ReplicaDeleted',
      data: {
        ...ref(data),
        bytes: replica.bytes,
        path: replica.path,
        previousState: replica.state,
        declaredBad: replica.declaredBad,
        storage: data.storage,
        daemon: data.daemon,
        reason: data.reason,
        deletedAt: metadata.now.toISOString(),
      },
    },
  ];
};

/**
 * Whether the file has gone with its last replica (a LOST file stays, as do files with rules, and
 * archive constituents, which are read through their archives' replicas).
 */
export const erasableFile = (state: FileReplicas): boolean =>
  state.did.status === 'Live' &&
  state.did.record.didType === 'FILE' &&
  state.replicas.size === 0 &&
  state.did.record.availability !== 'LOST' &&
  state.did.rules.size === 0 &&
  state.did.record.columns.constituent !== true;

export const eraseFileWithoutReplicas = (
  { data, metadata }: EraseFileWithoutReplicas,
  state: FileReplicas,
): DidEvent[] => {
  if (!erasableFile(state) || state.did.status !== 'Live') return [];
  // An archive leaves with its content: its constituents are named, so their rows go too.
  const constituents = [...(state.did.constituents?.values() ?? [])].map(({ scope, name }) => ({ scope, name }));
  return [
    {
      type: 'DidErased',
      data: {
        scope: data.scope,
        name: data.name,
        didType: 'FILE',
        children: constituents,
        erasedAt: metadata.now.toISOString(),
        reason: data.reason,
      },
    },
  ];
};

export const decideReplicaDeletion = (
  command: ReplicaDeletionCommand,
  state: FileReplicas,
): (ReplicaEvent | DidEvent)[] => {
  switch (command.type) {
    case 'StartReplicaDeletion':
      return startReplicaDeletion(command, state);
    case 'RecordReplicaDeletion':
      return recordReplicaDeletion(command, state);
    case 'EraseFileWithoutReplicas':
      return eraseFileWithoutReplicas(command, state);
  }
};
