import type { LockState } from '../rule/rule.ts';
import { DataIdentifierNotFound } from '../shared/errors.ts';
import type { Command } from '../shared/event.ts';
import {
  OBSOLETE_TOMBSTONE,
  type FileReplicas,
  type PendingRequest,
  type Replica,
  type ReplicaEvent,
} from './replica.ts';

/**
 * Rule locks as the file sees them (Rucio's `__create_lock_and_replica` and the lock removal of
 * `delete_rule`). They live on the file's stream with its replicas, so that locking a replica and
 * deleting it are decisions on the same stream: one of two racing writers fails its append and
 * decides again, on a state that shows what the other did.
 */

export type LockTarget = Readonly<{ scope: string; name: string; rse: string; rseId: string; ruleId: string }>;

/**
 * Locks the file's replica on one RSE for a rule, creating the replica (COPYING) when the file has
 * none there. `requestId` is the id a transfer gets if one must be queued, in the batch stream
 * `requestStream`. `writable`: the RSE
 * takes writes (or the rule ignores availability); `sourceAvailable`: false when the rule names
 * source RSEs and none holds an AVAILABLE copy, so no transfer can start (the lock is STUCK).
 */
export type LockReplica = Command<
  'LockReplica',
  LockTarget & {
    requestId: string;
    requestStream: string;
    writable: boolean;
    sourceAvailable: boolean;
    path: string | null;
  }
>;

/**
 * Removes a rule's lock. `purge`: the rule purges its replicas (an epoch tombstone when no lock is
 * left). The replica keeps a tombstone for the reaper only once no lock holds it.
 */
export type UnlockReplica = Command<'UnlockReplica', LockTarget & { purge: boolean }>;

/**
 * Sets the state of rules' locks on one replica (a transfer done or failed, a repair). Locks of
 * other rules, and rules without a lock here, are left alone. `request` (a repair retrying in
 * place): locks set REPLICATING wait for a transfer; unless one is pending already, this one is
 * queued and the replica becomes COPYING.
 */
export type ChangeReplicaLocks = Command<
  'ChangeReplicaLocks',
  Omit<LockTarget, 'ruleId'> & { locks: Readonly<Record<string, LockState>>; request?: PendingRequest }
>;

/**
 * The transfer the replica waits for is tried again as a new request, in the same batch: the
 * replica waits for `requestId` instead, if it still waits for `previousRequestId` (otherwise the
 * old request was let go meanwhile and the retry is not wanted).
 */
export type RequeueReplicaTransfer = Command<
  'RequeueReplicaTransfer',
  Omit<LockTarget, 'ruleId'> & { previousRequestId: string; requestId: string }
>;

export type ReplicaLockCommand = LockReplica | UnlockReplica | ChangeReplicaLocks | RequeueReplicaTransfer;

const ref = ({ scope, name, rse, rseId }: LockTarget | Omit<LockTarget, 'ruleId'>) => ({ scope, name, rse, rseId });

/** The lock a replica in this state gets, and whether a transfer must be queued for it. */
const lockFor = (replica: Replica | undefined, stuck: boolean): { lockState: LockState; transfer: boolean } => {
  if (!replica) return stuck ? { lockState: 'STUCK', transfer: false } : { lockState: 'REPLICATING', transfer: true };
  switch (replica.state) {
    case 'AVAILABLE':
    case 'TEMPORARY_UNAVAILABLE':
      return { lockState: 'OK', transfer: false };
    case 'UNAVAILABLE':
      return stuck
        ? { lockState: 'STUCK', transfer: false }
        : { lockState: 'REPLICATING', transfer: replica.pendingRequest === null };
    case 'BEING_DELETED':
      // Rucio queues nothing here and the copy would never come back; the file is being removed, so bring it again.
      return { lockState: 'REPLICATING', transfer: replica.pendingRequest === null && !stuck };
    case 'COPYING':
    case 'BAD':
      // A transfer (or a recovery) is already on its way: the lock waits for it.
      return { lockState: 'REPLICATING', transfer: false };
  }
};

export const lockReplica = ({ data, metadata }: LockReplica, state: FileReplicas): ReplicaEvent[] => {
  const did = state.did;
  if (did.status !== 'Live' || did.record.didType !== 'FILE')
    throw new DataIdentifierNotFound(`Data identifier '${data.scope}:${data.name}' not found`);
  const replica = state.replicas.get(data.rseId);
  if (replica?.locks.has(data.ruleId)) return [];
  const at = metadata.now.toISOString();
  const stuck = !data.writable || !data.sourceAvailable;
  const { lockState, transfer } = lockFor(replica, stuck);
  const lock = {
    ruleId: data.ruleId,
    lockState,
    requestId: transfer ? data.requestId : null,
    requestStream: transfer ? data.requestStream : null,
  };
  // One event per replica: created and locked, or locked (and made COPYING when it waits for a copy).
  if (!replica) {
    const { bytes, md5, adler32 } = did.record;
    return [
      {
        type: 'ReplicaAdded',
        data: {
          ...ref(data),
          bytes: bytes ?? 0,
          md5,
          adler32,
          path: data.path,
          state: stuck ? 'UNAVAILABLE' : 'COPYING',
          tombstone: null,
          lock,
          addedAt: at,
        },
      },
    ];
  }
  const previousState = lockState === 'REPLICATING' && replica.state !== 'COPYING' ? replica.state : null;
  return [{ type: 'ReplicaLocked', data: { ...ref(data), ...lock, previousState, lockedAt: at } }];
};

/**
 * The tombstone logic of Rucio's lock removal: while other locks hold the replica nothing but the
 * lock changes; the last lock gone, an epoch tombstone (deleted at the reaper's next pass) when
 * the rule purges, the replica is UNAVAILABLE, or the lock was still waiting for its copy (then
 * the replica becomes UNAVAILABLE and its pending transfer is cancelled); otherwise a tombstone at
 * the replica's last read, or its creation when never read, so it goes when space is needed, the
 * least recently read first.
 */
export const unlockReplica = ({ data, metadata }: UnlockReplica, state: FileReplicas): ReplicaEvent[] => {
  const replica = state.replicas.get(data.rseId);
  const lockState = replica?.locks.get(data.ruleId);
  if (!replica || !lockState) return [];
  const lastLock = replica.locks.size === 1;
  const replicating = lockState === 'REPLICATING';
  let tombstone = replica.tombstone;
  let replicaState = replica.state;
  let cancelledRequest: string | null = null;
  if (lastLock) {
    if (data.purge || replica.state === 'UNAVAILABLE' || replicating) tombstone = OBSOLETE_TOMBSTONE;
    else tombstone = replica.accessedAt ?? replica.createdAt;
    if (replicating && replica.state === 'COPYING') {
      replicaState = 'UNAVAILABLE';
      cancelledRequest = replica.pendingRequest?.id ?? null;
    }
  }
  return [
    {
      type: 'ReplicaUnlocked',
      data: {
        ...ref(data),
        ruleId: data.ruleId,
        lockState,
        tombstone,
        state: replicaState,
        cancelledRequest,
        unlockedAt: metadata.now.toISOString(),
      },
    },
  ];
};

export const changeReplicaLocks = ({ data, metadata }: ChangeReplicaLocks, state: FileReplicas): ReplicaEvent[] => {
  const replica = state.replicas.get(data.rseId);
  if (!replica) return [];
  const changed = Object.fromEntries(
    Object.entries(data.locks).filter(
      ([ruleId, lockState]) => replica.locks.has(ruleId) && replica.locks.get(ruleId) !== lockState,
    ),
  );
  if (Object.keys(changed).length === 0) return [];
  const at = metadata.now.toISOString();
  const retrying =
    data.request !== undefined && Object.values(changed).includes('REPLICATING') && replica.state !== 'AVAILABLE';
  const request = retrying && replica.pendingRequest === null ? (data.request ?? null) : null;
  const queued = { requestId: request?.id ?? null, requestStream: request?.stream ?? null };
  // A retry that makes the replica COPYING again changes its state, its locks and its request in one event.
  if (retrying && replica.state !== 'COPYING')
    return [
      {
        type: 'ReplicaStateChanged',
        data: {
          ...ref(data),
          previousState: replica.state,
          state: 'COPYING',
          tombstone: null,
          recovered: false,
          locks: changed,
          ...queued,
          changedAt: at,
        },
      },
    ];
  return [{ type: 'ReplicaLocksChanged', data: { ...ref(data), locks: changed, ...queued, changedAt: at } }];
};

export const requeueReplicaTransfer = (
  { data, metadata }: RequeueReplicaTransfer,
  state: FileReplicas,
): ReplicaEvent[] => {
  const replica = state.replicas.get(data.rseId);
  if (!replica || replica.pendingRequest?.id !== data.previousRequestId || data.requestId === data.previousRequestId)
    return [];
  return [
    {
      type: 'ReplicaTransferRequeued',
      data: {
        ...ref(data),
        previousRequestId: data.previousRequestId,
        requestId: data.requestId,
        requeuedAt: metadata.now.toISOString(),
      },
    },
  ];
};

export const decideReplicaLock = (command: ReplicaLockCommand, state: FileReplicas): ReplicaEvent[] => {
  switch (command.type) {
    case 'LockReplica':
      return lockReplica(command, state);
    case 'UnlockReplica':
      return unlockReplica(command, state);
    case 'ChangeReplicaLocks':
      return changeReplicaLocks(command, state);
    case 'RequeueReplicaTransfer':
      return requeueReplicaTransfer(command, state);
  }
};
