import { didKey } from '../../domain/did/did.ts';
import { ruleStreamName, type HeldLock, type LiveRule } from '../../domain/rule/rule.ts';
import { evaluateRseExpression, type RseFacts } from '../../domain/rse/rseExpression.ts';
import { targetRsesOf } from '../../domain/rule/ruleCreation.ts';
import { ruleDecider, type RuleCommand } from '../../domain/rule/ruleDecider.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadConfig } from '../config/configCommands.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { loadFileReplicas } from '../did/didStreams.ts';
import { handleCommand, handleCommands, lastPosition, type CommandContext } from '../handleCommand.ts';
import { didClosedOf, loadRuleContent, loadRuleDid } from './ruleContent.ts';
import { loadRule } from './ruleDeletion.ts';
import { releaseLocks } from './ruleEvaluation.ts';
import { applyRule, heldBy } from './ruleInjection.ts';
import { StepBuilder } from '../stepBuilder.ts';

/**
 * The judge-repairer's work on one STUCK rule (Rucio's `repair_rule`), simplified where the
 * outcome is the same: a rule stuck for more than 14 days is suspended; otherwise files the rule
 * does not cover yet get their locks, stuck locks of files that have enough good ones are
 * released, and each other STUCK lock is set OK when its replica has arrived meanwhile, or retried
 * in place (a new transfer) once its back-off has passed and its RSE takes writes. A lock of a rule
 * with a source expression that was never retried is stuck for want of a source: it is retried as
 * soon as a source RSE holds an AVAILABLE copy, and not before. The rule's state then follows from
 * its counters.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Rules STUCK for longer than this are suspended. */
export const SUSPEND_AFTER_MS = 14 * DAY;

/** Rucio's back-off before a STUCK lock is tried again, by the age of the rule. */
export const retryBackoffMs = (rule: LiveRule, now: Date): number => {
  if (rule.record.activity === 'DebugJudge') return 0;
  if (rule.record.activity === 'Express') return 2 * HOUR;
  const age = now.getTime() - Date.parse(rule.record.createdAt);
  return age < DAY ? 2 * HOUR : age < 2 * DAY ? 4 * HOUR : age < 3 * DAY ? 6 * HOUR : 8 * HOUR;
};

/** The RSE ids a source expression selects; null without one, none when it selects nothing now. */
const sourceRsesOf = (expression: string | null, rses: readonly RseFacts[]): Set<string> | null => {
  if (expression === null) return null;
  try {
    return new Set(evaluateRseExpression(expression, rses).map((rse) => rse.id));
  } catch (error) {
    if (error instanceof RucioError) return new Set();
    throw error;
  }
};

export type RepairOutcome = Readonly<{ position: bigint | undefined; outcome: string }>;

export const repairRule = async (
  context: CommandContext,
  data: { ruleId: string; ignoreBackoff?: boolean },
  metadata: CommandMetadata,
): Promise<RepairOutcome> => {
  const state = await loadRule(context, data.ruleId);
  if (state.status !== 'Live' || state.state !== 'STUCK') return { position: undefined, outcome: 'not stuck' };
  const ruleStream = ruleStreamName(state.record.id);
  const onRule = (command: RuleCommand) => handleCommand(context, ruleDecider, ruleStream, command);
  const now = metadata.now;
  if (state.stuckAt !== null && now.getTime() - Date.parse(state.stuckAt) > SUSPEND_AFTER_MS) {
    const outcome = await onRule({
      type: 'SetRuleState',
      data: { ruleId: state.record.id, state: 'SUSPENDED', error: state.error },
      metadata,
    });
    return { position: outcome.position, outcome: 'suspended after 14 days stuck' };
  }
  let position: bigint | undefined;
  const rses = await context.ruleFacts.rses();
  let writable: Set<string>;
  try {
    const targets = targetRsesOf(state.record.rseExpression, rses, state.record.ignoreAvailability);
    writable = new Set(
      targets
        .filter((rse) => rse.properties.availability_write || state.record.ignoreAvailability)
        .map((rse) => rse.id),
    );
    const content = await loadRuleContent(context, await loadRuleDid(context, state.record), heldBy(state));
    position = (await applyRule(context, state, content, { kind: 'repair', detail: 'missing locks' }, metadata))
      .position;
  } catch (error) {
    if (!(error instanceof RucioError)) throw error;
    const reason = `${error.exceptionClass}: ${error.message}`;
    const combined = state.error && !state.error.includes(reason) ? `${state.error}|${reason}`.slice(0, 255) : reason;
    const outcome = await onRule({
      type: 'SetRuleState',
      data: { ruleId: state.record.id, state: 'STUCK', error: combined },
      metadata,
    });
    return { position: outcome.position, outcome: `still stuck: ${reason}` };
  }

  const rule = await loadRule(context, state.record.id);
  if (rule.status !== 'Live') return { position, outcome: 'gone' };
  const stuck = [...rule.locks.values()].filter((lock) => lock.state === 'STUCK');
  const good = new Map<string, number>();
  for (const lock of rule.locks.values())
    if (lock.state !== 'STUCK')
      good.set(didKey(lock.scope, lock.name), (good.get(didKey(lock.scope, lock.name)) ?? 0) + 1);
  const surplus = stuck.filter((lock) => (good.get(didKey(lock.scope, lock.name)) ?? 0) >= rule.record.copies);
  if (surplus.length > 0)
    position =
      (await releaseLocks(context, rule, surplus, [], { kind: 'repair', detail: 'surplus stuck locks' }, metadata)) ??
      position;

  const backoff = data.ignoreBackoff ? 0 : retryBackoffMs(rule, now);
  const sources = sourceRsesOf(rule.record.sourceReplicaExpression, rses);
  const arrived: HeldLock[] = [];
  const retry: HeldLock[] = [];
  for (const lock of stuck) {
    if (surplus.includes(lock)) continue;
    const replicas = (await loadFileReplicas(context, lock.scope, lock.name)).replicas;
    const replica = replicas.get(lock.rseId);
    if (replica && (replica.state === 'AVAILABLE' || replica.state === 'TEMPORARY_UNAVAILABLE')) arrived.push(lock);
    else if (sources !== null && lock.repairs === 0) {
      // A lock stuck for want of a source is retried once a source holds the file, back-off or not (Rucio's repair).
      const sourceFound = [...replicas].some(([rseId, copy]) => sources.has(rseId) && copy.state === 'AVAILABLE');
      if (sourceFound && writable.has(lock.rseId)) retry.push(lock);
    } else if (now.getTime() - Date.parse(lock.since) >= backoff && writable.has(lock.rseId)) retry.push(lock);
  }
  if (arrived.length > 0 || retry.length > 0) {
    const step = new StepBuilder(metadata);
    for (const lock of arrived) {
      step.onDid(lock.scope, lock.name, {
        type: 'ChangeReplicaLocks',
        data: {
          scope: lock.scope,
          name: lock.name,
          rse: lock.rse,
          rseId: lock.rseId,
          locks: { [rule.record.id]: 'OK' },
        },
        metadata,
      });
    }
    const stagingAreas = new Set(rses.filter((rse) => rse.properties.staging_area).map((rse) => rse.id));
    const usePreparer = settingValue((await loadConfig(context)).sections, SETTINGS.conveyorUsePreparer);
    step.retryLocks(
      rule.record,
      retry.map((lock) => ({ ...lock, stagingArea: stagingAreas.has(lock.rseId) })),
      usePreparer ? 'PREPARING' : 'QUEUED',
    );
    const changes = [
      ...arrived.map((lock) => ({ scope: lock.scope, name: lock.name, rseId: lock.rseId, state: 'OK' as const })),
      ...retry.map((lock) => ({
        scope: lock.scope,
        name: lock.name,
        rseId: lock.rseId,
        state: 'REPLICATING' as const,
      })),
    ];
    const didClosed = await didClosedOf(context, rule.record);
    step.onRule(rule.record.id, () => [
      {
        type: 'ChangeLocks',
        data: { ruleId: rule.record.id, locks: changes, cause: { kind: 'repair' }, error: null, didClosed },
        metadata,
      },
    ]);
    position = lastPosition(await handleCommands(context, step.decisions(), { metadata })) ?? position;
  }
  position =
    (
      await onRule({
        type: 'RecountRule',
        data: { ruleId: rule.record.id, didClosed: await didClosedOf(context, rule.record) },
        metadata,
      })
    ).position ?? position;
  return { position, outcome: `${arrived.length} arrived, ${retry.length} retried, ${surplus.length} released` };
};
