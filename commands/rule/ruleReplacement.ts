import { randomInt } from 'node:crypto';
import { RULE_PERMISSIONS } from '../../domain/permission/rulePolicy.ts';
import { planRules, type PlannedRule, type RuleRequest } from '../../domain/rule/ruleCreation.ts';
import { ruleStreamName, type LiveRule, type RuleRecord } from '../../domain/rule/rule.ts';
import { ruleDecider } from '../../domain/rule/ruleDecider.ts';
import type { RuleContent } from '../../domain/rule/rulePlacement.ts';
import { UnsupportedOperation } from '../../domain/shared/errors.ts';
import { RuleReplaceFailed } from '../../domain/rule/ruleErrors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadAccount, loadCaller } from '../caller.ts';
import { handleCommands, lastPosition, type CommandContext } from '../handleCommand.ts';
import { loadRuleContent, loadRuleDid, ruleDidFacts } from './ruleContent.ts';
import { addPlannedRule, quotaFactsOf } from './ruleCreationCommands.ts';
import { loadLiveRule, planRuleDeletion, requireRulePermission } from './ruleDeletion.ts';
import { newId } from '../newId.ts';
import { StepBuilder } from '../stepBuilder.ts';

/**
 * Replacing a rule by another: `reduce_rule` (fewer copies, possibly excluding RSEs; the new rule
 * must be OK at once, then the old one is deleted, in one atomic step) and `move_rule` (the same
 * DID to a new expression; the old rule expires once the new one is OK, kept meanwhile by the
 * child link).
 */

/** The add_rule request that reproduces a rule, with some options changed. */
const requestOf = (record: RuleRecord, now: Date, changes: Partial<RuleRequest>): RuleRequest => ({
  dids: [{ scope: record.scope, name: record.name }],
  account: record.account,
  copies: record.copies,
  rseExpression: record.rseExpression,
  weight: record.weight,
  lifetime:
    record.expiresAt === null ? null : Math.max(0, Math.round((Date.parse(record.expiresAt) - now.getTime()) / 1000)),
  grouping: record.grouping,
  locked: record.locked,
  subscriptionId: record.subscriptionId,
  sourceReplicaExpression: record.sourceReplicaExpression,
  activity: record.activity,
  notification: record.notification,
  purgeReplicas: record.purgeReplicas,
  ignoreAvailability: record.ignoreAvailability,
  ignoreAccountLimit: record.ignoreAccountLimit,
  comment: record.comments,
  askApproval: false,
  asynchronous: false,
  delayInjection: null,
  priority: record.priority,
  splitContainer: false,
  meta: record.meta,
  ...changes,
});

/** Plans one replacement rule on the old rule's DID, with its content (never injected later). */
const planReplacement = async (
  context: CommandContext,
  old: LiveRule,
  request: RuleRequest,
  metadata: CommandMetadata,
  caller: string,
): Promise<{ plan: PlannedRule; content: RuleContent }> => {
  const rses = await context.ruleFacts.rses();
  const owner = await loadAccount(context, request.account);
  const quota = await quotaFactsOf(context, request.account, owner.status === 'Absent' ? {} : owner.attributes, rses);
  const ruleDid = await loadRuleDid(context, old.record);
  const content = await loadRuleContent(context, ruleDid);
  const [plan] = planRules(request, {
    rses,
    quota,
    dids: [ruleDidFacts(ruleDid, content)],
    ruleIds: [newId()],
    now: metadata.now,
    seed: randomInt(2 ** 31),
    requestedBy: caller,
  });
  return { plan: plan!, content };
};

/** Adds the replacement to the step, placed now; with `mustBeOk`, refused unless every lock is OK at once. */
const addReplacement = async (
  context: CommandContext,
  step: StepBuilder,
  plan: PlannedRule,
  content: RuleContent,
  metadata: CommandMetadata,
  mustBeOk: boolean,
): Promise<void> =>
  addPlannedRule(context, step, plan, { rses: await context.ruleFacts.rses(), content }, metadata, {
    state: null,
    whenDecided: (locks) => {
      if (mustBeOk && locks.some((lock) => lock.state !== 'OK'))
        throw new RuleReplaceFailed('The new rule could not be fulfilled at once: its replicas are not all available.');
    },
  });

export const reduceRule = async (
  context: CommandContext,
  data: { ruleId: string; copies: number; excludeExpression: string | null },
  metadata: CommandMetadata,
): Promise<{ ruleIds: string[]; position: bigint | undefined }> => {
  const caller = await loadCaller(context, metadata.account);
  requireRulePermission(caller, RULE_PERMISSIONS.reduceRule(caller), 'reduce this replication rule.');
  const old = await loadLiveRule(context, data.ruleId);
  if (data.copies >= old.record.copies)
    throw new RuleReplaceFailed('Copies of the new rule must be smaller than the old rule.');
  if (old.state !== 'OK') throw new RuleReplaceFailed('The source rule must be OK.');
  const rseExpression = data.excludeExpression
    ? `(${old.record.rseExpression})\\(${data.excludeExpression})`
    : old.record.rseExpression;
  const { plan, content } = await planReplacement(
    context,
    old,
    requestOf(old.record, metadata.now, { copies: data.copies, rseExpression }),
    metadata,
    caller.account,
  );
  const step = new StepBuilder(metadata);
  await addReplacement(context, step, plan, content, metadata, true);
  await planRuleDeletion(
    context,
    step,
    old,
    {
      purgeReplicas: null,
      cause: { kind: 'deletion', detail: `reduced to rule ${plan.record.id}` },
      ignoreLock: true,
      deleteParent: true,
    },
    metadata,
  );
  return {
    ruleIds: [plan.record.id],
    position: lastPosition(await handleCommands(context, step.decisions(), { metadata })),
  };
};

/** Options of `move_rule`'s override: add_rule's, but never the DIDs. */
export type MoveOverride = Partial<Omit<RuleRequest, 'dids'>>;

export const moveRule = async (
  context: CommandContext,
  data: { ruleId: string; rseExpression: string; override: MoveOverride & { dids?: unknown } },
  metadata: CommandMetadata,
): Promise<{ ruleIds: string[]; position: bigint | undefined }> => {
  const caller = await loadCaller(context, metadata.account);
  requireRulePermission(caller, RULE_PERMISSIONS.moveRule(caller), 'move this replication rule.');
  const { dids, ...override } = data.override;
  if (dids !== undefined) throw new UnsupportedOperation('The override of a move may not change the DIDs of the rule.');
  const old = await loadLiveRule(context, data.ruleId);
  if (old.childRuleId !== null) throw new RuleReplaceFailed('The rule must not have a child rule.');
  const { plan, content } = await planReplacement(
    context,
    old,
    requestOf(old.record, metadata.now, { ...override, rseExpression: data.rseExpression }),
    metadata,
    caller.account,
  );
  const step = new StepBuilder(metadata);
  await addReplacement(context, step, plan, content, metadata, false);
  // The old rule expires now; while its child is not OK the link keeps the cleaner away from it.
  step.onRule(old.record.id, (decided) => {
    const child = decided.stateOf(ruleDecider, ruleStreamName(plan.record.id));
    const childOk = child?.status === 'Live' && child.state === 'OK';
    return [
      {
        type: 'UpdateRuleOptions',
        data: {
          ruleId: old.record.id,
          changes: { expiresAt: metadata.now.toISOString(), ...(childOk ? {} : { childRuleId: plan.record.id }) },
        },
        metadata,
      },
    ];
  });
  return {
    ruleIds: [plan.record.id],
    position: lastPosition(await handleCommands(context, step.decisions(), { metadata })),
  };
};
