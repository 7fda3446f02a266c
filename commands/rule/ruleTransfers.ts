import { didStreamName } from '../../domain/did/did.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/replica/didStreamDecider.ts';
import type { ReplicaState } from '../../domain/replica/replica.ts';
import { rseNotFound } from '../../domain/rse/rseDecider.ts';
import { ruleStreamName, type LockState } from '../../domain/rule/rule.ts';
import { ruleDecider, type RuleCommand } from '../../domain/rule/ruleDecider.ts';
import { ReplicaNotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { isWrongExpectedRevision } from '../../infra/eventstore/eventStore.ts';
import { loadDid, loadFileReplicas } from '../did/didStreams.ts';
import { handleCommands, lastPosition, onStream, type AnyStreamDecision, type CommandContext } from '../handleCommand.ts';
import { loadRse } from '../rse/rseCommands.ts';
import { loadRule } from './ruleDeletion.ts';

/**
 * What becomes of rules when a copy arrives or fails for good: Rucio's `update_replicas_states`
 * with AVAILABLE (`lock.successful_transfer`) or UNAVAILABLE (`lock.failed_transfer`), which the
 * conveyor's finisher calls when a transfer is DONE or FAILED. In one atomic step the replica
 * takes its state, every rule lock on it becomes OK (or STUCK), and each rule holding one counts
 * it and takes the state its counters give (behaviour rules 17 and 18): the last REPLICATING lock
 * of a REPLICATING rule turning OK makes the rule OK with its notifications; a failed copy makes
 * its rules STUCK with the transfer's error (SUSPENDED rules stay as they are).
 */

export type TransferOutcome = Readonly<{ scope: string; name: string; rse: string }>;

/** Attempts when another writer changes the file between our read and our append. */
const ATTEMPTS = 6;

const replicaFinished = async (
  context: CommandContext,
  data: TransferOutcome & { error: string | null },
  replicaState: Extract<ReplicaState, 'AVAILABLE' | 'UNAVAILABLE'>,
  lockState: Extract<LockState, 'OK' | 'STUCK'>,
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; rules: string[] }> => {
  const rse = await loadRse(context, data.rse);
  if (rse.status !== 'Active') throw rseNotFound(data.rse);
  const target = { scope: data.scope, name: data.name, rse: rse.rse, rseId: rse.id };
  for (let attempt = 1; ; attempt += 1) {
    // The rules whose locks change are those on the replica when the step is decided: read them,
    // and read again should another writer (a new lock, say) change the file meanwhile.
    const file = await loadFileReplicas(context, data.scope, data.name);
    const replica = file.replicas.get(rse.id);
    if (!replica) throw new ReplicaNotFound(`No row found for scope: ${data.scope} name: ${data.name} rse: ${rse.rse}`);
    const ruleIds = [...replica.locks].filter(([, state]) => state !== lockState).map(([ruleId]) => ruleId);
    const fileCommands: DidStreamCommand[] = [{ type: 'ChangeReplicaState', data: { ...target, state: replicaState }, metadata }];
    if (ruleIds.length > 0) {
      fileCommands.push({ type: 'ChangeReplicaLocks', data: { ...target, locks: Object.fromEntries(ruleIds.map((ruleId) => [ruleId, lockState])) }, metadata });
    }
    const decisions: AnyStreamDecision[] = [onStream(didStreamDecider, didStreamName(data.scope, data.name), fileCommands)];
    for (const ruleId of ruleIds) {
      const didClosed = await ruleDidClosed(context, ruleId);
      decisions.push(
        onStream(ruleDecider, ruleStreamName(ruleId), (decided): RuleCommand[] => {
          // Only the locks the file's decision changed are counted.
          const after = decided.stateOf(didStreamDecider, didStreamName(data.scope, data.name))?.replicas.get(rse.id)?.locks.get(ruleId);
          if (after !== lockState) return [];
          return [
            {
              type: 'ChangeLocks',
              data: {
                ruleId,
                locks: [{ scope: data.scope, name: data.name, rseId: rse.id, state: lockState }],
                cause: { kind: 'transfer', detail: `${data.scope}:${data.name} on ${rse.rse}` },
                error: data.error,
                didClosed,
              },
              metadata,
            },
          ];
        }),
      );
    }
    try {
      return { position: lastPosition(await handleCommands(context, decisions, { metadata, retries: 0 })), rules: ruleIds };
    } catch (error) {
      if (!isWrongExpectedRevision(error) || attempt >= ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
};

/** Whether a rule's DID is closed (a file always is): notifications of CLOSE and PROGRESS rules wait for it. */
const ruleDidClosed = async (context: CommandContext, ruleId: string): Promise<boolean> => {
  const state = await loadRule(context, ruleId);
  if (state.status === 'Absent') return false;
  const did = await loadDid(context, state.record.scope, state.record.name);
  if (did.status !== 'Live') return false;
  return did.record.didType === 'FILE' || did.record.isOpen === false;
};

/** A copy arrived (a transfer DONE): the replica is AVAILABLE and every lock on it OK. */
export const transferSucceeded = (context: CommandContext, data: TransferOutcome, metadata: CommandMetadata) =>
  replicaFinished(context, { ...data, error: null }, 'AVAILABLE', 'OK', metadata);

/** A copy failed for good: the replica is UNAVAILABLE and every lock on it STUCK, with `error` on their rules. */
export const transferFailed = (context: CommandContext, data: TransferOutcome & { error: string | null }, metadata: CommandMetadata) =>
  replicaFinished(context, data, 'UNAVAILABLE', 'STUCK', metadata);
