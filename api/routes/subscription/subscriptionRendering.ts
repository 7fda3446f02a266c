import { rucioDateOrNull } from '../../../domain/shared/dates.ts';
import type { LifetimeExceptionDocument } from '../../../projections/lifetimeException/lifetimeExceptionsProjection.ts';
import type { RuleStateCount } from '../../../projections/subscription/subscriptionQueries.ts';
import type {
  DryRunDocument,
  SubscriptionDocument,
} from '../../../projections/subscription/subscriptionsProjection.ts';
import { pythonJson } from '../../pythonJson.ts';

/**
 * The JSON shapes of Rucio's subscription and lifetime exception answers, from the read models
 * (dates in Rucio's format, enums by name).
 */

/**
 * A subscription as Rucio's `Subscription.to_dict()`: `filter` and `replication_rules` are the
 * JSON texts Rucio keeps in its columns (written by Python's `json.dumps`), `policyid` the
 * priority; `dry_run` is ours (Rucio does not keep it).
 */
export const subscriptionJson = (subscription: SubscriptionDocument) => ({
  id: subscription.id,
  name: subscription.name,
  filter: pythonJson(subscription.filter),
  replication_rules: pythonJson(subscription.replication_rules),
  policyid: subscription.policyid,
  state: subscription.state,
  last_processed: rucioDateOrNull(subscription.last_processed),
  account: subscription.account,
  lifetime: rucioDateOrNull(subscription.lifetime),
  comments: subscription.comments,
  retroactive: subscription.retroactive,
  dry_run: subscription.dry_run,
  expired_at: rucioDateOrNull(subscription.expired_at),
  created_at: rucioDateOrNull(subscription.created_at),
  updated_at: rucioDateOrNull(subscription.updated_at),
});

/** A line of the rule-state counts (Rucio writes the tuple as a JSON list; the specification's record is an object). */
export const ruleStateCountJson = (row: RuleStateCount) => ({
  account: row.account,
  name: row.name,
  state: row.state,
  count: row.count,
});

/** What a dry-run subscription would have made for one DID. */
export const dryRunJson = (record: DryRunDocument) => ({
  subscription_id: record.subscription_id,
  subscription_name: record.subscription_name,
  account: record.account,
  scope: record.scope,
  name: record.name,
  did_type: record.did_type,
  rules: record.rules.map((rule) => ({
    rule_id: rule.ruleId,
    account: rule.account,
    copies: rule.copies,
    rse_expression: rule.rseExpression,
    grouping: rule.grouping,
    lifetime: rule.lifetime,
    activity: rule.activity,
    split_rule: rule.split,
  })),
  created_at: rucioDateOrNull(record.created_at),
});

/** A lifetime exception row as Rucio's `list_exceptions` yields it. */
export const lifetimeExceptionJson = (row: LifetimeExceptionDocument) => ({
  id: row.id,
  scope: row.scope,
  name: row.name,
  did_type: row.did_type,
  account: row.account,
  pattern: row.pattern,
  comments: row.comments,
  state: row.state,
  created_at: rucioDateOrNull(row.created_at),
  expires_at: rucioDateOrNull(row.expires_at),
});
