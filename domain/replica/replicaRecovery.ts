import type { DidEvent, DidRef } from '../did/did.ts';
import type { LockState } from '../rule/rule.ts';
import type { Command } from '../shared/event.ts';
import { OBSOLETE_TOMBSTONE, type FileReplicas, type PendingRequest, type ReplicaEvent } from './replica.ts';
import type { ReplicaTarget } from './replicaStates.ts';

/**
 * What becomes of damaged replicas, decided on the file's stream, which holds every copy of the
 * file: the necromancer's recovery or loss of a BAD replica (behaviour rule 25), and the end of a
 * temporary unavailability (minos-temporary-expiration).
 */

/**
 * The necromancer's decision for one BAD replica (Rucio's `update_rules_for_bad_replica` and
 * `update_rules_for_lost_replica`):
 *
 * - another copy can be read (AVAILABLE or TEMPORARY_UNAVAILABLE) and rules lock this one: the
 *   replica is COPYING, its locks REPLICATING, and a transfer (`request`, activity Recovery) is
 *   queued unless one is pending; the copy arriving makes it AVAILABLE and the declaration RECOVERED;
 * - another copy, no lock: the replica is UNAVAILABLE with an obsolete tombstone (the reaper removes it);
 * - no other copy: the replica is lost: its locks are removed, its pending transfer cancelled,
 *   it is UNAVAILABLE with an obsolete tombstone, and the file is LOST (detached from `datasets`
 *   on their streams in the same step).
 *
 * Nothing happens to a replica that is not BAD any more, or whose file is LOST already.
 */
export type ResolveBadReplica = Command<
  'ResolveBadReplica',
  ReplicaTarget & { request?: PendingRequest; datasets: readonly DidRef[]; reason: string }
>;

/** Ends a temporary unavailability whose expiry has passed: the replica is AVAILABLE again. */
export type EndTemporaryUnavailability = Command<'EndTemporaryUnavailability', ReplicaTarget>;

export type ReplicaRecoveryCommand = ResolveBadReplica | EndTemporaryUnavailability;

/** What the necromancer will do with the file's replica on an RSE, from the file's stream. */
export type BadReplicaOutcome = 'recover' | 'obsolete' | 'lost' | 'nothing';

export const badReplicaOutcome = (state: FileReplicas, rseId: string): BadReplicaOutcome => {
  const replica = state.replicas.get(rseId);
  if (!replica || replica.state !== 'BAD' || state.did.status !== 'Live' || state.did.record.availability === 'LOST')
    return 'nothing';
  const readableElsewhere = [...state.replicas.values()].some(
    (other) => other.rseId !== rseId && (other.state === 'AVAILABLE' || other.state === 'TEMPORARY_UNAVAILABLE'),
  );
  if (!readableElsewhere) return 'lost';
  return replica.locks.size > 0 ? 'recover' : 'obsolete';
};

const ref = ({ scope, name, rse, rseId }: ReplicaTarget) => ({ scope, name, rse, rseId });

export const resolveBadReplica = (
  { data, metadata }: ResolveBadReplica,
  state: FileReplicas,
): (ReplicaEvent | DidEvent)[] => {
  const outcome = badReplicaOutcome(state, data.rseId);
  if (outcome === 'nothing') return [];
  const replica = state.replicas.get(data.rseId)!;
  const at = metadata.now.toISOString();
  switch (outcome) {
    case 'recover': {
      const locks: Record<string, LockState> = Object.fromEntries(
        [...replica.locks].filter(([, lock]) => lock !== 'REPLICATING').map(([ruleId]) => [ruleId, 'REPLICATING']),
      );
      const request = replica.pendingRequest === null ? (data.request ?? null) : null;
      // The replica COPYING again, its locks waiting for the copy and the transfer queued: one event.
      return [
        {
          type: 'ReplicaStateChanged',
          data: {
            ...ref(data),
            previousState: 'BAD',
            state: 'COPYING',
            tombstone: replica.tombstone,
            recovered: false,
            locks,
            requestId: request?.id ?? null,
            requestStream: request?.stream ?? null,
            changedAt: at,
          },
        },
      ];
    }
    case 'obsolete':
      return [
        {
          type: 'ReplicaStateChanged',
          data: {
            ...ref(data),
            previousState: 'BAD',
            state: 'UNAVAILABLE',
            tombstone: OBSOLETE_TOMBSTONE,
            recovered: false,
            locks: {},
            requestId: null,
            requestStream: null,
            changedAt: at,
          },
        },
      ];
    case 'lost':
      return [
        {
          type: 'ReplicaLost',
          data: {
            ...ref(data),
            previousState: 'BAD',
            locks: Object.fromEntries(replica.locks),
            cancelledRequest: replica.pendingRequest?.id ?? null,
            datasets: data.datasets,
            reason: data.reason,
            lostAt: at,
          },
        },
        {
          type: 'FileAvailabilityChanged',
          data: { scope: data.scope, name: data.name, availability: 'LOST', changedAt: at },
        },
      ];
  }
};

/**
 * Only a replica still TEMPORARY_UNAVAILABLE, whose last declaration has expired, comes back: a
 * declaration made again meanwhile (a later expiry) or a BAD one keeps it as it is.
 */
export const endTemporaryUnavailability = (
  { data, metadata }: EndTemporaryUnavailability,
  state: FileReplicas,
): ReplicaEvent[] => {
  const replica = state.replicas.get(data.rseId);
  const at = metadata.now.toISOString();
  if (
    !replica ||
    replica.state !== 'TEMPORARY_UNAVAILABLE' ||
    replica.temporaryUntil === null ||
    replica.temporaryUntil > at
  )
    return [];
  return [
    {
      type: 'ReplicaStateChanged',
      data: {
        ...ref(data),
        previousState: replica.state,
        state: 'AVAILABLE',
        tombstone: replica.tombstone,
        recovered: replica.declaredBad,
        locks: {},
        requestId: null,
        requestStream: null,
        changedAt: at,
      },
    },
  ];
};

export const decideReplicaRecovery = (
  command: ReplicaRecoveryCommand,
  state: FileReplicas,
): (ReplicaEvent | DidEvent)[] => {
  switch (command.type) {
    case 'ResolveBadReplica':
      return resolveBadReplica(command, state);
    case 'EndTemporaryUnavailability':
      return endTemporaryUnavailability(command, state);
  }
};
