import { createHash } from 'node:crypto';
import { didStreamName, type DidRef, type LiveDid } from '../../domain/did/did.ts';
import { didStreamDecider } from '../../domain/did/didStreamDecider.ts';
import { ruleStreamName } from '../../domain/rule/rule.ts';
import { ruleDecider } from '../../domain/rule/ruleDecider.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { chooseSplitRses } from '../../domain/subscription/splitRule.ts';
import {
  subscriptionDryRunDecider,
  subscriptionDryRunStreamName,
  type DryRunRule,
} from '../../domain/subscription/subscriptionDryRun.ts';
import type { DidFacts } from '../../domain/subscription/subscriptionFilter.ts';
import { subscriptionRuleId } from '../../domain/subscription/subscriptionRules.ts';
import type { RuleToMake, SubscribedDid } from '../../domain/subscription/transmogrifier.ts';
import { loadAccount } from '../caller.ts';
import { loadDid } from '../did/didStreams.ts';
import { handleCommand, handleCommands, loadAggregate, type CommandContext } from '../handleCommand.ts';
import { addRules, planAddRules, quotaFactsOf } from '../rule/ruleCreationCommands.ts';
import { StepBuilder } from '../stepBuilder.ts';

/**
 * What the transmogrifier does for a subscription and a DID, through the rule commands: each rule
 * is one `add_rule` with the subscription's id, under an id derived from the subscription, the DID
 * and the rule (subscriptionRuleId), so that a job run again, or a DID reached both as new and by
 * a retroactive pass, gets no second rule: a rule whose stream exists already (made, or made and
 * deleted since) is left alone. Rucio logs the errors of `add_rule` and goes on; here they are
 * reported with the rule.
 */

export type RuleOutcome = Readonly<{
  ruleId: string;
  rse: string | null;
  outcome: 'created' | 'exists' | 'covered' | 'refused';
  reason?: string;
}>;

/** Each rule its own cause: event ids derive from it, and two rules on one DID stream must not share them. */
const causedBy = (metadata: CommandMetadata, item: string): CommandMetadata =>
  metadata.causationId ? { ...metadata, causationId: `${metadata.causationId}/${item}` } : metadata;

/** A seed for the weighted choice of split RSEs, fixed by the rule so that a replay chooses alike. */
const seedOf = (text: string): number => createHash('sha1').update(text).digest().readUInt32BE(0) & 0x7fffffff;

const ruleExists = async (context: CommandContext, ruleId: string): Promise<boolean> =>
  (await loadAggregate(context, ruleDecider, ruleStreamName(ruleId))).status !== 'Absent';

/** One `add_rule` under its given id; a rule `add_rule` refuses is reported, not thrown. */
const addOne = async (
  context: CommandContext,
  rule: RuleToMake,
  ruleId: string,
  rse: string | null,
  metadata: CommandMetadata,
): Promise<RuleOutcome> => {
  if (await ruleExists(context, ruleId)) return { ruleId, rse, outcome: 'exists' };
  const request = rse === null ? rule.request : { ...rule.request, copies: 1, rseExpression: rse };
  try {
    await addRules(context, request, causedBy(metadata, ruleId), { ruleIds: [ruleId] });
    return { ruleId, rse, outcome: 'created' };
  } catch (error) {
    if (!(error instanceof RucioError)) throw error;
    return { ruleId, rse, outcome: 'refused', reason: `${error.exceptionClass}: ${error.message}` };
  }
};

/** The single RSEs the subscription's rules on the DID use already (preferred by split rules). */
const usedRses = async (
  context: CommandContext,
  subscriptionId: string,
  did: DidRef,
  index: number,
): Promise<string[]> => {
  const rses = (await context.ruleFacts.rses()).map((rse) => rse.rse);
  const used: string[] = [];
  for (const rse of rses) {
    if (await ruleExists(context, subscriptionRuleId(subscriptionId, did, index, rse))) used.push(rse);
  }
  return used;
};

const splitRule = async (
  context: CommandContext,
  subscriptionId: string,
  did: SubscribedDid,
  rule: RuleToMake,
  metadata: CommandMetadata,
): Promise<RuleOutcome[]> => {
  const owner = await loadAccount(context, rule.request.account);
  const rses = await context.ruleFacts.rses();
  const quota = await quotaFactsOf(
    context,
    rule.request.account,
    owner.status === 'Absent' ? {} : owner.attributes,
    rses,
  );
  const choice = chooseSplitRses(
    {
      rseExpression: rule.request.rseExpression,
      copies: rule.request.copies,
      weight: rule.request.weight,
      seed: seedOf(rule.ruleId),
    },
    { rses, quota, usedRses: await usedRses(context, subscriptionId, did, rule.index) },
  );
  if (choice.kind === 'covered') return [{ ruleId: rule.ruleId, rse: null, outcome: 'covered' }];
  if (choice.kind === 'impossible')
    return [{ ruleId: rule.ruleId, rse: null, outcome: 'refused', reason: choice.reason }];
  const outcomes: RuleOutcome[] = [];
  for (const rse of choice.rses)
    outcomes.push(await addOne(context, rule, subscriptionRuleId(subscriptionId, did, rule.index, rse), rse, metadata));
  return outcomes;
};

/**
 * Everything the transmogrifier does to one DID, in one atomic step when it can: the rules of
 * every matching subscription and the end of its `is_new` flag (one append instead of one per
 * rule). When the step is refused (one rule a duplicate of another on the DID, rule 11), each rule
 * is made on its own, so the others are still made and the refusal is reported with its rule.
 * Split rules, which choose their RSEs, are made afterwards, one by one.
 */
export const transmogrifyDid = async (
  context: CommandContext,
  data: Readonly<{
    did: SubscribedDid;
    subscriptions: readonly Readonly<{ subscriptionId: string; rules: readonly RuleToMake[] }>[];
    markProcessed: boolean;
  }>,
  metadata: CommandMetadata,
): Promise<RuleOutcome[]> => {
  const { did } = data;
  const outcomes: RuleOutcome[] = [];
  const step = new StepBuilder(metadata);
  const planned: RuleToMake[] = [];
  const splits: { subscriptionId: string; rule: RuleToMake }[] = [];
  const rses = data.subscriptions.length > 0 ? await context.ruleFacts.rses() : [];
  for (const { subscriptionId, rules } of data.subscriptions) {
    for (const rule of rules) {
      if (rule.split) splits.push({ subscriptionId, rule });
      else if (await ruleExists(context, rule.ruleId))
        outcomes.push({ ruleId: rule.ruleId, rse: null, outcome: 'exists' });
      else {
        try {
          await planAddRules(context, rule.request, step, metadata, { ruleIds: [rule.ruleId], rses });
          planned.push(rule);
        } catch (error) {
          if (!(error instanceof RucioError)) throw error;
          outcomes.push({
            ruleId: rule.ruleId,
            rse: null,
            outcome: 'refused',
            reason: `${error.exceptionClass}: ${error.message}`,
          });
        }
      }
    }
  }
  const state = data.markProcessed ? await loadDid(context, did.scope, did.name) : undefined;
  const flagged = state?.status === 'Live' && state.record.columns.is_new === true;
  if (flagged)
    step.onDid(did.scope, did.name, {
      type: 'CopyDidColumns',
      data: { scope: did.scope, name: did.name, columns: { is_new: null } },
      metadata,
    });
  try {
    await handleCommands(context, step.decisions(), { metadata });
    outcomes.push(...planned.map((rule): RuleOutcome => ({ ruleId: rule.ruleId, rse: null, outcome: 'created' })));
  } catch (error) {
    if (!(error instanceof RucioError)) throw error;
    for (const rule of planned) outcomes.push(await addOne(context, rule, rule.ruleId, null, metadata));
    if (flagged) await markDidProcessed(context, did, metadata);
  }
  for (const { subscriptionId, rule } of splits)
    outcomes.push(...(await splitRule(context, subscriptionId, did, rule, metadata)));
  return outcomes;
};

/** Records what a dry-run subscription would have made for the DID (once per subscription and DID). */
export const recordSubscriptionDryRun = async (
  context: CommandContext,
  data: Readonly<{
    subscriptionId: string;
    subscriptionName: string;
    account: string;
    did: SubscribedDid;
    rules: readonly DryRunRule[];
  }>,
  metadata: CommandMetadata,
) => {
  const { did } = data;
  const outcome = await handleCommand(
    context,
    subscriptionDryRunDecider,
    subscriptionDryRunStreamName(data.subscriptionId, did.scope, did.name),
    {
      type: 'RecordDryRun',
      data: {
        subscriptionId: data.subscriptionId,
        subscriptionName: data.subscriptionName,
        account: data.account,
        scope: did.scope,
        name: did.name,
        didType: did.didType,
        rules: data.rules,
      },
      metadata: causedBy(metadata, `dry-run/${data.subscriptionId}`),
    },
  );
  return { position: outcome.position };
};

/** Rucio's `set_new_dids(..., None)`: the transmogrifier has seen the DID; its `is_new` flag goes. */
export const markDidProcessed = async (context: CommandContext, did: DidRef, metadata: CommandMetadata) => {
  const state = await loadDid(context, did.scope, did.name);
  if (state.status !== 'Live' || state.record.columns.is_new !== true) return { position: undefined };
  const outcome = await handleCommand(context, didStreamDecider, didStreamName(did.scope, did.name), {
    type: 'CopyDidColumns',
    data: { scope: did.scope, name: did.name, columns: { is_new: null } },
    metadata: causedBy(metadata, 'processed'),
  });
  return { position: outcome.position };
};

/** A DID as subscription filters see it: its record's columns, with its content's totals for a collection. */
export const didFactsOf = (did: LiveDid): DidFacts => {
  const { record } = did;
  const collection = record.didType !== 'FILE';
  return {
    scope: record.scope,
    name: record.name,
    didType: record.didType,
    account: record.account,
    columns: {
      hidden: false,
      obsolete: false,
      suppressed: false,
      transient: false,
      purge_replicas: true,
      availability: record.availability,
      monotonic: record.monotonic,
      is_open: record.isOpen,
      closed_at: record.closedAt,
      expired_at: record.expiredAt,
      created_at: record.createdAt,
      md5: record.md5,
      adler32: record.adler32,
      guid: record.guid,
      bytes: collection ? did.content.totals.bytes : record.bytes,
      length: collection ? did.content.totals.length : null,
      events: collection ? did.content.totals.events : record.events,
      ...record.columns,
    },
  };
};

/** The DID's facts from its stream (the freshest there are); undefined when it is gone. */
export const loadDidFacts = async (context: CommandContext, did: DidRef): Promise<DidFacts | undefined> => {
  const state = await loadDid(context, did.scope, did.name);
  return state.status === 'Live' ? didFactsOf(state) : undefined;
};
