import { didKey, didStreamName, type DidRef } from '../../domain/did/did.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import type { ReplicaState } from '../../domain/replica/replica.ts';
import { rseNotFound } from '../../domain/rse/rseDecider.ts';
import { ruleStreamName, type LockState } from '../../domain/rule/rule.ts';
import { ruleDecider, type LockRef, type RuleCommand } from '../../domain/rule/ruleDecider.ts';
import { ReplicaNotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { isWrongExpectedRevision } from '../../infra/eventstore/eventStore.ts';
import { loadFileReplicas } from '../did/didStreams.ts';
import {
  handleCommands,
  lastPosition,
  onStream,
  type AnyStreamDecision,
  type CommandContext,
} from '../handleCommand.ts';
import { loadRse } from '../rse/rseCommands.ts';
import { didClosedOf } from './ruleContent.ts';
import { loadRule } from './ruleDeletion.ts';

/**
 * What becomes of rules when replicas change state: Rucio's `update_replicas_states`, which the
 * conveyor's finisher calls when a transfer is DONE (AVAILABLE: `lock.successful_transfer`) or
 * FAILED for good (UNAVAILABLE: `lock.failed_transfer`). In one atomic step each replica takes its
 * state, every rule lock on a replica becoming AVAILABLE turns OK (STUCK on one becoming
 * UNAVAILABLE), and each rule holding such a lock counts it and takes the state its counters give
 * (behaviour rules 17 and 18): the last REPLICATING lock of a REPLICATING rule turning OK makes the
 * rule OK, with its notifications; a failed copy makes its rules STUCK with the error (SUSPENDED
 * rules stay as they are). Other states change the replicas only.
 */

export type ReplicaStateChange = DidRef & Readonly<{ state: ReplicaState; error?: string | null }>;

/** Attempts when another writer changes a file between our read and our append. */
const ATTEMPTS = 6;

/** The lock state a replica's new state gives its locks, if it changes them. */
const lockStateFor = (state: ReplicaState): Extract<LockState, 'OK' | 'STUCK'> | undefined =>
  state === 'AVAILABLE' ? 'OK' : state === 'UNAVAILABLE' ? 'STUCK' : undefined;

/** Whether a rule's DID is closed: notifications of CLOSE and PROGRESS rules wait for it. */
const ruleDidClosed = async (context: CommandContext, ruleId: string): Promise<boolean> => {
  const state = await loadRule(context, ruleId);
  return state.status === 'Absent' ? false : didClosedOf(context, state.record);
};

/**
 * Changes the state of replicas on one RSE with what it does to their locks and rules, all or
 * nothing. ReplicaNotFound for a file without a replica there; the replica decider's refusals
 * (BEING_DELETED while locked, ...) refuse the whole change.
 */
export const changeReplicaStates = async (
  context: CommandContext,
  data: Readonly<{
    rse: string;
    files: readonly ReplicaStateChange[];
    /** Commands decided on a file's stream before its state changes, by `scope:name` (the finisher's suspicious declarations). */
    before?: ReadonlyMap<string, readonly DidStreamCommand[]>;
    /** Decisions on other streams appended in the same step (the finisher archives the requests). */
    alongside?: readonly AnyStreamDecision[];
  }>,
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; rules: string[] }> => {
  const rse = await loadRse(context, data.rse);
  if (rse.status !== 'Active') throw rseNotFound(data.rse);
  const rseId = rse.id;
  for (let attempt = 1; ; attempt += 1) {
    // The locks that change are those on the replicas when the step is decided: read them, and
    // read again should another writer (a new lock, say) change a file meanwhile.
    const byFile = new Map<string, { scope: string; name: string; commands: DidStreamCommand[] }>();
    /** Per rule: the locks it holds on the files changed, with the state they take and the error. */
    const byRule = new Map<string, { locks: (LockRef & { state: LockState })[]; error: string | null }>();
    for (const file of data.files) {
      const key = didKey(file.scope, file.name);
      const entry = byFile.get(key) ?? {
        scope: file.scope,
        name: file.name,
        commands: [...(data.before?.get(key) ?? [])],
      };
      byFile.set(key, entry);
      const replica = (await loadFileReplicas(context, file.scope, file.name)).replicas.get(rseId);
      if (!replica)
        throw new ReplicaNotFound(`No row found for scope: ${file.scope} name: ${file.name} rse: ${rse.rse}`);
      const target = { scope: file.scope, name: file.name, rse: rse.rse, rseId };
      const lockState = lockStateFor(file.state);
      const ruleIds = lockState
        ? [...replica.locks].filter(([, state]) => state !== lockState).map(([ruleId]) => ruleId)
        : [];
      // The replica's state and its locks' in one event.
      entry.commands.push({
        type: 'ChangeReplicaState',
        data: {
          ...target,
          state: file.state,
          ...(lockState && ruleIds.length > 0
            ? { locks: Object.fromEntries(ruleIds.map((ruleId) => [ruleId, lockState])) }
            : {}),
        },
        metadata,
      });
      if (!lockState) continue;
      for (const ruleId of ruleIds) {
        const rule = byRule.get(ruleId) ?? { locks: [], error: null };
        rule.locks.push({ scope: file.scope, name: file.name, rseId, state: lockState });
        if (lockState === 'STUCK') rule.error = file.error ?? rule.error;
        byRule.set(ruleId, rule);
      }
    }
    const decisions: AnyStreamDecision[] = [...byFile.values()].map((file) =>
      onStream(didStreamDecider, didStreamName(file.scope, file.name), file.commands),
    );
    decisions.push(...(data.alongside ?? []));
    for (const [ruleId, { locks, error }] of byRule) {
      const didClosed = await ruleDidClosed(context, ruleId);
      decisions.push(
        onStream(ruleDecider, ruleStreamName(ruleId), (decided): RuleCommand[] => {
          // Only the locks the files' decisions changed are counted.
          const changed = locks.filter(
            (lock) =>
              decided
                .stateOf(didStreamDecider, didStreamName(lock.scope, lock.name))
                ?.replicas.get(rseId)
                ?.locks.get(ruleId) === lock.state,
          );
          if (changed.length === 0) return [];
          const detail =
            changed.length === 1
              ? `${changed[0]!.scope}:${changed[0]!.name} on ${rse.rse}`
              : `${changed.length} files on ${rse.rse}`;
          return [
            {
              type: 'ChangeLocks',
              data: { ruleId, locks: changed, cause: { kind: 'transfer', detail }, error, didClosed },
              metadata,
            },
          ];
        }),
      );
    }
    try {
      return {
        position: lastPosition(await handleCommands(context, decisions, { metadata, retries: 0 })),
        rules: [...byRule.keys()],
      };
    } catch (error) {
      if (!isWrongExpectedRevision(error) || attempt >= ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
};

export type TransferOutcome = DidRef & Readonly<{ rse: string }>;

/** A copy arrived (a transfer DONE): the replica is AVAILABLE and every lock on it OK. */
export const transferSucceeded = (context: CommandContext, data: TransferOutcome, metadata: CommandMetadata) =>
  changeReplicaStates(
    context,
    { rse: data.rse, files: [{ scope: data.scope, name: data.name, state: 'AVAILABLE' }] },
    metadata,
  );

/** A copy failed for good: the replica is UNAVAILABLE and every lock on it STUCK, with `error` on their rules. */
export const transferFailed = (
  context: CommandContext,
  data: TransferOutcome & { error: string | null },
  metadata: CommandMetadata,
) =>
  changeReplicaStates(
    context,
    { rse: data.rse, files: [{ scope: data.scope, name: data.name, state: 'UNAVAILABLE', error: data.error }] },
    metadata,
  );
