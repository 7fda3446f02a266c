import type { DidRef, DidType } from '../did/did.ts';
import { evaluateRseExpression, type RseFacts } from '../rse/rseExpression.ts';
import { RucioError } from '../shared/errors.ts';
import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';
import { isProcessed, lifetimeOver, type RetroactiveCursor, type SubscriptionState } from './subscription.ts';
import type { DryRunRule } from './subscriptionDryRun.ts';
import type { DidFacts } from './subscriptionFilter.ts';
import type { IndexedSubscription } from './subscriptionIndex.ts';
import { plannedRule, subscriptionRuleId, wantsEveryRse, type PlannedRule } from './subscriptionRules.ts';

/**
 * Rucio's transmogrifier as workflows (behaviour reference §7): which rules the subscriptions give
 * a new dataset or container, the pass of a retroactive subscription over the DIDs that existed
 * before it, and the subscriptions whose lifetime is over. The rules themselves are made by the
 * rule commands (commands/subscription/subscriptionRuleCommands.ts), one `add_rule` per rule, with the
 * subscription's id on each.
 */

export type SubscribedDid = DidRef & Readonly<{ didType: DidType }>;

/** A rule to make, with the id it gets (split rules get one per RSE when made). */
export type RuleToMake = PlannedRule & Readonly<{ ruleId: string }>;

export type CreateSubscriptionRules = WorkflowOutput<
  'CreateSubscriptionRules',
  { subscriptionId: string; subscriptionName: string; did: SubscribedDid; rules: readonly RuleToMake[] }
>;
export type RecordDryRun = WorkflowOutput<
  'RecordDryRun',
  {
    subscriptionId: string;
    subscriptionName: string;
    account: string;
    did: SubscribedDid;
    rules: readonly DryRunRule[];
  }
>;
/** The DID has been seen by the transmogrifier: its `is_new` flag goes (Rucio's `set_new_dids`). */
export type MarkDidProcessed = WorkflowOutput<'MarkDidProcessed', DidRef>;

export type MatchOutput = CreateSubscriptionRules | RecordDryRun | Skipped;

export type MatchFacts = Readonly<{
  /** The RSEs that exist: a subscription whose expression selects none is skipped, `copies: "*"` counts them. */
  rses: readonly RseFacts[];
  /** The activity of rules that name none (`rules.default_activity`). */
  defaultActivity: string;
}>;

const subscribedDid = (did: DidFacts): SubscribedDid => ({ scope: did.scope, name: did.name, didType: did.didType });

const dryRunRule = (rule: RuleToMake): DryRunRule => ({
  ruleId: rule.ruleId,
  account: rule.request.account,
  copies: rule.request.copies,
  rseExpression: rule.request.rseExpression,
  grouping: rule.request.grouping,
  lifetime: rule.request.lifetime,
  activity: rule.request.activity,
  split: rule.split,
});

/**
 * What one subscription does to one DID at `now`: nothing when it is not processed, its lifetime
 * is over or its filter does not match; skipped when one of its expressions selects no RSE (as
 * Rucio drops such subscriptions from a cycle); otherwise its rules, or their record for a dry run.
 */
export const matchSubscription = (
  subscription: IndexedSubscription,
  did: DidFacts,
  now: string,
  facts: MatchFacts,
): MatchOutput[] => {
  const { record } = subscription;
  if (!isProcessed(subscription.state) || lifetimeOver(record, now) || !subscription.filter.matches(did)) return [];
  const what = `${record.account}/${record.name} on ${did.scope}:${did.name}`;
  const rules: RuleToMake[] = [];
  for (const [index, template] of record.replicationRules.entries()) {
    let selected: RseFacts[];
    try {
      selected = evaluateRseExpression(String(template.rse_expression), facts.rses);
    } catch (error) {
      if (!(error instanceof RucioError)) throw error;
      return [
        { type: 'Skipped', data: { what, reason: `rule ${index + 1}: ${error.exceptionClass}: ${error.message}` } },
      ];
    }
    const single = selected.length === 1 && selected[0]!.rse === template.rse_expression ? selected[0]! : undefined;
    if (
      wantsEveryRse(template) &&
      single &&
      !single.properties.availability_write &&
      template.ignore_availability !== true
    ) {
      // Rucio's wildcard copies skip an RSE closed for writing.
      continue;
    }
    const planned = plannedRule(template, index, record, did, {
      wildcardCopies: selected.length,
      defaultActivity: facts.defaultActivity,
      split: subscription.filter.splitRule,
    });
    rules.push({ ...planned, ruleId: subscriptionRuleId(record.id, did, index) });
  }
  if (rules.length === 0) return [];
  if (record.dryRun) {
    return [
      {
        type: 'RecordDryRun',
        data: {
          subscriptionId: record.id,
          subscriptionName: record.name,
          account: record.account,
          did: subscribedDid(did),
          rules: rules.map(dryRunRule),
        },
      },
    ];
  }
  return [
    {
      type: 'CreateSubscriptionRules',
      data: { subscriptionId: record.id, subscriptionName: record.name, did: subscribedDid(did), rules },
    },
  ];
};

/** A new DID as the transmogrifier sees it: the facts of its stream when the job runs. */
export type NewDid = Readonly<{ did: DidFacts; now: string }>;

export type TransmogrifierFacts = MatchFacts &
  Readonly<{
    /** The subscriptions the index gives for the DID's scope and type, by priority. */
    subscriptions: readonly IndexedSubscription[];
  }>;

/**
 * A new dataset or container gets the rules of every subscription that matches it, by priority,
 * and loses its `is_new` flag. Files are never matched (Rucio only clears their flag; here files
 * are never flagged).
 */
export const transmogrifier: Workflow<NewDid, TransmogrifierFacts, MatchOutput | MarkDidProcessed> = {
  name: 'transmogrifier',
  decide: ({ did, now }, facts) => {
    if (did.didType === 'FILE') return [];
    const outputs: (MatchOutput | MarkDidProcessed)[] = facts.subscriptions.flatMap((subscription) =>
      matchSubscription(subscription, did, now, facts),
    );
    if (did.columns.is_new === true)
      outputs.push({ type: 'MarkDidProcessed', data: { scope: did.scope, name: did.name } });
    return outputs;
  },
};

export type RecordRetroactiveProgress = WorkflowOutput<
  'RecordRetroactiveProgress',
  { subscriptionId: string; after: RetroactiveCursor; dids: number }
>;
export type CompleteRetroactivePass = WorkflowOutput<'CompleteRetroactivePass', { subscriptionId: string }>;

/** One page of the DIDs that existed before a retroactive subscription, in pass order. */
export type RetroactivePage = Readonly<{
  subscription: IndexedSubscription;
  dids: readonly DidFacts[];
  /** No DID comes after this page. */
  last: boolean;
  now: string;
}>;

/**
 * The pass of a retroactive subscription over existing DIDs, a page at a time: each DID of the
 * page is matched as a new one would be (files excepted), then the pass records how far it got, or
 * that it is over (a NEW subscription then becomes ACTIVE).
 */
export const retroactivePass: Workflow<
  RetroactivePage,
  MatchFacts,
  MatchOutput | RecordRetroactiveProgress | CompleteRetroactivePass
> = {
  name: 'transmogrifier-retroactive',
  decide: ({ subscription, dids, last, now }, facts) => {
    const subscriptionId = subscription.record.id;
    const outputs: (MatchOutput | RecordRetroactiveProgress | CompleteRetroactivePass)[] = dids
      .filter((did) => did.didType !== 'FILE')
      .flatMap((did) => matchSubscription(subscription, did, now, facts));
    const lastDid = dids[dids.length - 1];
    if (lastDid)
      outputs.push({
        type: 'RecordRetroactiveProgress',
        data: {
          subscriptionId,
          after: { scope: lastDid.scope, didType: lastDid.didType, name: lastDid.name },
          dids: dids.length,
        },
      });
    if (last) outputs.push({ type: 'CompleteRetroactivePass', data: { subscriptionId } });
    return outputs;
  },
};

export type ExpireSubscription = WorkflowOutput<'ExpireSubscription', { subscriptionId: string }>;
export type ContinueRetroactivePass = WorkflowOutput<'ContinueRetroactivePass', { subscriptionId: string }>;

/** A subscription as the periodic check reads it. */
export type SubscriptionStatus = Readonly<{
  id: string;
  state: SubscriptionState;
  lifetime: string | null;
  retroactivePending: boolean;
}>;

/**
 * The periodic part of Rucio's transmogrifier cycle: subscriptions past their lifetime become
 * INACTIVE; retroactive ones whose pass is not over take their next pages, by priority order of
 * the list given.
 */
export const subscriptionCycle: Workflow<
  Readonly<{ now: string }>,
  Readonly<{ subscriptions: readonly SubscriptionStatus[] }>,
  ExpireSubscription | ContinueRetroactivePass
> = {
  name: 'transmogrifier-retroactive',
  decide: ({ now }, { subscriptions }) =>
    subscriptions.flatMap((subscription): (ExpireSubscription | ContinueRetroactivePass)[] => {
      if (subscription.state === 'INACTIVE') return [];
      if (lifetimeOver(subscription, now))
        return [{ type: 'ExpireSubscription', data: { subscriptionId: subscription.id } }];
      if (subscription.retroactivePending && isProcessed(subscription.state))
        return [{ type: 'ContinueRetroactivePass', data: { subscriptionId: subscription.id } }];
      return [];
    }),
};
