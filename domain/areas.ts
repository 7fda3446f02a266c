import { accountArea } from './account/accountArea.ts';
import { accountLimitArea } from './accountLimit/accountLimitArea.ts';
import { configArea } from './config/configArea.ts';
import { didArea } from './did/didArea.ts';
import { diracArea } from './dirac/diracArea.ts';
import { identityArea } from './identity/identityArea.ts';
import { lifetimeExceptionArea } from './lifetimeException/lifetimeExceptionArea.ts';
import { messageArea } from './message/messageArea.ts';
import { metaConventionArea } from './metaConvention/metaConventionArea.ts';
import { opendataArea } from './opendata/opendataArea.ts';
import { quarantineArea } from './quarantine/quarantineArea.ts';
import { replicaArea } from './replica/replicaArea.ts';
import { requestArea } from './request/requestArea.ts';
import { rseArea } from './rse/rseArea.ts';
import { ruleArea } from './rule/ruleArea.ts';
import { scopeArea } from './scope/scopeArea.ts';
import { DomainAreas } from './shared/domainArea.ts';
import { upcasterRegistry } from './shared/upcasting.ts';
import { subscriptionArea } from './subscription/subscriptionArea.ts';
import { traceArea } from './trace/traceArea.ts';

/**
 * Every area of the domain, each declared once in its own folder (`domain/<area>/<area>Area.ts`:
 * its events, their upcasters, its `/config` options, what its events concern in the audit). The
 * registries the rest of the service reads are folded from this list: every event
 * (`ALL_EVENT_TYPES`, the union `DomainEvent`), every upcaster (`eventUpcasters`), every setting
 * (`SETTINGS`, domain/config/settings.ts) and the audit's subjects. A new area is one line here.
 */
export const DOMAIN_AREAS = DomainAreas.none
  .with(accountArea)
  .with(accountLimitArea)
  .with(configArea)
  .with(identityArea)
  .with(scopeArea)
  .with(rseArea)
  .with(didArea)
  .with(metaConventionArea)
  .with(replicaArea)
  .with(quarantineArea)
  .with(ruleArea)
  .with(requestArea)
  .with(subscriptionArea)
  .with(lifetimeExceptionArea)
  .with(opendataArea)
  .with(diracArea)
  .with(traceArea)
  .with(messageArea);

/** Every event the domain records: the union of every area's events. */
export type DomainEvent = typeof DOMAIN_AREAS extends DomainAreas<infer E, infer _S> ? E : never;

/** Every event type of every area, each once (an event role reacting to events of several areas names this record). */
export const ALL_EVENT_TYPES = DOMAIN_AREAS.events;

/** Every upcaster the service applies to stored events (domain/shared/upcasting.ts). */
export const eventUpcasters = upcasterRegistry(DOMAIN_AREAS.upcasters);
