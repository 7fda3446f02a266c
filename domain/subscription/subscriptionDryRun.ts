import type { DidType } from '../did/did.ts';
import type { Decider } from '../shared/decider.ts';
import { eventTypes, type Command, type Event } from '../shared/event.ts';

/**
 * What a `dry_run` subscription would have done to one DID: the rules the transmogrifier would
 * have asked for, recorded instead of made. One small stream per subscription and DID, so that
 * workers recording for many DIDs at once never contend on one stream, and a job run again
 * records nothing twice.
 */
export const subscriptionDryRunStreamName = (subscriptionId: string, scope: string, name: string): string =>
  `subscriptiondryrun-${subscriptionId}:${scope}:${name}`;

/** A rule as a dry run records it: `add_rule`'s main options, with the id it would have had. */
export type DryRunRule = Readonly<{
  ruleId: string;
  account: string;
  copies: number;
  rseExpression: string;
  grouping: string;
  lifetime: number | null;
  activity: string;
  /** One rule per RSE of the expression would have been made (`split_rule`). */
  split: boolean;
}>;

export type SubscriptionDryRunRecorded = Event<
  'SubscriptionDryRunRecorded',
  {
    subscriptionId: string;
    subscriptionName: string;
    account: string;
    scope: string;
    name: string;
    didType: DidType;
    rules: readonly DryRunRule[];
    at: string;
  }
>;
export type SubscriptionDryRunEvent = SubscriptionDryRunRecorded;

export const SUBSCRIPTION_DRY_RUN_EVENT_TYPES = eventTypes<SubscriptionDryRunEvent>({
  SubscriptionDryRunRecorded: true,
});

export type SubscriptionDryRun = Readonly<{ recorded: boolean }>;

export type RecordDryRun = Command<'RecordDryRun', Omit<SubscriptionDryRunRecorded['data'], 'at'>>;

export const recordDryRun = ({ data, metadata }: RecordDryRun, state: SubscriptionDryRun): SubscriptionDryRunEvent[] =>
  state.recorded ? [] : [{ type: 'SubscriptionDryRunRecorded', data: { ...data, at: metadata.now.toISOString() } }];

export const subscriptionDryRunDecider: Decider<SubscriptionDryRun, RecordDryRun, SubscriptionDryRunEvent> = {
  name: 'subscriptionDryRun',
  initialState: () => ({ recorded: false }),
  evolve: (state, event) => (event.type === 'SubscriptionDryRunRecorded' ? { recorded: true } : state),
  // One command: a second one added to the union stops this line compiling until it is decided here.
  decide: (command, state) => recordDryRun(command, state),
};
