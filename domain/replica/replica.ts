import { evolveDid, initialDid, type Did, type DidEvent, type DidRef } from '../did/did.ts';
import type { LockState } from '../rule/rule.ts';
import { eventTypes, type Event } from '../shared/event.ts';
import { isOneOf } from '../shared/narrowing.ts';

/**
 * A file's replicas: its copies on storage elements. They live in the file's own stream
 * (`did-<scope>:<name>`) beside the file's DID events, so registering a file and its first replica
 * is one append to one stream, and every decision about a replica sees the file it belongs to.
 */

export const REPLICA_STATES = [
  'AVAILABLE',
  'UNAVAILABLE',
  'COPYING',
  'BEING_DELETED',
  'BAD',
  'TEMPORARY_UNAVAILABLE',
] as const;
export type ReplicaState = (typeof REPLICA_STATES)[number];

/** The letters Rucio stores and several inputs take (ReplicaState in rucio/db/sqla/constants.py). */
const STATE_LETTERS: Readonly<Record<string, ReplicaState>> = {
  A: 'AVAILABLE',
  U: 'UNAVAILABLE',
  C: 'COPYING',
  B: 'BEING_DELETED',
  D: 'BAD',
  T: 'TEMPORARY_UNAVAILABLE',
};

/** A replica state given by name or by letter; undefined for anything else (SOURCE included). */
export const replicaStateNamed = (text: string): ReplicaState | undefined =>
  isOneOf(REPLICA_STATES, text) ? text : STATE_LETTERS[text];

/** Rucio's OBSOLETE tombstone: the reaper deletes such replicas even without space pressure. */
export const OBSOLETE_TOMBSTONE = '1970-01-01T00:00:00.000Z';

export type Replica = Readonly<{
  rse: string;
  rseId: string;
  bytes: number;
  md5: string | null;
  adler32: string | null;
  /** The path below the protocol prefix, only on non-deterministic RSEs. */
  path: string | null;
  state: ReplicaState;
  /** ISO time from which the reaper may delete the replica; null protects it. */
  tombstone: string | null;
  /** The rule locks on the replica, by rule id, with their state. A locked replica is never deleted. */
  locks: ReadonlyMap<string, LockState>;
  /** The transfer request that is to bring this replica here, while one is pending, with its stream. */
  pendingRequest: PendingRequest | null;
  /** An open BAD declaration: declaring it bad again is "Already declared" until it is AVAILABLE again. */
  declaredBad: boolean;
  /** While TEMPORARY_UNAVAILABLE: when it becomes AVAILABLE again (the last declaration's expiry). */
  temporaryUntil: string | null;
  createdAt: string;
  /** When a trace last showed it read; null while none has. */
  accessedAt: string | null;
}>;

/** A transfer request a replica waits for: its id and the stream of its batch (request.ts). */
export type PendingRequest = Readonly<{ id: string; stream: string }>;

/** Every replica event names the file and the RSE. */
type ReplicaRef = { scope: string; name: string; rse: string; rseId: string };

/** A rule's lock on a replica as the replica records it, with the transfer it waits for (if any). */
export type ReplicaLock = Readonly<{
  ruleId: string;
  lockState: LockState;
  requestId: string | null;
  requestStream: string | null;
}>;

/**
 * A replica registered, or made by a rule's lock (`lock`, the replica created COPYING and locked
 * in one event: docs/architecture.md, "Event granularity"); null when registered.
 */
export type ReplicaAdded = Event<
  'ReplicaAdded',
  ReplicaRef & {
    bytes: number;
    md5: string | null;
    adler32: string | null;
    path: string | null;
    state: ReplicaState;
    tombstone: string | null;
    lock: ReplicaLock | null;
    /** The transfer that brings a replica made without a lock (a multihop path's intermediate copy); absent otherwise. */
    request?: PendingRequest;
    addedAt: string;
  }
>;
/**
 * A state update (Rucio's `update_replicas_states`). `tombstone` is the replica's tombstone after
 * the change; `recovered` says an open BAD declaration ends here (becoming AVAILABLE again);
 * `locks` the rules' locks on the replica that changed with it, by rule id (a transfer done makes
 * them OK, one given up STUCK, a repair or a recovery REPLICATING again), and `requestId` the
 * transfer queued for them then (in `requestStream`), in the same event.
 */
export type ReplicaStateChanged = Event<
  'ReplicaStateChanged',
  ReplicaRef & {
    previousState: ReplicaState;
    state: ReplicaState;
    tombstone: string | null;
    recovered: boolean;
    locks: Readonly<Record<string, LockState>>;
    requestId: string | null;
    requestStream: string | null;
    changedAt: string;
  }
>;
/** A new BAD declaration: the replica becomes BAD and the declaration opens a history row. */
export type ReplicaDeclaredBad = Event<
  'ReplicaDeclaredBad',
  ReplicaRef & {
    previousState: ReplicaState;
    bytes: number;
    reason: string | null;
    account: string;
    declaredAt: string;
  }
>;
/**
 * The transfer whose failure made the finisher declare its source suspicious: the request and the
 * rule it served, so that the rule's history shows what its failed copy did to the source.
 */
export type SuspicionCause = Readonly<{ requestId: string; ruleId: string }>;

/**
 * Every suspicious declaration counts; the replica's state does not change. `transfer` is absent
 * when a person declared it, and on declarations recorded before it was kept.
 */
export type ReplicaDeclaredSuspicious = Event<
  'ReplicaDeclaredSuspicious',
  ReplicaRef & { bytes: number; reason: string | null; account: string; declaredAt: string; transfer?: SuspicionCause }
>;
/** The replica cannot be read until `expiresAt`; declaring it again moves the expiry. */
export type ReplicaDeclaredTemporarilyUnavailable = Event<
  'ReplicaDeclaredTemporarilyUnavailable',
  ReplicaRef & {
    previousState: ReplicaState;
    bytes: number;
    reason: string | null;
    account: string;
    expiresAt: string;
    declaredAt: string;
  }
>;
export type ReplicaTombstoneSet = Event<
  'ReplicaTombstoneSet',
  ReplicaRef & { tombstone: string | null; setAt: string }
>;

/**
 * A daemon started deleting the replica (the reaper, Rucio's `list_and_mark_unlocked_replicas`):
 * it is BEING_DELETED with an obsolete tombstone from here, and a new lock brings it back. Decided
 * on the file's stream, so it cannot win over a lock taken at the same time.
 */
export type ReplicaDeletionStarted = Event<
  'ReplicaDeletionStarted',
  ReplicaRef & {
    previousState: ReplicaState;
    previousTombstone: string | null;
    daemon: string;
    reason: string;
    changedAt: string;
  }
>;

/**
 * What deleting a replica's file from storage gave: `deleted`, `not-found` (it counts as deleted),
 * or `catalogue-only` (a staging area, or an RSE whose storage is a mock: nothing to delete).
 */
export type StorageDeletion = 'deleted' | 'not-found' | 'catalogue-only';

/** The replica is gone from the catalogue, its file from storage (the reaper's `delete_replicas`). */
export type ReplicaDeleted = Event<
  'ReplicaDeleted',
  ReplicaRef & {
    bytes: number;
    path: string | null;
    previousState: ReplicaState;
    /** An open BAD declaration ends with it (DELETED in the declaration history). */
    declaredBad: boolean;
    storage: StorageDeletion;
    daemon: string;
    reason: string;
    deletedAt: string;
  }
>;

/**
 * A BAD replica of which no other copy can be read (the necromancer, Rucio's
 * `update_rules_for_lost_replica`): the rules' locks on it are removed (`locks`, with their state),
 * its pending transfer cancelled, and it becomes UNAVAILABLE with an obsolete tombstone. The file is
 * LOST (`FileAvailabilityChanged`) and detached from `datasets`.
 */
export type ReplicaLost = Event<
  'ReplicaLost',
  ReplicaRef & {
    previousState: ReplicaState;
    locks: Readonly<Record<string, LockState>>;
    cancelledRequest: string | null;
    datasets: readonly DidRef[];
    reason: string;
    lostAt: string;
  }
>;

/**
 * A rule locked the replica. The tombstone is cleared; `requestId` names the transfer queued to
 * bring the replica, when one was, and `requestStream` the stream of its batch; `previousState`
 * the state the replica left to become COPYING for it (UNAVAILABLE, BEING_DELETED), in the same
 * event, or null when its state stayed.
 */
export type ReplicaLocked = Event<
  'ReplicaLocked',
  ReplicaRef &
    ReplicaLock & {
      previousState: ReplicaState | null;
      lockedAt: string;
    }
>;
/**
 * A rule's lock on the replica is gone. `tombstone` is the replica's tombstone after (set when no
 * lock is left); `state` its state after (a replica still expected by a transfer no one waits for
 * any more becomes UNAVAILABLE, its request cancelled).
 */
export type ReplicaUnlocked = Event<
  'ReplicaUnlocked',
  ReplicaRef & {
    ruleId: string;
    lockState: LockState;
    tombstone: string | null;
    state: ReplicaState;
    cancelledRequest: string | null;
    unlockedAt: string;
  }
>;
/**
 * Locks of rules on the replica changed state (a transfer done or failed, a repair), by rule id;
 * `requestId` names a transfer queued for them (a repair retrying in place), in `requestStream`.
 */
export type ReplicaLocksChanged = Event<
  'ReplicaLocksChanged',
  ReplicaRef & {
    locks: Readonly<Record<string, LockState>>;
    requestId: string | null;
    requestStream: string | null;
    changedAt: string;
  }
>;

/**
 * The replica was read (kronos: traces of finished downloads from its RSE, Rucio's
 * `touch_replica`), `accesses` times since the last batch of traces, the latest at `accessedAt`.
 * `tombstone` is its tombstone after: a tombstone that was set (neither none nor obsolete) moves
 * to the access, so that the reaper, oldest tombstone first, takes the least recently read first.
 * The file's own access count and time go up with it.
 */
export type ReplicaAccessed = Event<
  'ReplicaAccessed',
  ReplicaRef & { accesses: number; accessedAt: string; tombstone: string | null }
>;

/**
 * The transfer the replica waits for failed and is tried again as a new request (the conveyor's
 * finisher): the replica now waits for `requestId`, so a later unlock cancels the right one.
 */
export type ReplicaTransferRequeued = Event<
  'ReplicaTransferRequeued',
  ReplicaRef & { previousRequestId: string; requestId: string; requeuedAt: string }
>;

export type ReplicaEvent =
  | ReplicaAdded
  | ReplicaStateChanged
  | ReplicaDeclaredBad
  | ReplicaDeclaredSuspicious
  | ReplicaDeclaredTemporarilyUnavailable
  | ReplicaTombstoneSet
  | ReplicaLocked
  | ReplicaUnlocked
  | ReplicaLocksChanged
  | ReplicaTransferRequeued
  | ReplicaDeletionStarted
  | ReplicaDeleted
  | ReplicaLost
  | ReplicaAccessed;

export const REPLICA_EVENT_TYPES = eventTypes<ReplicaEvent>({
  ReplicaAdded: true,
  ReplicaStateChanged: true,
  ReplicaDeclaredBad: true,
  ReplicaDeclaredSuspicious: true,
  ReplicaDeclaredTemporarilyUnavailable: true,
  ReplicaTombstoneSet: true,
  ReplicaLocked: true,
  ReplicaUnlocked: true,
  ReplicaLocksChanged: true,
  ReplicaTransferRequeued: true,
  ReplicaDeletionStarted: true,
  ReplicaDeleted: true,
  ReplicaLost: true,
  ReplicaAccessed: true,
});

/**
 * The replica events that move a replica from one state to another, with the state they leave (a
 * lock's only when it made the replica COPYING: `previousState` not null).
 */
export type ReplicaTransition =
  | ReplicaStateChanged
  | ReplicaDeclaredBad
  | ReplicaDeclaredTemporarilyUnavailable
  | ReplicaDeletionStarted
  | ReplicaLost
  | (ReplicaLocked & { data: { previousState: ReplicaState } });

/** Whether a replica event moves the replica to another state. */
export const isTransition = (event: ReplicaEvent): event is ReplicaTransition =>
  event.type === 'ReplicaStateChanged' ||
  event.type === 'ReplicaDeclaredBad' ||
  event.type === 'ReplicaDeclaredTemporarilyUnavailable' ||
  event.type === 'ReplicaDeletionStarted' ||
  event.type === 'ReplicaLost' ||
  (event.type === 'ReplicaLocked' && event.data.previousState !== null);

/** The state a transition leads to. */
export const stateAfter = (event: ReplicaTransition): ReplicaState => {
  switch (event.type) {
    case 'ReplicaLocked':
      return 'COPYING';
    case 'ReplicaStateChanged':
      return event.data.state;
    case 'ReplicaDeclaredBad':
      return 'BAD';
    case 'ReplicaDeclaredTemporarilyUnavailable':
      return 'TEMPORARY_UNAVAILABLE';
    case 'ReplicaDeletionStarted':
      return 'BEING_DELETED';
    case 'ReplicaLost':
      return 'UNAVAILABLE';
  }
};

/** When a transition happened. */
export const transitionTime = (event: ReplicaTransition): string => {
  switch (event.type) {
    case 'ReplicaStateChanged':
    case 'ReplicaDeletionStarted':
      return event.data.changedAt;
    case 'ReplicaLocked':
      return event.data.lockedAt;
    case 'ReplicaDeclaredBad':
    case 'ReplicaDeclaredTemporarilyUnavailable':
      return event.data.declaredAt;
    case 'ReplicaLost':
      return event.data.lostAt;
  }
};

/** The replicas of one file, keyed by RSE id. */
export type Replicas = ReadonlyMap<string, Replica>;

/**
 * What a DID stream holds: the DID and, for a file, its replicas. Replica decisions decide on
 * this; DID decisions see only `did`.
 */
export type FileReplicas = Readonly<{ did: Did; replicas: Replicas }>;

export type DidStreamEvent = DidEvent | ReplicaEvent;

const NO_REPLICAS: Replicas = new Map();

export const initialFileReplicas = (): FileReplicas => ({ did: initialDid(), replicas: NO_REPLICAS });

const isReplicaEvent = (event: DidStreamEvent): event is ReplicaEvent => Object.hasOwn(REPLICA_EVENT_TYPES, event.type);

/** The replicas a file was registered with, as the `ReplicaAdded` events its `DidCreated` holds. */
export const replicasAddedWith = (event: Extract<DidStreamEvent, { type: 'DidCreated' }>): ReplicaAdded[] =>
  event.data.replicas.map((data) => ({ type: 'ReplicaAdded', data }));

/** The replicas whose deletion erased a file, as the `ReplicaDeleted` events its `DidErased` holds. */
export const replicasDeletedWith = (event: Extract<DidStreamEvent, { type: 'DidErased' }>): ReplicaDeleted[] =>
  (event.data.replicasDeleted ?? []).map((data) => ({ type: 'ReplicaDeleted', data }));

/**
 * One event per file and step where a file comes or goes with its replicas (docs/architecture.md,
 * "Event granularity"): a file's `DidCreated` takes the `ReplicaAdded` events that follow it in the
 * same step, and a file's `DidErased` the `ReplicaDeleted` events just before it. Folding the
 * result gives the same state: `evolveFileReplicas` adds the replicas after creating the file and
 * deletes them before erasing it.
 */
export const compactFileSteps = (events: DidStreamEvent[]): DidStreamEvent[] => {
  const compacted: DidStreamEvent[] = [];
  for (const event of events) {
    const last = compacted.at(-1);
    if (event.type === 'ReplicaAdded' && last?.type === 'DidCreated' && last.data.didType === 'FILE') {
      compacted[compacted.length - 1] = {
        type: 'DidCreated',
        data: { ...last.data, replicas: [...last.data.replicas, event.data] },
      };
    } else if (event.type === 'DidErased' && event.data.didType === 'FILE') {
      const deleted: ReplicaDeleted['data'][] = [];
      for (let before = compacted.at(-1); before?.type === 'ReplicaDeleted'; before = compacted.at(-1)) {
        deleted.unshift(before.data);
        compacted.pop();
      }
      compacted.push(
        deleted.length === 0
          ? event
          : {
              type: 'DidErased',
              data: { ...event.data, replicasDeleted: [...deleted, ...(event.data.replicasDeleted ?? [])] },
            },
      );
    } else compacted.push(event);
  }
  return compacted;
};

export const evolveFileReplicas = (state: FileReplicas, event: DidStreamEvent): FileReplicas => {
  if (!isReplicaEvent(event)) {
    if (event.type === 'DidErased' && event.data.replicasDeleted && event.data.replicasDeleted.length > 0)
      return evolveFileReplicas(replicasDeletedWith(event).reduce(evolveFileReplicas, state), {
        type: 'DidErased',
        data: { ...event.data, replicasDeleted: [] },
      });
    const did = evolveDid(state.did, event);
    const created = did === state.did ? state : { ...state, did };
    return event.type === 'DidCreated' && event.data.replicas.length > 0
      ? replicasAddedWith(event).reduce(evolveFileReplicas, created)
      : created;
  }
  const replicas = evolveReplicas(state.replicas, event);
  return replicas === state.replicas ? state : { ...state, replicas };
};

/** The map is copied on change, never mutated: cached states stay valid. */
const evolveReplicas = (replicas: Replicas, event: ReplicaEvent): Replicas => {
  const { rseId } = event.data;
  if (event.type === 'ReplicaAdded') {
    const { rse, bytes, md5, adler32, path, state, tombstone, lock, request, addedAt } = event.data;
    return withReplica(replicas, {
      rse,
      rseId,
      bytes,
      md5,
      adler32,
      path,
      state,
      tombstone,
      locks: lock ? new Map([[lock.ruleId, lock.lockState]]) : NO_LOCKS,
      pendingRequest: lock ? pendingOf(lock) : (request ?? null),
      declaredBad: false,
      temporaryUntil: null,
      createdAt: addedAt,
      accessedAt: null,
    });
  }
  if (event.type === 'ReplicaDeleted') {
    if (!replicas.has(rseId)) return replicas;
    const rest = new Map(replicas);
    rest.delete(rseId);
    return rest;
  }
  const replica = replicas.get(rseId);
  if (!replica) return replicas;
  switch (event.type) {
    case 'ReplicaStateChanged':
      return withReplica(replicas, {
        ...replica,
        locks:
          Object.keys(event.data.locks).length === 0
            ? replica.locks
            : new Map([...replica.locks, ...Object.entries(event.data.locks)]),
        state: event.data.state,
        tombstone: event.data.tombstone,
        declaredBad: replica.declaredBad && !event.data.recovered,
        // A copy that arrived or failed for good ends its request: a retry queues a new one.
        pendingRequest:
          event.data.state === 'AVAILABLE' || event.data.state === 'UNAVAILABLE'
            ? null
            : (pendingOf(event.data) ?? replica.pendingRequest),
        temporaryUntil: event.data.state === 'TEMPORARY_UNAVAILABLE' ? replica.temporaryUntil : null,
      });
    case 'ReplicaDeclaredBad':
      return withReplica(replicas, { ...replica, state: 'BAD', declaredBad: true, temporaryUntil: null });
    case 'ReplicaDeclaredTemporarilyUnavailable':
      return withReplica(replicas, {
        ...replica,
        state: 'TEMPORARY_UNAVAILABLE',
        temporaryUntil: event.data.expiresAt,
      });
    case 'ReplicaDeletionStarted':
      return withReplica(replicas, {
        ...replica,
        state: 'BEING_DELETED',
        tombstone: OBSOLETE_TOMBSTONE,
        temporaryUntil: null,
      });
    case 'ReplicaLost':
      return withReplica(replicas, {
        ...replica,
        state: 'UNAVAILABLE',
        tombstone: OBSOLETE_TOMBSTONE,
        locks: NO_LOCKS,
        declaredBad: false,
        temporaryUntil: null,
        pendingRequest:
          event.data.cancelledRequest !== null && event.data.cancelledRequest === replica.pendingRequest?.id
            ? null
            : replica.pendingRequest,
      });
    case 'ReplicaTombstoneSet':
      return withReplica(replicas, { ...replica, tombstone: event.data.tombstone });
    case 'ReplicaDeclaredSuspicious':
      return replicas;
    case 'ReplicaLocked':
      return withReplica(replicas, {
        ...replica,
        state: event.data.previousState === null ? replica.state : 'COPYING',
        temporaryUntil: event.data.previousState === null ? replica.temporaryUntil : null,
        locks: new Map(replica.locks).set(event.data.ruleId, event.data.lockState),
        tombstone: null,
        pendingRequest: pendingOf(event.data) ?? replica.pendingRequest,
      });
    case 'ReplicaUnlocked': {
      const locks = new Map(replica.locks);
      locks.delete(event.data.ruleId);
      const cancelled =
        event.data.cancelledRequest !== null && event.data.cancelledRequest === replica.pendingRequest?.id;
      return withReplica(replicas, {
        ...replica,
        locks,
        tombstone: event.data.tombstone,
        state: event.data.state,
        pendingRequest: cancelled ? null : replica.pendingRequest,
      });
    }
    case 'ReplicaLocksChanged':
      return withReplica(replicas, {
        ...replica,
        locks: new Map([...replica.locks, ...Object.entries(event.data.locks)]),
        pendingRequest: pendingOf(event.data) ?? replica.pendingRequest,
      });
    case 'ReplicaAccessed':
      return withReplica(replicas, {
        ...replica,
        accessedAt: event.data.accessedAt,
        tombstone: event.data.tombstone,
      });
    case 'ReplicaTransferRequeued':
      // A retry is queued in the batch of the request it retries.
      return replica.pendingRequest?.id === event.data.previousRequestId
        ? withReplica(replicas, {
            ...replica,
            pendingRequest: { id: event.data.requestId, stream: replica.pendingRequest.stream },
          })
        : replicas;
  }
};

const NO_LOCKS: ReadonlyMap<string, LockState> = new Map();

/** The request an event says the replica now waits for, if any. */
const pendingOf = ({
  requestId,
  requestStream,
}: Readonly<{ requestId: string | null; requestStream: string | null }>): PendingRequest | null =>
  requestId === null || requestStream === null ? null : { id: requestId, stream: requestStream };

const withReplica = (replicas: Replicas, replica: Replica): Replicas => new Map(replicas).set(replica.rseId, replica);
