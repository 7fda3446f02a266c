import { didSubject, subscriptionSubject } from '../shared/auditSubjects.ts';
import { domainArea } from '../shared/domainArea.ts';
import { eventTypes } from '../shared/event.ts';
import { SUBSCRIPTION_EVENT_TYPES, type SubscriptionEvent } from './subscription.ts';
import { SUBSCRIPTION_DRY_RUN_EVENT_TYPES, type SubscriptionDryRunEvent } from './subscriptionDryRun.ts';
import { SUBSCRIPTION_NAMES_EVENT_TYPES, type SubscriptionNamesEvent } from './subscriptionNames.ts';
import { TRANSMOGRIFIER_SETTINGS } from './transmogrifierSettings.ts';

type SubscriptionAreaEvent = SubscriptionEvent | SubscriptionNamesEvent | SubscriptionDryRunEvent;

/**
 * What a subscription's event concerns: the subscription (its name claimed on the owner's names
 * stream too), and a dry run also the DID it was made for.
 */
const subscriptionEventSubjects = (event: SubscriptionAreaEvent): string[] => {
  switch (event.type) {
    case 'SubscriptionAdded':
      return [subscriptionSubject(event.data.subscription.id)];
    case 'SubscriptionNameClaimed':
      return [subscriptionSubject(event.data.subscriptionId)];
    case 'SubscriptionDryRunRecorded':
      return [subscriptionSubject(event.data.subscriptionId), didSubject(event.data.scope, event.data.name)];
    default:
      return [subscriptionSubject(event.data.id)];
  }
};

/** Subscriptions and the transmogrifier; a subscription's own stream (`subscription-<id>`) is its history. */
export const subscriptionArea = domainArea({
  name: 'subscription',
  events: eventTypes<SubscriptionAreaEvent>({
    ...SUBSCRIPTION_EVENT_TYPES,
    ...SUBSCRIPTION_NAMES_EVENT_TYPES,
    ...SUBSCRIPTION_DRY_RUN_EVENT_TYPES,
  }),
  upcasters: [],
  settings: TRANSMOGRIFIER_SETTINGS,
  audit: { subjectStreams: 'subscription', subjectsOf: subscriptionEventSubjects },
});
