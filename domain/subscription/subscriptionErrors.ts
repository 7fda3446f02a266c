import { rucioErrorClass } from '../shared/errors.ts';

/** The exceptions of subscriptions. */
export const SubscriptionDuplicate = rucioErrorClass('SubscriptionDuplicate', 409);
export const SubscriptionNotFound = rucioErrorClass('SubscriptionNotFound', 404);
