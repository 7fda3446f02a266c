import { allowOnly } from '../../domain/permission/policy.ts';
import { SUBSCRIPTION_PERMISSIONS } from '../../domain/permission/subscriptionPolicy.ts';
import { AccountNotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import {
  subscriptionStreamName,
  type RetroactiveCursor,
  type SubscriptionChanges,
} from '../../domain/subscription/subscription.ts';
import { subscriptionDecider, subscriptionNotFound } from '../../domain/subscription/subscriptionDecider.ts';
import type { SubscriptionFilter } from '../../domain/subscription/subscriptionFilter.ts';
import { subscriptionNamesDecider, subscriptionNamesStreamName } from '../../domain/subscription/subscriptionNames.ts';
import type { SubscriptionRuleTemplate } from '../../domain/subscription/subscriptionRules.ts';
import { loadAccount, loadCaller } from '../caller.ts';
import {
  handleCommand,
  handleCommands,
  lastPosition,
  loadAggregate,
  onStream,
  type CommandContext,
} from '../handleCommand.ts';
import { newId } from '../newId.ts';

/**
 * Adding and updating subscriptions (admins only, as Rucio's generic policy), and the
 * transmogrifier's own changes to them. The options arrive checked by the API.
 */

const DAY_MS = 86_400_000;

/** A lifetime in days (Rucio's unit) as the moment it ends. */
const lifetimeEnd = (days: number, now: Date): string => new Date(now.getTime() + days * DAY_MS).toISOString();

export type NewSubscription = Readonly<{
  account: string;
  name: string;
  filter: SubscriptionFilter;
  replicationRules: readonly SubscriptionRuleTemplate[];
  comments: string | null;
  /** Days; null for no end. */
  lifetimeDays: number | null;
  retroactive: boolean;
  dryRun: boolean;
  priority: number;
}>;

/**
 * `add_subscription`: the owner must exist; the name is claimed on the account's names stream in
 * the same step as the subscription's creation, so a taken name is SubscriptionDuplicate and
 * nothing is written. Returns the new id.
 */
export const addSubscription = async (context: CommandContext, data: NewSubscription, metadata: CommandMetadata) => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(SUBSCRIPTION_PERMISSIONS.addSubscription(caller), `Account ${caller.account} can not add subscription.`);
  const owner = await loadAccount(context, data.account);
  if (owner.status !== 'ACTIVE') throw new AccountNotFound(`Account ${data.account} does not exist`);
  const id = newId();
  const subscription = {
    id,
    name: data.name,
    account: data.account,
    filter: data.filter,
    replicationRules: data.replicationRules,
    comments: data.comments,
    lifetime: data.lifetimeDays === null ? null : lifetimeEnd(data.lifetimeDays, metadata.now),
    retroactive: data.retroactive,
    dryRun: data.dryRun,
    priority: data.priority,
    createdAt: metadata.now.toISOString(),
  };
  const outcomes = await handleCommands(
    context,
    [
      onStream(subscriptionNamesDecider, subscriptionNamesStreamName(data.account), {
        type: 'ClaimSubscriptionName',
        data: { account: data.account, name: data.name, subscriptionId: id },
        metadata,
      }),
      onStream(
        subscriptionDecider,
        subscriptionStreamName(id),
        { type: 'AddSubscription', data: { subscription }, metadata },
        { fresh: true },
      ),
    ],
    { metadata },
  );
  return { id, position: lastPosition(outcomes) };
};

/** The options of `update_subscription` as given (absent or null ones change nothing). */
export type SubscriptionUpdate = Readonly<{
  filter?: SubscriptionFilter;
  replicationRules?: readonly SubscriptionRuleTemplate[];
  comments?: string;
  lifetimeDays?: number;
  retroactive?: boolean;
  priority?: number;
  /** `state: "I"`: the subscription stops. */
  deactivate: boolean;
}>;

/** The id of an account's subscription of that name, from the names stream; SubscriptionNotFound when none. */
export const subscriptionIdOf = async (context: CommandContext, account: string, name: string): Promise<string> => {
  const names = await loadAggregate(context, subscriptionNamesDecider, subscriptionNamesStreamName(account));
  const id = names.names.get(name);
  if (id === undefined) throw subscriptionNotFound(account, name);
  return id;
};

/** `update_subscription` of the account's subscription with that name. */
export const updateSubscription = async (
  context: CommandContext,
  data: { account: string; name: string; update: SubscriptionUpdate },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(
    SUBSCRIPTION_PERMISSIONS.updateSubscription(caller),
    `Account ${caller.account} can not update subscription.`,
  );
  const id = await subscriptionIdOf(context, data.account, data.name);
  const { update } = data;
  const changes: SubscriptionChanges = {
    ...(update.filter !== undefined ? { filter: update.filter } : {}),
    ...(update.replicationRules !== undefined ? { replicationRules: update.replicationRules } : {}),
    ...(update.comments !== undefined ? { comments: update.comments } : {}),
    ...(update.lifetimeDays !== undefined ? { lifetime: lifetimeEnd(update.lifetimeDays, metadata.now) } : {}),
    ...(update.retroactive !== undefined ? { retroactive: update.retroactive } : {}),
    ...(update.priority !== undefined ? { priority: update.priority } : {}),
  };
  const outcome = await handleCommand(context, subscriptionDecider, subscriptionStreamName(id), {
    type: 'UpdateSubscription',
    data: { id, account: data.account, name: data.name, changes, deactivate: update.deactivate },
    metadata,
  });
  return { position: outcome.position };
};

/** The transmogrifier: a subscription whose lifetime is over becomes INACTIVE (nothing when it is not over). */
export const expireSubscription = async (context: CommandContext, data: { id: string }, metadata: CommandMetadata) => {
  const outcome = await handleCommand(context, subscriptionDecider, subscriptionStreamName(data.id), {
    type: 'ExpireSubscription',
    data,
    metadata,
  });
  return { position: outcome.position, expired: outcome.events.length > 0 };
};

/** The retroactive pass records how far it got, or that it is over. */
export const recordRetroactivePass = async (
  context: CommandContext,
  data: { id: string; progress?: { after: RetroactiveCursor; dids: number }; complete: boolean },
  metadata: CommandMetadata,
) => {
  const commands = [
    ...(data.progress
      ? [{ type: 'RecordRetroactiveProgress' as const, data: { id: data.id, ...data.progress }, metadata }]
      : []),
    ...(data.complete ? [{ type: 'CompleteRetroactivePass' as const, data: { id: data.id }, metadata }] : []),
  ];
  if (commands.length === 0) return { position: undefined };
  const outcome = await handleCommand(context, subscriptionDecider, subscriptionStreamName(data.id), commands);
  return { position: outcome.position };
};
