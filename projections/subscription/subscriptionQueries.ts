import { isColumnValue, type DidType } from '../../domain/did/did.ts';
import { RULE_STATES, type RuleState } from '../../domain/rule/rule.ts';
import type { RetroactiveCursor, SubscriptionRecord } from '../../domain/subscription/subscription.ts';
import type { DidFacts } from '../../domain/subscription/subscriptionFilter.ts';
import { wildcardRegexSource } from '../../domain/shared/wildcards.ts';
import { didsCollection, type DidDocument } from '../did/didsProjection.ts';
import { rulesCollection, type RuleDocument } from '../rule/ruleProjection.ts';
import { scopeNames } from '../scope/scopeQueries.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import {
  SUBSCRIPTION_CHANGES_ID,
  subscriptionChangesCollection,
  subscriptionDryRunsCollection,
  subscriptionsCollection,
  type DryRunDocument,
  type SubscriptionChangesDocument,
  type SubscriptionDocument,
} from './subscriptionsProjection.ts';

/** What the subscription routes and the transmogrifier read. */

const subscriptions = (readModels: ReadModels) => readModels.collection<SubscriptionDocument>(subscriptionsCollection);

export const findSubscription = (readModels: ReadModels, id: string): Promise<SubscriptionDocument | null> =>
  subscriptions(readModels).get(id);

/**
 * Subscriptions by account (a `*` wildcard allowed, as Rucio's LIKE) and name, by account then
 * name. Either may be left out.
 */
export const listSubscriptions = (
  readModels: ReadModels,
  by: Readonly<{ account?: string; name?: string }>,
): AsyncIterable<SubscriptionDocument> => {
  const filter: Record<string, unknown> = {};
  if (by.account !== undefined)
    filter.account = by.account.includes('*') ? { $regex: wildcardRegexSource(by.account) } : by.account;
  if (by.name !== undefined) filter.name = by.name;
  return subscriptions(readModels).find(filter, { sort: { account: 1, name: 1 } });
};

/** The subscriptions the transmogrifier's index holds: those it processes. */
export const processedSubscriptions = (readModels: ReadModels): Promise<SubscriptionDocument[]> =>
  subscriptions(readModels)
    .find({ state: { $in: ['ACTIVE', 'UPDATED', 'NEW'] } })
    .toArray();

/** The position of the last change to any subscription (0 before the first). */
export const subscriptionsChangedAt = async (readModels: ReadModels): Promise<number> =>
  (await readModels.collection<SubscriptionChangesDocument>(subscriptionChangesCollection).get(SUBSCRIPTION_CHANGES_ID))
    ?.position ?? 0;

/** The subscriptions the periodic pass looks at: not INACTIVE, with a lifetime or a retroactive pass to do. */
export const subscriptionsToCheck = async (readModels: ReadModels): Promise<SubscriptionDocument[]> =>
  (
    await subscriptions(readModels)
      .find({ state: { $in: ['ACTIVE', 'UPDATED', 'NEW', 'BROKEN'] } })
      .toArray()
  ).filter((subscription) => subscription.lifetime !== null || subscription.retroactive_pending);

/** Rucio's `list_subscription_rule_states` row: a subscription's rules in one state. */
export type RuleStateCount = Readonly<{ account: string; name: string; state: RuleState; count: number }>;

/** For each subscription in turn, its rules per state (states without rules left out). */
export async function* ruleStateCounts(
  readModels: ReadModels,
  of: AsyncIterable<SubscriptionDocument>,
): AsyncGenerator<RuleStateCount> {
  const rules = readModels.collection<RuleDocument>(rulesCollection);
  for await (const subscription of of) {
    for (const state of RULE_STATES) {
      const count = await rules.count({ subscription_id: subscription.id, state });
      if (count > 0) yield { account: subscription.account, name: subscription.name, state, count };
    }
  }
}

/** What dry-run subscriptions would have made, oldest first; for one subscription when given. */
export const dryRuns = (readModels: ReadModels, subscriptionId?: string): AsyncIterable<DryRunDocument> =>
  subscriptionId === undefined
    ? readModels.collection<DryRunDocument>(subscriptionDryRunsCollection).find({}, { sort: { position: 1 } })
    : readModels
        .collection<DryRunDocument>(subscriptionDryRunsCollection)
        .find({ subscription_id: subscriptionId }, { sort: { subscription_id: 1, position: 1 } });

/** A subscription's record as its read model holds it (what the transmogrifier's index is built from). */
export const subscriptionRecordOf = (document: SubscriptionDocument): SubscriptionRecord => ({
  id: document.id,
  name: document.name,
  account: document.account,
  filter: document.filter,
  replicationRules: document.replication_rules,
  comments: document.comments,
  lifetime: document.lifetime,
  retroactive: document.retroactive,
  dryRun: document.dry_run,
  priority: document.policyid,
  createdAt: document.created_at,
});

/** Fields of a DID document that are no DID_COLUMN values. */
const NOT_COLUMNS = new Set(['_id', '_pos', 'scope', 'name', 'did_type', 'account', 'meta']);

/** A DID document as subscription filters see it (the read model keeps Rucio's column names). */
export const didFactsOfDocument = (document: DidDocument): DidFacts => ({
  scope: document.scope,
  name: document.name,
  didType: document.did_type,
  account: document.account,
  columns: Object.fromEntries(
    Object.entries(document).flatMap(([key, value]) =>
      !NOT_COLUMNS.has(key) && isColumnValue(value) ? [[key, value]] : [],
    ),
  ),
});

/**
 * The next page of a retroactive pass: datasets and containers of the scopes `scopeMatches`
 * accepts, by scope, type and name, after `after`; `last` when nothing comes after the page. Each
 * step is a keyset query on the DID read model's (scope, type, name) index.
 */
export const existingDidsAfter = async (
  readModels: ReadModels,
  options: Readonly<{
    after: RetroactiveCursor | null;
    scopeMatches: (scope: string) => boolean;
    didTypes: readonly DidType[];
    limit: number;
  }>,
): Promise<{ dids: DidDocument[]; last: boolean }> => {
  const scopes = (await scopeNames(readModels)).filter(options.scopeMatches).sort();
  const types = [...options.didTypes].filter((type) => type !== 'FILE').sort();
  const { after } = options;
  const dids: DidDocument[] = [];
  for (const scope of scopes) {
    if (after && scope < after.scope) continue;
    for (const didType of types) {
      if (after && scope === after.scope && didType < after.didType) continue;
      const name = after && scope === after.scope && didType === after.didType ? { name: { $gt: after.name } } : {};
      const page = await readModels
        .collection<DidDocument>(didsCollection)
        .find(
          { scope, did_type: didType, ...name },
          { sort: { scope: 1, did_type: 1, name: 1 }, limit: options.limit - dids.length + 1 },
        )
        .toArray();
      for (const did of page) {
        if (dids.length === options.limit) return { dids, last: false };
        dids.push(did);
      }
    }
  }
  return { dids, last: true };
};
