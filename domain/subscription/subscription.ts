import type { DidType } from '../did/did.ts';
import { eventTypes, type Event } from '../shared/event.ts';
import type { SubscriptionFilter } from './subscriptionFilter.ts';
import type { SubscriptionRuleTemplate } from './subscriptionRules.ts';

/**
 * A subscription (Rucio's `subscriptions` row, behaviour reference §7): a filter over new DIDs and
 * the replication rules every matching DID gets, owned by an account. Each subscription is an
 * aggregate with its own stream (`subscription-<id>`); the uniqueness of its name within the
 * account is decided on the account's names stream (subscriptionNames.ts).
 */

export const subscriptionStreamName = (id: string): string => `subscription-${id}`;

export const SUBSCRIPTION_STATES = ['ACTIVE', 'INACTIVE', 'NEW', 'UPDATED', 'BROKEN'] as const;
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number];

/** The letters Rucio stores, which `update_subscription` takes (`state: "I"`). */
export const SUBSCRIPTION_STATE_LETTERS: Readonly<Record<string, SubscriptionState>> = {
  A: 'ACTIVE',
  I: 'INACTIVE',
  N: 'NEW',
  U: 'UPDATED',
  B: 'BROKEN',
};

/** Rucio's default priority (`policyid`): 0 is the highest, 5 the lowest. */
export const DEFAULT_SUBSCRIPTION_PRIORITY = 3;

export type SubscriptionRecord = Readonly<{
  id: string;
  name: string;
  /** The owner: rules default to it. */
  account: string;
  filter: SubscriptionFilter;
  replicationRules: readonly SubscriptionRuleTemplate[];
  comments: string | null;
  /** When the subscription stops (ISO); null for never. */
  lifetime: string | null;
  retroactive: boolean;
  /** Only record what would be created (`GET /admin/subscriptions/dry_runs`), never create rules. */
  dryRun: boolean;
  /** Rucio's `policyid`. */
  priority: number;
  createdAt: string;
}>;

/** What `update_subscription` may change (only the changed options are recorded). */
export type SubscriptionChanges = Readonly<{
  filter?: SubscriptionFilter;
  replicationRules?: readonly SubscriptionRuleTemplate[];
  comments?: string | null;
  lifetime?: string | null;
  retroactive?: boolean;
  priority?: number;
}>;

/** Where the pass over existing DIDs of a retroactive subscription stands: the last DID it took. */
export type RetroactiveCursor = Readonly<{ scope: string; didType: DidType; name: string }>;

type SubscriptionRef = { id: string; account: string; name: string };

/** A subscription was added: ACTIVE, or NEW while a retroactive one still has existing DIDs to go through. */
export type SubscriptionAdded = Event<
  'SubscriptionAdded',
  { subscription: SubscriptionRecord; state: 'ACTIVE' | 'NEW' }
>;
/** `update_subscription`: the changed options, and the state it leaves (UPDATED, as Rucio does on every update). */
export type SubscriptionUpdated = Event<
  'SubscriptionUpdated',
  SubscriptionRef & { changes: SubscriptionChanges; state: SubscriptionState; at: string }
>;
/** INACTIVE: asked for (`state: "I"`), or its lifetime ran out. */
export type SubscriptionDeactivated = Event<
  'SubscriptionDeactivated',
  SubscriptionRef & { reason: 'requested' | 'lifetime'; at: string }
>;
/** The retroactive pass went through existing DIDs up to `after` (one page). */
export type SubscriptionRetroactiveProgressed = Event<
  'SubscriptionRetroactiveProgressed',
  SubscriptionRef & { after: RetroactiveCursor; dids: number; at: string }
>;
/** The retroactive pass has seen every existing DID; a NEW subscription becomes ACTIVE. */
export type SubscriptionRetroactiveCompleted = Event<
  'SubscriptionRetroactiveCompleted',
  SubscriptionRef & { state: SubscriptionState; at: string }
>;

export type SubscriptionEvent =
  | SubscriptionAdded
  | SubscriptionUpdated
  | SubscriptionDeactivated
  | SubscriptionRetroactiveProgressed
  | SubscriptionRetroactiveCompleted;

export const SUBSCRIPTION_EVENT_TYPES = eventTypes<SubscriptionEvent>({
  SubscriptionAdded: true,
  SubscriptionUpdated: true,
  SubscriptionDeactivated: true,
  SubscriptionRetroactiveProgressed: true,
  SubscriptionRetroactiveCompleted: true,
});

export type LiveSubscription = Readonly<{
  status: 'Live';
  record: SubscriptionRecord;
  state: SubscriptionState;
  expiredAt: string | null;
  updatedAt: string;
  /** The retroactive pass: whether it is over, and where it stands. */
  retroactivePass: Readonly<{ done: boolean; after: RetroactiveCursor | null }>;
}>;

export type Subscription = Readonly<{ status: 'Absent' }> | LiveSubscription;

export const initialSubscription = (): Subscription => ({ status: 'Absent' });

export const evolveSubscription = (state: Subscription, event: SubscriptionEvent): Subscription => {
  if (event.type === 'SubscriptionAdded') {
    const { subscription } = event.data;
    return {
      status: 'Live',
      record: subscription,
      state: event.data.state,
      expiredAt: null,
      updatedAt: subscription.createdAt,
      retroactivePass: { done: !subscription.retroactive, after: null },
    };
  }
  if (state.status !== 'Live') return state;
  switch (event.type) {
    case 'SubscriptionUpdated': {
      const retroactive = event.data.changes.retroactive ?? state.record.retroactive;
      return {
        ...state,
        record: { ...state.record, ...event.data.changes },
        state: event.data.state,
        updatedAt: event.data.at,
        // Turning `retroactive` on starts a pass over the existing DIDs.
        retroactivePass:
          retroactive && !state.record.retroactive ? { done: false, after: null } : state.retroactivePass,
      };
    }
    case 'SubscriptionDeactivated':
      return { ...state, state: 'INACTIVE', expiredAt: event.data.at, updatedAt: event.data.at };
    case 'SubscriptionRetroactiveProgressed':
      return { ...state, retroactivePass: { done: false, after: event.data.after } };
    case 'SubscriptionRetroactiveCompleted':
      return {
        ...state,
        state: event.data.state,
        updatedAt: event.data.at,
        retroactivePass: { done: true, after: state.retroactivePass.after },
      };
    default:
      return state;
  }
};

/** The states in which the transmogrifier gives a subscription's rules to new DIDs (NEW: while its retroactive pass runs). */
export const isProcessed = (state: SubscriptionState): boolean =>
  state === 'ACTIVE' || state === 'UPDATED' || state === 'NEW';

/** Whether a subscription's lifetime is over at `now`. */
export const lifetimeOver = (record: Pick<SubscriptionRecord, 'lifetime'>, now: string): boolean =>
  record.lifetime !== null && record.lifetime <= now;
