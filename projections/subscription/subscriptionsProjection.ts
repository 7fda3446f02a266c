import { didKey } from '../../domain/did/did.ts';
import type { RuleEvent } from '../../domain/rule/rule.ts';
import type {
  RetroactiveCursor,
  SubscriptionEvent,
  SubscriptionState,
} from '../../domain/subscription/subscription.ts';
import type { DryRunRule, SubscriptionDryRunEvent } from '../../domain/subscription/subscriptionDryRun.ts';
import type { SubscriptionFilter } from '../../domain/subscription/subscriptionFilter.ts';
import type { SubscriptionRuleTemplate } from '../../domain/subscription/subscriptionRules.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { EventsOf, Projected, Projection } from '../projection.ts';
import type { ProjectionContext } from '../runtime/projectionContext.ts';

/**
 * The subscriptions read models: one document per subscription with Rucio's column names
 * (`subscriptions`), the position of the last change to any subscription (`subscription_changes`,
 * which tells the transmogrifier's index when to rebuild), and what dry-run subscriptions would
 * have made (`subscription_dry_runs`). `last_processed` is when the subscription last gave a DID
 * its rules (or recorded a dry run): Rucio stamps it on every cycle, which an event log would pay
 * for with an event per subscription per minute.
 */

export type SubscriptionDocument = Projected<{
  id: string;
  name: string;
  account: string;
  filter: SubscriptionFilter;
  replication_rules: readonly SubscriptionRuleTemplate[];
  policyid: number;
  state: SubscriptionState;
  last_processed: string | null;
  lifetime: string | null;
  comments: string | null;
  retroactive: boolean;
  dry_run: boolean;
  expired_at: string | null;
  created_at: string;
  updated_at: string;
  /** The retroactive pass still has existing DIDs to go through, from after `retroactive_after`. */
  retroactive_pending: boolean;
  retroactive_after: RetroactiveCursor | null;
}>;

export type SubscriptionChangesDocument = Projected<{ position: number }>;

export type DryRunDocument = Projected<{
  subscription_id: string;
  subscription_name: string;
  account: string;
  scope: string;
  name: string;
  did_type: string;
  rules: readonly DryRunRule[];
  created_at: string;
  position: number;
}>;

export const subscriptionsCollection: CollectionSpec = {
  name: 'subscriptions',
  indexes: [{ fields: ['account', 'name'], unique: true }, { fields: ['name'] }, { fields: ['state'] }],
};
export const subscriptionChangesCollection: CollectionSpec = { name: 'subscription_changes', indexes: [] };
export const subscriptionDryRunsCollection: CollectionSpec = {
  name: 'subscription_dry_runs',
  indexes: [{ fields: ['position'] }, { fields: ['subscription_id', 'position'] }],
};

/** The one document of `subscription_changes`. */
export const SUBSCRIPTION_CHANGES_ID = 'subscriptions';

type HandledEvent = SubscriptionEvent | SubscriptionDryRunEvent | EventsOf<RuleEvent, 'RuleAdded'>;

const subscriptionDocuments = (context: ProjectionContext) =>
  context.collection<SubscriptionDocument>(subscriptionsCollection);

/** `last_processed` moves forward only. */
const processedAt = (document: SubscriptionDocument | null, at: string): SubscriptionDocument | undefined =>
  document && (document.last_processed === null || document.last_processed < at)
    ? { ...document, last_processed: at }
    : undefined;

const applySubscriptionEvent = async (event: SubscriptionEvent, context: ProjectionContext): Promise<void> => {
  const documents = subscriptionDocuments(context);
  if (event.type === 'SubscriptionAdded') {
    const { subscription } = event.data;
    await documents.create(subscription.id, {
      _id: subscription.id,
      id: subscription.id,
      name: subscription.name,
      account: subscription.account,
      filter: subscription.filter,
      replication_rules: subscription.replicationRules,
      policyid: subscription.priority,
      state: event.data.state,
      last_processed: null,
      lifetime: subscription.lifetime,
      comments: subscription.comments,
      retroactive: subscription.retroactive,
      dry_run: subscription.dryRun,
      expired_at: null,
      created_at: subscription.createdAt,
      updated_at: subscription.createdAt,
      retroactive_pending: subscription.retroactive,
      retroactive_after: null,
    });
  } else {
    await documents.update(event.data.id, (document) => {
      if (!document) return undefined;
      switch (event.type) {
        case 'SubscriptionUpdated': {
          const { changes } = event.data;
          const retroactive = changes.retroactive ?? document.retroactive;
          return {
            ...document,
            ...(changes.filter !== undefined ? { filter: changes.filter } : {}),
            ...(changes.replicationRules !== undefined ? { replication_rules: changes.replicationRules } : {}),
            ...(changes.comments !== undefined ? { comments: changes.comments } : {}),
            ...(changes.lifetime !== undefined ? { lifetime: changes.lifetime } : {}),
            ...(changes.priority !== undefined ? { policyid: changes.priority } : {}),
            retroactive,
            ...(retroactive && !document.retroactive ? { retroactive_pending: true, retroactive_after: null } : {}),
            state: event.data.state,
            updated_at: event.data.at,
          };
        }
        case 'SubscriptionDeactivated':
          return { ...document, state: 'INACTIVE', expired_at: event.data.at, updated_at: event.data.at };
        case 'SubscriptionRetroactiveProgressed':
          return { ...document, retroactive_after: event.data.after };
        case 'SubscriptionRetroactiveCompleted':
          return { ...document, state: event.data.state, retroactive_pending: false, updated_at: event.data.at };
      }
    });
  }
  await context
    .collection<SubscriptionChangesDocument>(subscriptionChangesCollection)
    .update(SUBSCRIPTION_CHANGES_ID, (document) => ({
      ...(document ?? { _id: SUBSCRIPTION_CHANGES_ID }),
      position: context.position,
    }));
};

export const subscriptionsProjection: Projection<HandledEvent> = {
  name: 'subscriptions',
  version: 1,
  collections: [subscriptionsCollection, subscriptionChangesCollection, subscriptionDryRunsCollection],
  handles: {
    SubscriptionAdded: true,
    SubscriptionUpdated: true,
    SubscriptionDeactivated: true,
    SubscriptionRetroactiveProgressed: true,
    SubscriptionRetroactiveCompleted: true,
    SubscriptionDryRunRecorded: true,
    RuleAdded: true,
  },
  async apply(event, context) {
    switch (event.type) {
      case 'RuleAdded': {
        const { rule } = event.data;
        if (rule.subscriptionId !== null)
          await subscriptionDocuments(context).update(rule.subscriptionId, (document) =>
            processedAt(document, rule.createdAt),
          );
        return;
      }
      case 'SubscriptionDryRunRecorded': {
        const { data } = event;
        const id = `${data.subscriptionId} ${didKey(data.scope, data.name)}`;
        await context.collection<DryRunDocument>(subscriptionDryRunsCollection).create(id, {
          _id: id,
          subscription_id: data.subscriptionId,
          subscription_name: data.subscriptionName,
          account: data.account,
          scope: data.scope,
          name: data.name,
          did_type: data.didType,
          rules: data.rules,
          created_at: data.at,
          position: context.position,
        });
        await subscriptionDocuments(context).update(data.subscriptionId, (document) => processedAt(document, data.at));
        return;
      }
      default:
        await applySubscriptionEvent(event, context);
    }
  },
};
