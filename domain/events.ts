import { ACCOUNT_EVENT_TYPES, type AccountEvent } from './account/account.ts';
import { ACCOUNT_LIMIT_EVENT_TYPES, type AccountLimitEvent } from './accountLimit/accountLimit.ts';
import { CONFIG_EVENT_TYPES, type ConfigEvent } from './config/config.ts';
import { DID_EVENT_TYPES, type DidEvent } from './did/did.ts';
import { IDENTITY_EVENT_TYPES, type IdentityEvent } from './identity/identity.ts';
import { LIFETIME_EXCEPTION_EVENT_TYPES, type LifetimeExceptionEvent } from './lifetimeException/lifetimeException.ts';
import { META_CONVENTION_EVENT_TYPES, type MetaConventionEvent } from './metaConvention/metaConvention.ts';
import { QUARANTINE_EVENT_TYPES, type QuarantineEvent } from './quarantine/quarantine.ts';
import { REPLICA_EVENT_TYPES, type ReplicaEvent } from './replica/replica.ts';
import { REQUEST_EVENT_TYPES, type RequestEvent } from './request/request.ts';
import { TRANSFER_LIMIT_EVENT_TYPES, type TransferLimitEvent } from './request/transferLimit.ts';
import { RSE_EVENT_TYPES, type RseEvent } from './rse/rse.ts';
import { RULE_EVENT_TYPES, type RuleEvent } from './rule/rule.ts';
import { SCOPE_EVENT_TYPES, type ScopeEvent } from './scope/scope.ts';
import { eventTypes } from './shared/event.ts';
import { SUBSCRIPTION_EVENT_TYPES, type SubscriptionEvent } from './subscription/subscription.ts';
import { SUBSCRIPTION_DRY_RUN_EVENT_TYPES, type SubscriptionDryRunEvent } from './subscription/subscriptionDryRun.ts';
import { SUBSCRIPTION_NAMES_EVENT_TYPES, type SubscriptionNamesEvent } from './subscription/subscriptionNames.ts';
import { OPENDATA_EVENT_TYPES, type OpenDataEvent } from './opendata/opendata.ts';
import { OPENDATA_IDENTIFIER_EVENT_TYPES, type OpenDataIdentifierEvent } from './opendata/opendataIdentifiers.ts';

/**
 * Every event the domain records, area by area. Each area declares its event types once, in
 * `domain/<area>/<area>.ts`, as a record checked against its union (`eventTypes`); this module
 * lists those records, so that whatever must know every event (the audit, a test that walks them
 * all) reads them here. An area added to domain/ adds its union and its record here
 * (`test/domain/events.test.ts` finds a record left out).
 */
export type DomainEvent =
  | AccountEvent
  | AccountLimitEvent
  | ConfigEvent
  | DidEvent
  | IdentityEvent
  | LifetimeExceptionEvent
  | MetaConventionEvent
  | QuarantineEvent
  | ReplicaEvent
  | RequestEvent
  | TransferLimitEvent
  | RseEvent
  | RuleEvent
  | ScopeEvent
  | SubscriptionEvent
  | SubscriptionDryRunEvent
  | SubscriptionNamesEvent
  | OpenDataEvent
  | OpenDataIdentifierEvent;

/** Each area's record of event types, keyed by the name of its union (`AccountLimitEvent`: `accountLimit`). */
export const EVENT_TYPES_BY_AREA = {
  account: ACCOUNT_EVENT_TYPES,
  accountLimit: ACCOUNT_LIMIT_EVENT_TYPES,
  config: CONFIG_EVENT_TYPES,
  did: DID_EVENT_TYPES,
  identity: IDENTITY_EVENT_TYPES,
  lifetimeException: LIFETIME_EXCEPTION_EVENT_TYPES,
  metaConvention: META_CONVENTION_EVENT_TYPES,
  quarantine: QUARANTINE_EVENT_TYPES,
  replica: REPLICA_EVENT_TYPES,
  request: REQUEST_EVENT_TYPES,
  transferLimit: TRANSFER_LIMIT_EVENT_TYPES,
  rse: RSE_EVENT_TYPES,
  rule: RULE_EVENT_TYPES,
  scope: SCOPE_EVENT_TYPES,
  subscription: SUBSCRIPTION_EVENT_TYPES,
  subscriptionDryRun: SUBSCRIPTION_DRY_RUN_EVENT_TYPES,
  subscriptionNames: SUBSCRIPTION_NAMES_EVENT_TYPES,
  openData: OPENDATA_EVENT_TYPES,
  openDataIdentifier: OPENDATA_IDENTIFIER_EVENT_TYPES,
} as const;

/** Every event type of every area, each once (an event role reacting to events of several areas names this record). */
export const ALL_EVENT_TYPES = eventTypes<DomainEvent>({
  ...ACCOUNT_EVENT_TYPES,
  ...ACCOUNT_LIMIT_EVENT_TYPES,
  ...CONFIG_EVENT_TYPES,
  ...DID_EVENT_TYPES,
  ...IDENTITY_EVENT_TYPES,
  ...LIFETIME_EXCEPTION_EVENT_TYPES,
  ...META_CONVENTION_EVENT_TYPES,
  ...QUARANTINE_EVENT_TYPES,
  ...REPLICA_EVENT_TYPES,
  ...REQUEST_EVENT_TYPES,
  ...TRANSFER_LIMIT_EVENT_TYPES,
  ...RSE_EVENT_TYPES,
  ...RULE_EVENT_TYPES,
  ...SCOPE_EVENT_TYPES,
  ...SUBSCRIPTION_EVENT_TYPES,
  ...SUBSCRIPTION_DRY_RUN_EVENT_TYPES,
  ...SUBSCRIPTION_NAMES_EVENT_TYPES,
  ...OPENDATA_EVENT_TYPES,
  ...OPENDATA_IDENTIFIER_EVENT_TYPES,
});
