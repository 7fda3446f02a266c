import type { LockState } from '../rule/rule.ts';
import { unknownCommand } from '../shared/decider.ts';
import {
  DataIdentifierNotFound,
  InvalidObject,
  InvalidPath,
  ReplicaIsLocked,
  ReplicaNotFound,
  UnsupportedOperation,
} from '../shared/errors.ts';
import type { Command } from '../shared/event.ts';
import { climbProblem, pathSegmentProblem } from '../shared/names.ts';
import { addIntermediateReplica, type AddIntermediateReplica } from './intermediateReplicas.ts';
import {
  evolveFileReplicas,
  OBSOLETE_TOMBSTONE,
  type FileReplicas,
  type Replica,
  type ReplicaEvent,
  type ReplicaState,
  type SuspicionCause,
} from './replica.ts';

/**
 * Decisions about one file's replicas: their registration, states, declarations and tombstones.
 * They are taken on the file's stream, by its decider (`didStreamDecider`), which sees the file
 * with all its replicas. Each command names the file and the RSE; facts about the RSE (its id, the
 * tombstone its `tombstone_delay` gives) are looked up by the command layer.
 */

export type ReplicaTarget = Readonly<{ scope: string; name: string; rse: string; rseId: string }>;

export type AddReplica = Command<
  'AddReplica',
  ReplicaTarget & {
    bytes: number;
    md5: string | null;
    adler32: string | null;
    path: string | null;
    state: ReplicaState;
    tombstone: string | null;
  }
>;
/**
 * A state update; `locks` (the finisher's, through the rules' transfers) sets the state of rules'
 * locks on the replica in the same event (locks of other rules, and rules without a lock here,
 * are left alone).
 */
export type ChangeReplicaState = Command<
  'ChangeReplicaState',
  ReplicaTarget & { state: ReplicaState; locks?: Readonly<Record<string, LockState>> }
>;
export type DeclareReplicaBad = Command<'DeclareReplicaBad', ReplicaTarget & { reason: string | null; force: boolean }>;
/** `transfer`: the failed transfer that made the finisher declare its source (absent when a person declares). */
export type DeclareReplicaSuspicious = Command<
  'DeclareReplicaSuspicious',
  ReplicaTarget & { reason: string | null; transfer?: SuspicionCause }
>;
export type DeclareReplicaTemporarilyUnavailable = Command<
  'DeclareReplicaTemporarilyUnavailable',
  ReplicaTarget & { reason: string | null; expiresAt: string }
>;
export type SetReplicaTombstone = Command<'SetReplicaTombstone', ReplicaTarget & { tombstone: string | null }>;
/**
 * The undertaker's `purge_all_replicas` for a file of an expired collection: every replica no lock
 * holds, and with a tombstone, becomes obsolete (the reaper deletes it next).
 */
export type PurgeUnlockedReplicas = Command<'PurgeUnlockedReplicas', { scope: string; name: string }>;

export type ReplicaCommand =
  | AddReplica
  | AddIntermediateReplica
  | ChangeReplicaState
  | DeclareReplicaBad
  | DeclareReplicaSuspicious
  | DeclareReplicaTemporarilyUnavailable
  | SetReplicaTombstone
  | PurgeUnlockedReplicas;

const ref = ({ scope, name, rse, rseId }: ReplicaTarget) => ({ scope, name, rse, rseId });

/**
 * Adds the replica unless the file already has one on that RSE, which is a silent no-op
 * (behaviour rule 8). The file must exist: registration creates it first in the same decision.
 */
export const addReplica = ({ data, metadata }: AddReplica, state: FileReplicas): ReplicaEvent[] => {
  if (state.did.status !== 'Live' || state.did.record.didType !== 'FILE') {
    throw new DataIdentifierNotFound(`Data identifier '${data.scope}:${data.name}' not found`);
  }
  if (state.replicas.has(data.rseId)) return [];
  const { bytes, md5, adler32, path, tombstone } = data;
  // A file stored before names were checked may climb as a path: no replica of it on any RSE.
  for (const kind of ['scope', 'name'] as const) {
    const climb = climbProblem(kind, data[kind]);
    if (climb)
      throw new InvalidObject(
        `Problem validating ${kind}: '${data[kind]}' ${climb}: it has no replica below an RSE's prefix`,
      );
  }
  const pathClimb = path === null ? undefined : pathSegmentProblem(path);
  if (pathClimb) throw new InvalidPath(`The path '${path}' ${pathClimb}: it would not stay below the RSE's prefix`);
  return [
    {
      type: 'ReplicaAdded',
      data: {
        ...ref(data),
        bytes,
        md5,
        adler32,
        path,
        state: data.state,
        tombstone,
        lock: null,
        addedAt: metadata.now.toISOString(),
      },
    },
  ];
};

const existing = (state: FileReplicas, data: ReplicaTarget): Replica => {
  const replica = state.replicas.get(data.rseId);
  if (!replica) throw new ReplicaNotFound(`No row found for scope: ${data.scope} name: ${data.name} rse: ${data.rse}`);
  return replica;
};

/**
 * Rucio's `update_replicas_states`, with the guards it means to apply (it adds them to a query
 * that has already run): BEING_DELETED only without locks, TEMPORARY_UNAVAILABLE only from
 * AVAILABLE or TEMPORARY_UNAVAILABLE. Becoming AVAILABLE closes an open BAD declaration.
 */
export const changeReplicaState = ({ data, metadata }: ChangeReplicaState, state: FileReplicas): ReplicaEvent[] => {
  const replica = existing(state, data);
  const refuse = () =>
    new UnsupportedOperation(
      `State ${data.state} for replica ${data.scope}:${data.name} on ${data.rse} cannot be updated`,
    );
  if (data.state === 'BEING_DELETED' && replica.locks.size > 0) throw refuse();
  if (
    data.state === 'TEMPORARY_UNAVAILABLE' &&
    replica.state !== 'AVAILABLE' &&
    replica.state !== 'TEMPORARY_UNAVAILABLE'
  )
    throw refuse();
  const recovered = data.state === 'AVAILABLE' && replica.declaredBad;
  const locks = Object.fromEntries(
    Object.entries(data.locks ?? {}).filter(
      ([ruleId, lockState]) => replica.locks.has(ruleId) && replica.locks.get(ruleId) !== lockState,
    ),
  );
  const at = metadata.now.toISOString();
  if (replica.state === data.state && !recovered)
    return Object.keys(locks).length === 0
      ? []
      : [
          {
            type: 'ReplicaLocksChanged',
            data: { ...ref(data), locks, requestId: null, requestStream: null, changedAt: at },
          },
        ];
  return [
    {
      type: 'ReplicaStateChanged',
      data: {
        ...ref(data),
        previousState: replica.state,
        state: data.state,
        tombstone: data.state === 'BEING_DELETED' ? OBSOLETE_TOMBSTONE : replica.tombstone,
        recovered,
        locks,
        requestId: null,
        requestStream: null,
        changedAt: at,
      },
    },
  ];
};

/** What a BAD declaration does to one replica; the command layer reports all but `declared`. */
export type BadDeclarationOutcome = 'declared' | 'Already declared' | 'Unknown replica';

export const badDeclarationOutcome = (state: FileReplicas, rseId: string, force: boolean): BadDeclarationOutcome => {
  const replica = state.replicas.get(rseId);
  if (!replica) return 'Unknown replica';
  return replica.declaredBad && !force ? 'Already declared' : 'declared';
};

/**
 * A BAD declaration opens a history row once; `force` makes an already declared replica BAD
 * again (after a recovery attempt moved it on) without a second row. Unknown or already declared
 * replicas change nothing: they are reported, not refused.
 */
export const declareReplicaBad = ({ data, metadata }: DeclareReplicaBad, state: FileReplicas): ReplicaEvent[] => {
  if (badDeclarationOutcome(state, data.rseId, data.force) !== 'declared') return [];
  const replica = existing(state, data);
  const at = metadata.now.toISOString();
  if (replica.declaredBad) {
    if (replica.state === 'BAD') return [];
    return [
      {
        type: 'ReplicaStateChanged',
        data: {
          ...ref(data),
          previousState: replica.state,
          state: 'BAD',
          tombstone: replica.tombstone,
          recovered: false,
          locks: {},
          requestId: null,
          requestStream: null,
          changedAt: at,
        },
      },
    ];
  }
  return [
    {
      type: 'ReplicaDeclaredBad',
      data: {
        ...ref(data),
        previousState: replica.state,
        bytes: replica.bytes,
        reason: data.reason,
        account: metadata.account,
        declaredAt: at,
      },
    },
  ];
};

/** Every suspicious declaration is recorded (their count is what matters); the state stays. */
export const declareReplicaSuspicious = (
  { data, metadata }: DeclareReplicaSuspicious,
  state: FileReplicas,
): ReplicaEvent[] => {
  const replica = state.replicas.get(data.rseId);
  if (!replica) return [];
  return [
    {
      type: 'ReplicaDeclaredSuspicious',
      data: {
        ...ref(data),
        bytes: replica.bytes,
        reason: data.reason,
        account: metadata.account,
        declaredAt: metadata.now.toISOString(),
        ...(data.transfer ? { transfer: data.transfer } : {}),
      },
    },
  ];
};

/**
 * Only a readable replica can become temporarily unavailable (AVAILABLE, or already
 * TEMPORARY_UNAVAILABLE, whose expiry moves); others are left alone, as Rucio's minos drops them.
 */
export const declareReplicaTemporarilyUnavailable = (
  { data, metadata }: DeclareReplicaTemporarilyUnavailable,
  state: FileReplicas,
): ReplicaEvent[] => {
  const replica = state.replicas.get(data.rseId);
  if (!replica || (replica.state !== 'AVAILABLE' && replica.state !== 'TEMPORARY_UNAVAILABLE')) return [];
  return [
    {
      type: 'ReplicaDeclaredTemporarilyUnavailable',
      data: {
        ...ref(data),
        previousState: replica.state,
        bytes: replica.bytes,
        reason: data.reason,
        account: metadata.account,
        expiresAt: data.expiresAt,
        declaredAt: metadata.now.toISOString(),
      },
    },
  ];
};

/** A replica held by a rule lock keeps its tombstone (ReplicaIsLocked, 423). */
export const setReplicaTombstone = ({ data, metadata }: SetReplicaTombstone, state: FileReplicas): ReplicaEvent[] => {
  const replica = state.replicas.get(data.rseId);
  if (!replica) throw new ReplicaNotFound(`Replica ${data.scope}:${data.name} on RSE ${data.rse} could not be found.`);
  if (replica.locks.size > 0)
    throw new ReplicaIsLocked(`Replica ${data.scope}:${data.name} on RSE ${data.rse} is locked.`);
  if (replica.tombstone === data.tombstone) return [];
  return [
    {
      type: 'ReplicaTombstoneSet',
      data: { ...ref(data), tombstone: data.tombstone, setAt: metadata.now.toISOString() },
    },
  ];
};

export const purgeUnlockedReplicas = ({ data, metadata }: PurgeUnlockedReplicas, state: FileReplicas): ReplicaEvent[] =>
  [...state.replicas.values()]
    .filter(
      (replica) => replica.locks.size === 0 && replica.tombstone !== null && replica.tombstone !== OBSOLETE_TOMBSTONE,
    )
    .map((replica) => ({
      type: 'ReplicaTombstoneSet',
      data: {
        scope: data.scope,
        name: data.name,
        rse: replica.rse,
        rseId: replica.rseId,
        tombstone: OBSOLETE_TOMBSTONE,
        setAt: metadata.now.toISOString(),
      },
    }));

/**
 * Why each of a file's declarations, decided in order, did not count ("Unknown replica",
 * "Already declared"), or undefined where it did: what Rucio reports back to the declarer.
 */
export const declarationReport = (
  state: FileReplicas,
  commands: readonly (DeclareReplicaBad | DeclareReplicaSuspicious | DeclareReplicaTemporarilyUnavailable)[],
): (string | undefined)[] => {
  let current = state;
  return commands.map((command) => {
    const outcome =
      command.type === 'DeclareReplicaBad'
        ? badDeclarationOutcome(current, command.data.rseId, command.data.force)
        : command.type === 'DeclareReplicaSuspicious' && !current.replicas.has(command.data.rseId)
          ? 'Unknown replica'
          : 'declared';
    current = decideReplica(command, current).reduce(evolveFileReplicas, current);
    return outcome === 'declared' ? undefined : outcome;
  });
};

export const decideReplica = (command: ReplicaCommand, state: FileReplicas): ReplicaEvent[] => {
  switch (command.type) {
    case 'AddReplica':
      return addReplica(command, state);
    case 'AddIntermediateReplica':
      return addIntermediateReplica(command, state);
    case 'ChangeReplicaState':
      return changeReplicaState(command, state);
    case 'DeclareReplicaBad':
      return declareReplicaBad(command, state);
    case 'DeclareReplicaSuspicious':
      return declareReplicaSuspicious(command, state);
    case 'DeclareReplicaTemporarilyUnavailable':
      return declareReplicaTemporarilyUnavailable(command, state);
    case 'SetReplicaTombstone':
      return setReplicaTombstone(command, state);
    case 'PurgeUnlockedReplicas':
      return purgeUnlockedReplicas(command, state);
    default:
      return unknownCommand('replica', command);
  }
};
