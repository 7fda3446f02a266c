import { unknownCommand, type Decider } from '../shared/decider.ts';
import { SubscriptionNotFound } from './subscriptionErrors.ts';
import type { Command } from '../shared/event.ts';
import {
  evolveSubscription,
  initialSubscription,
  lifetimeOver,
  type LiveSubscription,
  type RetroactiveCursor,
  type Subscription,
  type SubscriptionChanges,
  type SubscriptionEvent,
  type SubscriptionRecord,
} from './subscription.ts';
import { keysOf } from '../shared/narrowing.ts';

/**
 * Decisions on one subscription's stream (behaviour reference §7, Rucio's core/subscription.py):
 * adding it (ACTIVE, or NEW when retroactive), updating it (every update leaves it UPDATED, which
 * the transmogrifier treats as ACTIVE; `state: "I"` makes it INACTIVE), its lifetime running out
 * (INACTIVE), and the progress of the pass over existing DIDs of a retroactive one.
 */

/** Adds a subscription; its name was claimed on the account's names stream in the same step. */
export type AddSubscription = Command<'AddSubscription', { subscription: SubscriptionRecord }>;
/** `update_subscription`: the options given (null ones left out by the caller), and whether INACTIVE was asked for. */
export type UpdateSubscription = Command<
  'UpdateSubscription',
  { id: string; account: string; name: string; changes: SubscriptionChanges; deactivate: boolean }
>;
/** The transmogrifier's check: a subscription past its lifetime becomes INACTIVE. */
export type ExpireSubscription = Command<'ExpireSubscription', { id: string }>;
/** The retroactive pass went through existing DIDs up to `after`. */
export type RecordRetroactiveProgress = Command<
  'RecordRetroactiveProgress',
  { id: string; after: RetroactiveCursor; dids: number }
>;
/** The retroactive pass has seen every existing DID. */
export type CompleteRetroactivePass = Command<'CompleteRetroactivePass', { id: string }>;

export type SubscriptionCommand =
  AddSubscription | UpdateSubscription | ExpireSubscription | RecordRetroactiveProgress | CompleteRetroactivePass;

const refOf = (subscription: LiveSubscription) => ({
  id: subscription.record.id,
  account: subscription.record.account,
  name: subscription.record.name,
});

/** A subscription id (or account and name) that names none: Rucio's SubscriptionNotFound. */
export const subscriptionNotFound = (account: string, name: string) =>
  new SubscriptionNotFound(`Subscription for account '${account}' named '${name}' not found`);

/** Adding a subscription whose id exists already changes nothing (ids are made for the request). */
export const addSubscription = ({ data }: AddSubscription, state: Subscription): SubscriptionEvent[] => {
  if (state.status !== 'Absent') return [];
  return [
    {
      type: 'SubscriptionAdded',
      data: { subscription: data.subscription, state: data.subscription.retroactive ? 'NEW' : 'ACTIVE' },
    },
  ];
};

/** The options that differ from the record: only those are recorded. */
const changedOptions = (record: SubscriptionRecord, changes: SubscriptionChanges): SubscriptionChanges => {
  const changed = { ...changes };
  for (const key of keysOf(changed)) {
    if (changed[key] === undefined || JSON.stringify(record[key]) === JSON.stringify(changed[key])) delete changed[key];
  }
  return changed;
};

/**
 * Rucio sets UPDATED on every update, options or not (which also brings an INACTIVE subscription
 * back); asked for INACTIVE, the subscription stops (after recording the options given with it).
 * An update that would change nothing (no new option, and the state it would set is the state it
 * has) appends nothing.
 */
export const updateSubscription = (
  { data, metadata }: UpdateSubscription,
  state: Subscription,
): SubscriptionEvent[] => {
  if (state.status !== 'Live') throw subscriptionNotFound(data.account, data.name);
  const changes = changedOptions(state.record, data.changes);
  const changed = Object.keys(changes).length > 0;
  const at = metadata.now.toISOString();
  const events: SubscriptionEvent[] = [];
  if (changed || (!data.deactivate && state.state !== 'UPDATED')) {
    events.push({ type: 'SubscriptionUpdated', data: { ...refOf(state), changes, state: 'UPDATED', at } });
  }
  if (data.deactivate && (changed || state.state !== 'INACTIVE')) {
    events.push({ type: 'SubscriptionDeactivated', data: { ...refOf(state), reason: 'requested', at } });
  }
  return events;
};

export const expireSubscription = (
  { data, metadata }: ExpireSubscription,
  state: Subscription,
): SubscriptionEvent[] => {
  if (state.status !== 'Live' || state.state === 'INACTIVE') return [];
  const at = metadata.now.toISOString();
  if (!lifetimeOver(state.record, at)) return [];
  return [
    {
      type: 'SubscriptionDeactivated',
      data: { id: data.id, account: state.record.account, name: state.record.name, reason: 'lifetime', at },
    },
  ];
};

/** Progress counts only while the pass runs and moves forward (a page seen again records nothing). */
export const recordRetroactiveProgress = (
  { data, metadata }: RecordRetroactiveProgress,
  state: Subscription,
): SubscriptionEvent[] => {
  if (state.status !== 'Live' || state.retroactivePass.done) return [];
  const previous = state.retroactivePass.after;
  if (previous && JSON.stringify(previous) === JSON.stringify(data.after)) return [];
  return [
    {
      type: 'SubscriptionRetroactiveProgressed',
      data: { ...refOf(state), after: data.after, dids: data.dids, at: metadata.now.toISOString() },
    },
  ];
};

/** The end of the pass: a NEW subscription becomes ACTIVE; any other keeps its state. */
export const completeRetroactivePass = (
  { metadata }: CompleteRetroactivePass,
  state: Subscription,
): SubscriptionEvent[] => {
  if (state.status !== 'Live' || state.retroactivePass.done) return [];
  return [
    {
      type: 'SubscriptionRetroactiveCompleted',
      data: { ...refOf(state), state: state.state === 'NEW' ? 'ACTIVE' : state.state, at: metadata.now.toISOString() },
    },
  ];
};

export const decideSubscription = (command: SubscriptionCommand, state: Subscription): SubscriptionEvent[] => {
  switch (command.type) {
    case 'AddSubscription':
      return addSubscription(command, state);
    case 'UpdateSubscription':
      return updateSubscription(command, state);
    case 'ExpireSubscription':
      return expireSubscription(command, state);
    case 'RecordRetroactiveProgress':
      return recordRetroactiveProgress(command, state);
    case 'CompleteRetroactivePass':
      return completeRetroactivePass(command, state);
    default:
      return unknownCommand('subscription', command);
  }
};

export const subscriptionDecider: Decider<Subscription, SubscriptionCommand, SubscriptionEvent> = {
  name: 'subscription',
  initialState: initialSubscription,
  evolve: evolveSubscription,
  decide: decideSubscription,
};
