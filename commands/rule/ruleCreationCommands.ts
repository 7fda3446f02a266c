import { randomInt } from 'node:crypto';
import { accountLimitsStreamName } from '../../domain/accountLimit/accountLimit.ts';
import { accountLimitsDecider } from '../../domain/accountLimit/accountLimitDecider.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { didKey } from '../../domain/did/did.ts';
import { allowOnly, isAdmin } from '../../domain/permission/policy.ts';
import { RULE_PERMISSIONS } from '../../domain/permission/rulePolicy.ts';
import { evaluateRseExpression, type RseFacts } from '../../domain/rse/rseExpression.ts';
import { INJECTION_THRESHOLD, planRules, type PlannedRule, type RuleRequest } from '../../domain/rule/ruleCreation.ts';
import type { RuleLock } from '../../domain/rule/rule.ts';
import { datasetLocksOf, type RuleContent } from '../../domain/rule/rulePlacement.ts';
import type { QuotaFacts } from '../../domain/rule/rseSelection.ts';
import { AccountNotFound, RucioError } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadAccount, loadCaller } from '../caller.ts';
import { loadConfig } from '../config/configCommands.ts';
import { handleCommands, lastPosition, loadAggregate, type CommandContext } from '../handleCommand.ts';
import { loadRuleContent, loadRuleDid, ruleDidFacts, sizeOf } from './ruleContent.ts';
import { newId } from '../newId.ts';
import { StepBuilder, type LockConditions } from '../stepBuilder.ts';

/**
 * The owner's quota facts: local and global limits from the limits stream, usage and RSE space
 * from the read models. An owner with the `admin` attribute has no quota.
 */
export const quotaFactsOf = async (
  context: CommandContext,
  account: string,
  ownerAttributes: Readonly<Record<string, string>>,
  rses: readonly RseFacts[],
): Promise<QuotaFacts> => {
  // An admin owner is held to no quota and no RSE space: the selector reads neither (three reads saved per rule).
  if (isAdmin({ account, attributes: ownerAttributes }))
    return { unlimited: true, localLimits: {}, globalLimits: [], usage: {}, space: {} };
  const limits = await loadAggregate(context, accountLimitsDecider, accountLimitsStreamName(account));
  const globalLimits = Object.entries(limits.global).map(([expression, bytes]) => {
    let rseIds: string[] = [];
    try {
      rseIds = evaluateRseExpression(expression, rses).map((rse) => rse.id);
    } catch (error) {
      // A limit whose expression selects nothing today limits nothing.
      if (!(error instanceof RucioError)) throw error;
    }
    return { expression, bytes, rseIds };
  });
  return {
    unlimited: false,
    localLimits: limits.local,
    globalLimits,
    usage: await context.ruleFacts.accountUsage(account),
    space: await context.ruleFacts.rseSpace(),
  };
};

/** How new locks are made for a rule: writability of its RSEs, its sources, new requests' state. */
export const lockConditionsOf = async (
  context: CommandContext,
  rule: Readonly<{ ignoreAvailability: boolean; sourceReplicaExpression: string | null }>,
  rses: readonly RseFacts[],
  content: RuleContent,
): Promise<LockConditions> => {
  const byId = new Map(rses.map((rse) => [rse.id, rse]));
  const sources =
    rule.sourceReplicaExpression === null
      ? null
      : new Set(evaluateRseExpression(rule.sourceReplicaExpression, rses).map((rse) => rse.id));
  const replicasByFile = new Map(
    (content.kind === 'file' ? [content.file] : content.datasets.flatMap((dataset) => dataset.files)).map((file) => [
      didKey(file.scope, file.name),
      file.replicas,
    ]),
  );
  const usePreparer = settingValue((await loadConfig(context)).sections, SETTINGS.conveyorUsePreparer);
  return {
    writable: (rseId) => rule.ignoreAvailability || byId.get(rseId)?.properties.availability_write === true,
    sourceAvailable: (lock) =>
      sources === null ||
      Object.entries(replicasByFile.get(didKey(lock.scope, lock.name)) ?? {}).some(
        ([rseId, replica]) => sources.has(rseId) && replica.state === 'AVAILABLE',
      ),
    requestState: usePreparer ? 'PREPARING' : 'QUEUED',
  };
};

/**
 * `add_rule`: one rule per DID, each with its locks, the replicas they create and the transfers
 * they queue, all in one atomic step; or in state INJECT / WAITING_APPROVAL without locks. Returns
 * the new rule ids in the order of the DIDs. `ruleIds` (one per DID) gives the ids instead of new
 * ones: a daemon derives them from what it acts on, so that doing it again makes no second rule.
 */
export const addRules = async (
  context: CommandContext,
  request: RuleRequest,
  metadata: CommandMetadata,
  options: Readonly<{ ruleIds?: readonly string[] }> = {},
): Promise<{ ruleIds: string[]; position: bigint | undefined }> => {
  const step = new StepBuilder(metadata);
  const ruleIds = await planAddRules(context, request, step, metadata, options);
  const outcomes = await handleCommands(context, step.decisions(), { metadata });
  return { ruleIds, position: lastPosition(outcomes) };
};

/**
 * Reads the facts of one `add_rule` request and adds its decisions to `step` (which the caller
 * appends, maybe with other requests' decisions: the transmogrifier makes every rule of a new DID
 * in one step). Refusals known before deciding (permissions, expressions, quotas) are thrown here;
 * the streams' own (DuplicateRule) when the step is decided. Returns the rule ids.
 */
export const planAddRules = async (
  context: CommandContext,
  request: RuleRequest,
  step: StepBuilder,
  metadata: CommandMetadata,
  options: Readonly<{
    ruleIds?: readonly string[];
    rses?: readonly RseFacts[];
    /**
     * A rule the configuration asks for (open data's `opendata.rule_*`), made for whoever's
     * change calls for it, as Rucio's core makes it: the caller's own permission is not asked.
     */
    configured?: boolean;
  }> = {},
): Promise<string[]> => {
  const caller = await loadCaller(context, metadata.account);
  if (!options.configured)
    allowOnly(RULE_PERMISSIONS.addRule(caller, request), `Account ${caller.account} can not add replication rule`);
  const owner = await loadAccount(context, request.account);
  if (owner.status !== 'ACTIVE') throw new AccountNotFound(`Account ${request.account} does not exist`);
  const rses = options.rses ?? (await context.ruleFacts.rses());
  const quota = await quotaFactsOf(context, request.account, owner.attributes, rses);

  const ruleDids = [];
  const didFacts = [];
  for (const ref of request.dids) {
    const ruleDid = await loadRuleDid(context, ref);
    const { length } = sizeOf(ruleDid);
    const later =
      request.askApproval ||
      request.asynchronous ||
      request.delayInjection !== null ||
      length * request.copies >= INJECTION_THRESHOLD ||
      (request.splitContainer && ruleDid.did.record.didType === 'CONTAINER');
    const content = later ? undefined : await loadRuleContent(context, ruleDid);
    ruleDids.push({ ruleDid, content });
    didFacts.push(ruleDidFacts(ruleDid, content));
  }
  const ruleIds = options.ruleIds ? [...options.ruleIds] : request.dids.map(() => newId());
  const plans = planRules(request, {
    rses,
    quota,
    dids: didFacts,
    ruleIds,
    now: metadata.now,
    seed: randomInt(2 ** 31),
    requestedBy: caller.account,
  });

  for (const [index, plan] of plans.entries())
    await addPlannedRule(context, step, plan, { rses, content: ruleDids[index]!.content }, metadata);
  return ruleIds;
};

/**
 * Adds a planned rule to the step: the rule attached to its DID's stream, its files locked on their
 * streams (with the transfers the locks need) when the plan places it now and its content was read,
 * and the rule's own stream recording the locks as the files decided them. The one way a planned
 * rule joins a step: add_rule, the rules of DIDs created in the same step, a replacement rule.
 * `state` replaces the plan's (a replacement is placed now, never injected later); `whenDecided`
 * sees the locks the files decided and may refuse the whole step by throwing.
 */
export const addPlannedRule = async (
  context: CommandContext,
  step: StepBuilder,
  plan: PlannedRule,
  facts: Readonly<{ rses: readonly RseFacts[]; content: RuleContent | undefined }>,
  metadata: CommandMetadata,
  options: Readonly<{
    state?: PlannedRule['state'];
    whenDecided?: (locks: readonly RuleLock[]) => void;
  }> = {},
): Promise<void> => {
  const { record } = plan;
  step.onDid(record.scope, record.name, {
    type: 'AttachRule',
    data: {
      scope: record.scope,
      name: record.name,
      ruleId: record.id,
      rule: {
        account: record.account,
        rseExpression: record.rseExpression,
        copies: record.copies,
        locked: record.locked,
      },
    },
    metadata,
  });
  const locksOf =
    plan.placement && facts.content
      ? step.lockFiles(record, plan.placement.locks, await lockConditionsOf(context, record, facts.rses, facts.content))
      : () => [];
  const datasetLocks = datasetLocksOf(plan.placement?.datasetLocks ?? []);
  step.onRule(record.id, (decided) => {
    const locks = locksOf(decided);
    options.whenDecided?.(locks);
    return [
      {
        type: 'AddRule',
        data: {
          rule: record,
          state: options.state === undefined ? plan.state : options.state,
          locks,
          datasetLocks,
          targetRses: plan.targetRses,
          autoLocked: plan.autoLocked,
          didClosed: plan.didClosed,
        },
        metadata,
      },
    ];
  });
};
