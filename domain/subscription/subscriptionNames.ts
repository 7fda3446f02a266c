import type { Decider } from '../shared/decider.ts';
import { SubscriptionDuplicate } from './subscriptionErrors.ts';
import { eventTypes, type Command, type Event } from '../shared/event.ts';

/**
 * The names of one account's subscriptions, each with its subscription's id: the stream that
 * holds Rucio's unique (account, name), so that two concurrent additions of one name cannot both
 * win (the second re-reads the stream and is refused). Also how a subscription is found by
 * account and name on the write side.
 */
export const subscriptionNamesStreamName = (account: string): string => `subscriptionnames-${account}`;

export type SubscriptionNameClaimed = Event<
  'SubscriptionNameClaimed',
  { account: string; name: string; subscriptionId: string }
>;
export type SubscriptionNamesEvent = SubscriptionNameClaimed;

export const SUBSCRIPTION_NAMES_EVENT_TYPES = eventTypes<SubscriptionNamesEvent>({ SubscriptionNameClaimed: true });

export type SubscriptionNames = Readonly<{ names: ReadonlyMap<string, string> }>;

export type ClaimSubscriptionName = Command<
  'ClaimSubscriptionName',
  { account: string; name: string; subscriptionId: string }
>;
export type SubscriptionNamesCommand = ClaimSubscriptionName;

export const evolveSubscriptionNames = (state: SubscriptionNames, event: SubscriptionNamesEvent): SubscriptionNames => {
  if (event.type !== 'SubscriptionNameClaimed') return state;
  return { names: new Map([...state.names, [event.data.name, event.data.subscriptionId]]) };
};

/** A name taken by another subscription is Rucio's SubscriptionDuplicate; claimed again by the same one, nothing. */
export const claimSubscriptionName = (
  { data }: ClaimSubscriptionName,
  state: SubscriptionNames,
): SubscriptionNamesEvent[] => {
  const holder = state.names.get(data.name);
  if (holder === data.subscriptionId) return [];
  if (holder !== undefined)
    throw new SubscriptionDuplicate(`Subscription '${data.name}' owned by '${data.account}' already exists!`);
  return [
    {
      type: 'SubscriptionNameClaimed',
      data: { account: data.account, name: data.name, subscriptionId: data.subscriptionId },
    },
  ];
};

export const subscriptionNamesDecider: Decider<SubscriptionNames, SubscriptionNamesCommand, SubscriptionNamesEvent> = {
  name: 'subscriptionNames',
  initialState: () => ({ names: new Map() }),
  evolve: evolveSubscriptionNames,
  // One command: a second one added to the union stops this line compiling until it is decided here.
  decide: (command, state) => claimSubscriptionName(command, state),
};
