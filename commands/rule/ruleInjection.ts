import { createHash } from 'node:crypto';
import { didKey, type DidRef } from '../../domain/did/did.ts';
import { seededRandom } from '../../domain/rule/random.ts';
import { ruleStreamName, type LiveRule, type RuleCause, type RuleRecord } from '../../domain/rule/rule.ts';
import { targetRsesOf } from '../../domain/rule/ruleCreation.ts';
import { datasetLocksOf, placeRule, type PlannedLock, type RuleContent } from '../../domain/rule/rulePlacement.ts';
import { createSelector } from '../../domain/rule/rseSelection.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import { InsufficientAccountLimit } from '../../domain/rule/ruleErrors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadAccount } from '../caller.ts';
import { handleCommand, handleCommands, lastPosition, type CommandContext } from '../handleCommand.ts';
import { didClosedOf, loadRuleContent, loadRuleDid } from './ruleContent.ts';
import { addRules, lockConditionsOf, quotaFactsOf } from './ruleCreationCommands.ts';
import { deleteRuleNow, loadRule } from './ruleDeletion.ts';
import { loadDid } from '../did/didStreams.ts';
import type { RuleRequest } from '../../domain/rule/ruleCreation.ts';
import { StepBuilder } from '../stepBuilder.ts';
import { ruleDecider } from '../../domain/rule/ruleDecider.ts';

/**
 * Applying a rule's locks after its creation: the judge-injector for rules in INJECT, and the
 * judge-evaluator for files attached below a rule. The placement is computed whole, then written
 * in steps of at most `LOCKS_PER_STEP` locks, each atomic. Each step's events derive their ids from
 * the job and the locks the step writes, and a rule knows the locks it holds: a job run again
 * after a crash places only the locks still missing and writes them, choosing the same RSEs (the
 * placement's seed comes from the rule, and held RSEs are preferred). A step is named by its locks,
 * not by its place: the run again starts its steps where the first run stopped, and a step named
 * `step-0` again would reuse the ids of the first run's first step for other locks (which the
 * event store refuses, and the rule would never finish).
 */

/** Locks written per atomic step: bounds the size of one transaction and of one event. */
export const LOCKS_PER_STEP = 5_000;

/** What names a step: a digest of the locks it writes (and whether it is the last, which may write none). */
const stepNameOf = (locks: readonly PlannedLock[], last: boolean): string => {
  const digest = createHash('sha1');
  for (const lock of locks) digest.update(`${lock.scope}\u0000${lock.name}\u0000${lock.rse.rseId}\n`);
  return `${last ? 'last-' : ''}${digest.digest('hex').slice(0, 16)}`;
};

/** A seed fixed per rule, so that a placement computed again chooses as it did before. */
const seedOf = (ruleId: string): number => createHash('sha1').update(ruleId).digest().readUInt32BE(0);

/** The held locks of a rule as placement hints: where each file and dataset is locked already. */
export const heldBy = (rule: LiveRule) => {
  const files = new Map<string, string[]>();
  for (const lock of rule.locks.values()) {
    const key = didKey(lock.scope, lock.name);
    files.set(key, [...(files.get(key) ?? []), lock.rseId]);
  }
  const datasets = new Map<string, string[]>();
  for (const lock of rule.datasetLocks.values()) {
    const key = didKey(lock.scope, lock.name);
    datasets.set(key, [...(datasets.get(key) ?? []), lock.rseId]);
  }
  return {
    lockedBy: (file: DidRef) => files.get(didKey(file.scope, file.name)) ?? [],
    datasetLockedOn: (dataset: DidRef) => datasets.get(didKey(dataset.scope, dataset.name)) ?? [],
  };
};

/**
 * Places and writes the locks a rule lacks on `content`, in steps. `cause` says why (injection,
 * attach); an injection's last step sets the rule's state from its counters, even with no lock
 * to add. Throws the selection's errors (InsufficientAccountLimit, ...) before writing anything.
 */
export const applyRule = async (
  context: CommandContext,
  rule: LiveRule,
  content: RuleContent,
  cause: RuleCause,
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; locks: number }> => {
  const record: RuleRecord = rule.record;
  const rses = await context.ruleFacts.rses();
  const owner = await loadAccount(context, record.account);
  const quota = await quotaFactsOf(context, record.account, owner.status === 'Absent' ? {} : owner.attributes, rses);
  const targets = targetRsesOf(record.rseExpression, rses, record.ignoreAvailability);
  const candidates = targets.map((rse) => ({
    rseId: rse.id,
    rse: rse.rse,
    attributes: rse.attributes,
    stagingArea: rse.properties.staging_area,
    availabilityWrite: rse.properties.availability_write,
  }));
  const selector = createSelector(
    candidates,
    record.copies,
    record.weight,
    record.ignoreAccountLimit ? { ...quota, unlimited: true } : quota,
  );
  const placement = placeRule(content, record.grouping, record.copies, selector, seededRandom(seedOf(record.id)));
  const conditions = await lockConditionsOf(context, record, rses, content);
  const didClosed = await didClosedOf(context, record);
  const chunks: PlannedLock[][] = [];
  for (let start = 0; start < placement.locks.length; start += LOCKS_PER_STEP)
    chunks.push(placement.locks.slice(start, start + LOCKS_PER_STEP));
  if (chunks.length === 0) chunks.push([]);
  let position: bigint | undefined;
  for (const [index, locks] of chunks.entries()) {
    const last = index === chunks.length - 1;
    const stepMetadata = metadata.causationId
      ? { ...metadata, causationId: `${metadata.causationId}/step-${stepNameOf(locks, last)}` }
      : metadata;
    const step = new StepBuilder(stepMetadata);
    const locksOf = step.lockFiles(record, locks, conditions);
    const datasetLocks = last ? datasetLocksOf(placement.datasetLocks) : [];
    step.onRule(record.id, (decided) => {
      const created = locksOf(decided);
      if (!last && created.length === 0) return [];
      return [
        {
          type: 'RecordLocks',
          data: {
            ruleId: record.id,
            locks: created,
            datasetLocks,
            cause: last ? cause : { ...cause, detail: `${cause.detail ?? ''} (part ${index + 1})`.trim() },
            didClosed,
            final: last,
          },
          metadata: stepMetadata,
        },
      ];
    });
    position = lastPosition(await handleCommands(context, step.decisions(), { metadata: stepMetadata })) ?? position;
  }
  return { position, locks: placement.locks.length };
};

/**
 * The judge-injector's work on one rule: a rule still in INJECT, whose delay has passed, gets its
 * locks. A selection refused for lack of quota suspends the rule, as Rucio does; other refusals
 * (no RSE left, an expression selecting nothing) leave it STUCK with the reason.
 */
export const injectRule = async (
  context: CommandContext,
  data: { ruleId: string },
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; outcome: string }> => {
  const state = await loadRule(context, data.ruleId);
  if (state.status !== 'Live' || state.state !== 'INJECT')
    return { position: undefined, outcome: 'not waiting for injection' };
  if (state.record.injectAfter !== null && state.record.injectAfter > metadata.now.toISOString())
    return { position: undefined, outcome: 'delayed' };
  // A rule about to expire is left to the cleaner (Rucio's injector skips it).
  const soon = new Date(metadata.now.getTime() + EXPIRING_SOON_MS).toISOString();
  if (state.record.expiresAt !== null && state.record.expiresAt < soon && state.childRuleId === null)
    return { position: undefined, outcome: 'expiring soon' };
  try {
    if (splits(state.record)) return await splitContainerRule(context, state, metadata);
    const ruleDid = await loadRuleDid(context, state.record);
    const content = await loadRuleContent(context, ruleDid, heldBy(state));
    const applied = await applyRule(context, state, content, { kind: 'injection' }, metadata);
    return { position: applied.position, outcome: `${applied.locks} locks` };
  } catch (error) {
    if (!(error instanceof RucioError)) throw error;
    const target = error instanceof InsufficientAccountLimit ? 'SUSPENDED' : 'STUCK';
    const outcome = await handleCommand(context, ruleDecider, ruleStreamName(data.ruleId), {
      type: 'SetRuleState',
      data: { ruleId: data.ruleId, state: target, error: `${error.exceptionClass}: ${error.message}` },
      metadata,
    });
    return { position: outcome.position, outcome: `${target.toLowerCase()}: ${error.message}` };
  }
};

/** Rules expiring sooner than this are not injected. */
const EXPIRING_SOON_MS = 5 * 60_000;

/** A container rule asked to be split (or an R2D2 request, by its name, as Rucio knows them). */
const splits = (record: RuleRecord): boolean =>
  record.didType === 'CONTAINER' && (record.splitContainer || record.name.includes('.r2d2_request.'));

/**
 * Rucio's split container: instead of its own locks, a container rule gets one asynchronous,
 * unlocked, DATASET-grouped rule per dataset below it, free of quota, with its owner, expression,
 * copies, remaining lifetime, activity, notification, comment and priority; datasets that have a
 * rule of the same owner and expression already are skipped. Then the container rule is deleted.
 * Run again after a crash, it skips the datasets it has done.
 */
export const splitContainerRule = async (
  context: CommandContext,
  rule: LiveRule,
  metadata: CommandMetadata,
): Promise<{ position: bigint | undefined; outcome: string }> => {
  const { record } = rule;
  const dids: DidRef[] = [];
  for (const dataset of await context.ruleFacts.datasetsBelow(record)) {
    const did = await loadDid(context, dataset.scope, dataset.name);
    if (did.status !== 'Live') continue;
    if (
      [...did.rules.values()].some(
        (other) => other.account === record.account && other.rseExpression === record.rseExpression,
      )
    )
      continue;
    dids.push(dataset);
  }
  const step = (suffix: string): CommandMetadata =>
    metadata.causationId ? { ...metadata, causationId: `${metadata.causationId}/${suffix}` } : metadata;
  let position: bigint | undefined;
  if (dids.length > 0) {
    const lifetime =
      record.expiresAt === null
        ? null
        : Math.max(0, Math.floor((Date.parse(record.expiresAt) - metadata.now.getTime()) / 1000));
    const request: RuleRequest = {
      dids,
      account: record.account,
      copies: record.copies,
      rseExpression: record.rseExpression,
      weight: null,
      lifetime,
      grouping: 'DATASET',
      locked: false,
      subscriptionId: null,
      sourceReplicaExpression: null,
      activity: record.activity,
      notification: record.notification,
      purgeReplicas: false,
      ignoreAvailability: record.ignoreAvailability,
      ignoreAccountLimit: true,
      comment: record.comments,
      askApproval: false,
      asynchronous: true,
      delayInjection: null,
      priority: record.priority,
      splitContainer: record.splitContainer,
      meta: null,
    };
    position = (await addRules(context, request, step('split'))).position;
  }
  const deleted = await deleteRuleNow(
    context,
    {
      ruleId: record.id,
      purgeReplicas: null,
      cause: { kind: 'deletion', detail: 'split into dataset rules' },
      ignoreLock: true,
      deleteParent: true,
    },
    step('split-done'),
  );
  return { position: deleted.position ?? position, outcome: `split into ${dids.length} dataset rules` };
};
