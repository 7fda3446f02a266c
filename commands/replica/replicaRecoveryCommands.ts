import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { didKey, didStreamName, type DidRef } from '../../domain/did/did.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import { badReplicaOutcome, type BadReplicaOutcome } from '../../domain/replica/replicaRecovery.ts';
import type { RuleCommand } from '../../domain/rule/ruleDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadConfig } from '../config/configCommands.ts';
import { loadFileReplicas } from '../did/didStreams.ts';
import {
  handleCommands,
  lastPosition,
  onStream,
  outcomeOn,
  type CommandContext,
  type DecidedStates,
} from '../handleCommand.ts';
import { loadRse } from '../rse/rseCommands.ts';
import { didClosedOf } from '../rule/ruleContent.ts';
import { loadRule } from '../rule/ruleDeletion.ts';
import { StepBuilder } from '../stepBuilder.ts';

/**
 * The necromancer's work on one BAD replica and the end of temporary unavailabilities, each as
 * atomic steps over the streams they change (domain/replica/replicaRecovery.ts decides).
 */

export type ReplicaRef = DidRef & Readonly<{ rse: string; rseId: string }>;

/** Rucio's activity for the copies that replace bad replicas. */
export const RECOVERY_ACTIVITY = 'Recovery';

/**
 * Resolves one BAD replica in one step: recovered (COPYING, its locks REPLICATING on the file and
 * on each rule, the rule's source expression cleared, a Recovery transfer queued), made obsolete
 * (no lock: the reaper removes it), or lost (its locks removed from the file and the rules, its
 * pending transfer cancelled, the file LOST and detached from its datasets, a LOST message per
 * dataset). The outcome is decided on the file's stream; what the rules do follows from it.
 */
export const resolveBadReplica = async (
  context: CommandContext,
  data: ReplicaRef & Readonly<{ reason: string }>,
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; outcome: BadReplicaOutcome }> => {
  const file = await loadFileReplicas(context, data.scope, data.name);
  const expected = badReplicaOutcome(file, data.rseId);
  const replica = file.replicas.get(data.rseId);
  if (expected === 'nothing' || !replica) return { position: undefined, outcome: 'nothing' };
  const datasets = expected === 'lost' ? await context.didGraph.parents(data.scope, data.name) : [];
  const target = { scope: data.scope, name: data.name, rse: data.rse, rseId: data.rseId };
  const step = new StepBuilder(metadata);
  const fileStream = didStreamName(data.scope, data.name);
  const usePreparer = settingValue((await loadConfig(context)).sections, SETTINGS.conveyorUsePreparer);
  const rse = await loadRse(context, data.rse);
  const stagingArea = rse.status === 'Active' && rse.properties.staging_area;
  const rules = [];
  for (const ruleId of replica.locks.keys()) {
    const rule = await loadRule(context, ruleId);
    if (rule.status === 'Live') rules.push(rule);
  }
  // One transfer for the replica, queued for the first rule (the file's decision names it).
  const request =
    expected === 'recover' && rules[0]
      ? step.queue(
          rules[0].record,
          {
            scope: data.scope,
            name: data.name,
            bytes: replica.bytes,
            rse: { rseId: data.rseId, rse: data.rse, stagingArea, availabilityWrite: true },
            dataset: null,
          },
          usePreparer ? 'PREPARING' : 'QUEUED',
          null,
          RECOVERY_ACTIVITY,
        )
      : undefined;
  step.onDid(data.scope, data.name, {
    type: 'ResolveBadReplica',
    data: { ...target, ...(request ? { request } : {}), datasets, reason: data.reason },
    metadata,
  });
  for (const dataset of datasets) {
    step.onDid(dataset.scope, dataset.name, (decided): DidStreamCommand[] =>
      replicaLostIn(decided, fileStream, data.rseId)
        ? [
            {
              type: 'DetachDids',
              data: { ...dataset, children: [{ scope: data.scope, name: data.name }], ifAttached: true },
              metadata,
            },
          ]
        : [],
    );
  }
  const detail = `${didKey(data.scope, data.name)} on ${data.rse}`;
  for (const rule of rules) {
    const ruleId = rule.record.id;
    const didClosed = await didClosedOf(context, rule.record);
    const lock = { scope: data.scope, name: data.name, rseId: data.rseId };
    step.onRule(ruleId, (decided): RuleCommand[] => {
      const locks = decided.stateOf(didStreamDecider, fileStream)?.replicas.get(data.rseId)?.locks;
      if (replicaLostIn(decided, fileStream, data.rseId)) {
        return [
          {
            type: 'RemoveLocks',
            data: {
              ruleId,
              locks: [lock],
              datasetLocks: [],
              cause: { kind: 'recovery', detail: `${detail} lost` },
              didClosed,
            },
            metadata,
          },
        ];
      }
      if (locks?.get(ruleId) !== 'REPLICATING') return [];
      const commands: RuleCommand[] = [
        {
          type: 'ChangeLocks',
          data: {
            ruleId,
            locks: [{ ...lock, state: 'REPLICATING' }],
            cause: { kind: 'recovery', detail: `${detail} bad` },
            error: null,
            didClosed,
          },
          metadata,
        },
      ];
      if (rule.record.sourceReplicaExpression !== null)
        commands.push({
          type: 'UpdateRuleOptions',
          data: { ruleId, changes: { sourceReplicaExpression: null } },
          metadata,
        });
      return commands;
    });
  }
  if (expected === 'lost' && replica.pendingRequest !== null)
    step.cancel(replica.pendingRequest, `replica ${detail} lost`, (decided) =>
      replicaLostIn(decided, fileStream, data.rseId),
    );
  const outcomes = await handleCommands(context, step.decisions(), { metadata });
  const fileOutcome = outcomeOn(outcomes, didStreamDecider, fileStream)!;
  const decided =
    fileOutcome.events.length === 0 ? 'nothing' : badReplicaOutcome(fileOutcome.previousState, data.rseId);
  return { position: lastPosition(outcomes), outcome: decided };
};

/** Whether the file's decision in this step lost the replica. */
const replicaLostIn = (decided: DecidedStates, fileStream: string, rseId: string): boolean => {
  const state = decided.stateOf(didStreamDecider, fileStream);
  const replica = state?.replicas.get(rseId);
  return (
    state?.did.status === 'Live' &&
    state.did.record.availability === 'LOST' &&
    replica?.state === 'UNAVAILABLE' &&
    replica.locks.size === 0
  );
};

/**
 * Ends the temporary unavailability of replicas whose declaration expired, one step for all; a
 * replica declared again (a later expiry) or BAD meanwhile is left as it is. Returns those that
 * are AVAILABLE again.
 */
export const endTemporaryUnavailabilities = async (
  context: CommandContext,
  data: Readonly<{ replicas: readonly ReplicaRef[] }>,
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; restored: ReplicaRef[] }> => {
  const byFile = new Map<string, ReplicaRef[]>();
  for (const replica of data.replicas)
    byFile.set(didKey(replica.scope, replica.name), [
      ...(byFile.get(didKey(replica.scope, replica.name)) ?? []),
      replica,
    ]);
  const groups = [...byFile.values()];
  const outcomes = await handleCommands(
    context,
    groups.map((replicas) =>
      onStream(
        didStreamDecider,
        didStreamName(replicas[0]!.scope, replicas[0]!.name),
        replicas.map((replica): DidStreamCommand => ({
          type: 'EndTemporaryUnavailability',
          data: { ...replica },
          metadata,
        })),
      ),
    ),
    { metadata },
  );
  const restored = groups.flatMap((replicas, index) =>
    replicas.filter((replica) =>
      outcomes[index]!.events.some(
        (event) => event.type === 'ReplicaStateChanged' && event.data.rseId === replica.rseId,
      ),
    ),
  );
  return { position: lastPosition(outcomes), restored };
};

/**
 * The suspicious-replica-recoverer's declarations, as root, in one step: BAD ones (the
 * necromancer takes them from there) and temporary unavailabilities of a broken RSE's replicas.
 * Returns how many replicas changed.
 */
export const declareRecoveries = async (
  context: CommandContext,
  data: Readonly<{
    bad: readonly (ReplicaRef & { reason: string })[];
    unavailable: readonly (ReplicaRef & { reason: string; days: number })[];
  }>,
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; declared: number }> => {
  const byFile = new Map<string, DidStreamCommand[]>();
  const add = (replica: ReplicaRef, command: DidStreamCommand) => {
    const stream = didStreamName(replica.scope, replica.name);
    byFile.set(stream, [...(byFile.get(stream) ?? []), command]);
  };
  for (const { scope, name, rse, rseId, reason } of data.bad)
    add(
      { scope, name, rse, rseId },
      { type: 'DeclareReplicaBad', data: { scope, name, rse, rseId, reason, force: false }, metadata },
    );
  for (const { scope, name, rse, rseId, reason, days } of data.unavailable) {
    const expiresAt = new Date(metadata.now.getTime() + days * 86_400_000).toISOString();
    add(
      { scope, name, rse, rseId },
      { type: 'DeclareReplicaTemporarilyUnavailable', data: { scope, name, rse, rseId, reason, expiresAt }, metadata },
    );
  }
  const outcomes = await handleCommands(
    context,
    [...byFile].map(([stream, commands]) => onStream(didStreamDecider, stream, commands)),
    { metadata },
  );
  return {
    position: lastPosition(outcomes),
    declared: outcomes.reduce((sum, outcome) => sum + outcome.events.length, 0),
  };
};
