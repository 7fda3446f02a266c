import { ACCOUNT_EVENT_TYPES, type AccountEvent } from '../../domain/account/account.ts';
import { ACCOUNT_LIMIT_EVENT_TYPES, type AccountLimitEvent } from '../../domain/accountLimit/accountLimit.ts';
import type { ConfigEvent } from '../../domain/config/config.ts';
import { DID_EVENT_TYPES, type DidEvent } from '../../domain/did/did.ts';
import type { DomainEvent } from '../../domain/events.ts';
import type { IdentityEvent } from '../../domain/identity/identity.ts';
import { META_CONVENTION_EVENT_TYPES, type MetaConventionEvent } from '../../domain/metaConvention/metaConvention.ts';
import { QUARANTINE_EVENT_TYPES, type QuarantineEvent } from '../../domain/quarantine/quarantine.ts';
import { REPLICA_EVENT_TYPES, type ReplicaEvent } from '../../domain/replica/replica.ts';
import { REQUEST_EVENT_TYPES, type RequestEvent } from '../../domain/request/request.ts';
import { RSE_EVENT_TYPES, type RseEvent } from '../../domain/rse/rse.ts';
import { RULE_EVENT_TYPES, type RuleEvent } from '../../domain/rule/rule.ts';
import type { ScopeEvent } from '../../domain/scope/scope.ts';
import { OPENDATA_EVENT_TYPES, type OpenDataEvent } from '../../domain/opendata/opendata.ts';
import {
  OPENDATA_IDENTIFIER_EVENT_TYPES,
  type OpenDataIdentifierEvent,
} from '../../domain/opendata/opendataIdentifiers.ts';
import {
  LIFETIME_EXCEPTION_EVENT_TYPES,
  type LifetimeExceptionEvent,
} from '../../domain/lifetimeException/lifetimeException.ts';
import { TRANSFER_LIMIT_EVENT_TYPES, type TransferLimitEvent } from '../../domain/request/transferLimit.ts';
import { SUBSCRIPTION_EVENT_TYPES, type SubscriptionEvent } from '../../domain/subscription/subscription.ts';
import {
  SUBSCRIPTION_DRY_RUN_EVENT_TYPES,
  type SubscriptionDryRunEvent,
} from '../../domain/subscription/subscriptionDryRun.ts';
import {
  SUBSCRIPTION_NAMES_EVENT_TYPES,
  type SubscriptionNamesEvent,
} from '../../domain/subscription/subscriptionNames.ts';
import type { HandledTypes } from '../projection.ts';

/** Every event of every area: what the audit feed lists (the step machinery's own events are not). */
export type AuditedEvent =
  | AccountEvent
  | AccountLimitEvent
  | ConfigEvent
  | DidEvent
  | IdentityEvent
  | MetaConventionEvent
  | QuarantineEvent
  | ReplicaEvent
  | RequestEvent
  | RseEvent
  | RuleEvent
  | ScopeEvent
  | OpenDataEvent
  | OpenDataIdentifierEvent
  | SubscriptionEvent
  | SubscriptionNamesEvent
  | SubscriptionDryRunEvent
  | LifetimeExceptionEvent
  | TransferLimitEvent;

/**
 * The types the audit indexes. Checked against every event the domain declares
 * (domain/events.ts): an area whose events are left out here does not compile, and
 * test/projections/auditCoverage.test.ts names the types left out.
 */
export const AUDITED_EVENT_TYPES: HandledTypes<AuditedEvent> = {
  ...ACCOUNT_EVENT_TYPES,
  ...ACCOUNT_LIMIT_EVENT_TYPES,
  ...META_CONVENTION_EVENT_TYPES,
  ...REQUEST_EVENT_TYPES,
  ...RSE_EVENT_TYPES,
  ...DID_EVENT_TYPES,
  ...QUARANTINE_EVENT_TYPES,
  ...REPLICA_EVENT_TYPES,
  ...RULE_EVENT_TYPES,
  ConfigOptionSet: true,
  ConfigOptionRemoved: true,
  ConfigSectionRemoved: true,
  IdentityAdded: true,
  IdentityGrantedToAccount: true,
  IdentityRevokedFromAccount: true,
  ScopeAdded: true,
  ...OPENDATA_EVENT_TYPES,
  ...OPENDATA_IDENTIFIER_EVENT_TYPES,
  ...SUBSCRIPTION_EVENT_TYPES,
  ...SUBSCRIPTION_NAMES_EVENT_TYPES,
  ...SUBSCRIPTION_DRY_RUN_EVENT_TYPES,
  ...LIFETIME_EXCEPTION_EVENT_TYPES,
  ...TRANSFER_LIMIT_EVENT_TYPES,
} satisfies HandledTypes<DomainEvent>;

/**
 * What the audit indexes an event under: the DIDs, rules and RSEs it concerns, each a string
 * (`did:<scope>:<name>`, `rule:<id>`, `rse:<name>`). Neither part holds a space (Rucio's names
 * do not), so `<subject> <position>` sorts a subject's events in order.
 */
export const didSubject = (scope: string, name: string): string => `did:${scope}:${name}`;
export const ruleSubject = (ruleId: string): string => `rule:${ruleId}`;
export const rseSubject = (rse: string): string => `rse:${rse}`;
export const subscriptionSubject = (id: string): string => `subscription:${id}`;

/**
 * The subject whose own stream this is (`did-<scope>:<name>`, `rule-<id>`, `rse-<name>`, as the
 * stream name helpers make them), if any. A subject's own events are read from its stream, so
 * the index holds only the events of other streams that concern it.
 */
export const streamSubject = (streamName: string): string | undefined => {
  const separator = streamName.indexOf('-');
  const category = streamName.slice(0, separator);
  return category === 'did' || category === 'rule' || category === 'rse' || category === 'subscription'
    ? `${category}:${streamName.slice(separator + 1)}`
    : undefined;
};

/**
 * The subjects of one event, from its data:
 *
 * - a DID stream's events concern their DID; attaches, detaches and erasures also each child
 *   (so a file's history shows the datasets it entered and left), as do an archive's new content
 *   and the marks it leaves on constituents and datasets; replica events also their RSE;
 *   lock events on a file's replicas, and a DID's rule records, also the rules;
 * - a rule's events concern the rule and its DID, and the RSEs and datasets its locks are on;
 * - an RSE's events concern the RSE (distances both ends), as do quarantined replicas and local
 *   account limits;
 * - a queued or cancelled transfer request concerns its file, and a queued one its rule and RSE;
 *   the intermediate hops of a multihop path their file and every RSE of the path;
 * - a subscription's events concern the subscription (its name claimed on the owner's names
 *   stream, each dry run also the DID it was made for), and a rule a subscription made concerns
 *   the subscription too, so that its history shows what it made;
 * - a lifetime exception's request concerns each of its DIDs.
 * - an open data entry's events, and those of the DOI and record id it holds, concern its DID.
 *
 * Accounts, identities, scopes, configuration, metadata conventions and transfer limits concern
 * no subject, nor do a lifetime exception's approval and rejection (found through its stream):
 * their events are found through the account that acted and their type (the feed).
 */
export const auditSubjects = (event: AuditedEvent): ReadonlySet<string> => {
  const subjects = new Set<string>();
  switch (event.type) {
    case 'DidsAttached':
    case 'DidsDetached':
    case 'DidErased':
      subjects.add(didSubject(event.data.scope, event.data.name));
      for (const child of event.data.children) subjects.add(didSubject(child.scope, child.name));
      // A file the reaper erased: the RSEs of the replicas deleted with it.
      if (event.type === 'DidErased')
        for (const deleted of event.data.replicasDeleted ?? []) subjects.add(rseSubject(deleted.rse));
      break;
    case 'ArchiveContentAdded':
      subjects.add(didSubject(event.data.scope, event.data.name));
      for (const child of event.data.constituents) subjects.add(didSubject(child.scope, child.name));
      break;
    case 'FileMarkedConstituent':
    case 'DatasetMarkedArchive':
      subjects
        .add(didSubject(event.data.scope, event.data.name))
        .add(didSubject(event.data.archive.scope, event.data.archive.name));
      break;
    case 'DidContentUpdated':
      subjects
        .add(didSubject(event.data.scope, event.data.name))
        .add(didSubject(event.data.child.scope, event.data.child.name));
      break;
    case 'DidRuleAttached':
    case 'DidRuleChanged':
    case 'DidRuleDetached':
      subjects.add(didSubject(event.data.scope, event.data.name)).add(ruleSubject(event.data.ruleId));
      break;
    case 'DidCreated':
      // A file registered with replicas: each replica's RSE (and the rule of a lock one carries).
      subjects.add(didSubject(event.data.scope, event.data.name));
      for (const replica of event.data.replicas) {
        subjects.add(rseSubject(replica.rse));
        if (replica.lock) subjects.add(ruleSubject(replica.lock.ruleId));
      }
      break;
    case 'DidMetadataSet':
    case 'DidMetadataKeyDeleted':
    case 'DidClosed':
    case 'DidReopened':
    case 'DidFollowed':
    case 'DidUnfollowed':
    case 'FileExpiryCleared':
    case 'DidResurrected':
    case 'FileAvailabilityChanged':
    case 'DidAccessed':
      subjects.add(didSubject(event.data.scope, event.data.name));
      break;
    case 'ReplicaLocked':
    case 'ReplicaUnlocked':
      subjects
        .add(didSubject(event.data.scope, event.data.name))
        .add(rseSubject(event.data.rse))
        .add(ruleSubject(event.data.ruleId));
      break;
    case 'ReplicaLocksChanged':
    case 'ReplicaStateChanged':
      subjects.add(didSubject(event.data.scope, event.data.name)).add(rseSubject(event.data.rse));
      for (const ruleId of Object.keys(event.data.locks)) subjects.add(ruleSubject(ruleId));
      break;
    case 'ReplicaAdded':
      subjects.add(didSubject(event.data.scope, event.data.name)).add(rseSubject(event.data.rse));
      if (event.data.lock) subjects.add(ruleSubject(event.data.lock.ruleId));
      break;
    // A source declared suspicious by a failed transfer concerns the rule whose copy failed too.
    case 'ReplicaDeclaredSuspicious':
      subjects.add(didSubject(event.data.scope, event.data.name)).add(rseSubject(event.data.rse));
      if (event.data.transfer) subjects.add(ruleSubject(event.data.transfer.ruleId));
      break;
    case 'ReplicaDeclaredBad':
    case 'ReplicaDeclaredTemporarilyUnavailable':
    case 'ReplicaTombstoneSet':
    case 'ReplicaDeletionStarted':
    case 'ReplicaDeleted':
    case 'ReplicaAccessed':
      subjects.add(didSubject(event.data.scope, event.data.name)).add(rseSubject(event.data.rse));
      break;
    case 'ReplicaLost':
      subjects.add(didSubject(event.data.scope, event.data.name)).add(rseSubject(event.data.rse));
      for (const ruleId of Object.keys(event.data.locks)) subjects.add(ruleSubject(ruleId));
      for (const dataset of event.data.datasets) subjects.add(didSubject(dataset.scope, dataset.name));
      break;
    case 'RuleAdded':
      subjects.add(ruleSubject(event.data.rule.id)).add(didSubject(event.data.rule.scope, event.data.rule.name));
      for (const rse of event.data.targetRses) subjects.add(rseSubject(rse));
      if (event.data.rule.subscriptionId) subjects.add(subscriptionSubject(event.data.rule.subscriptionId));
      break;
    case 'RuleLocksCreated':
    case 'RuleLocksRemoved':
      subjects.add(ruleSubject(event.data.ruleId)).add(didSubject(event.data.scope, event.data.name));
      for (const lock of event.data.locks) subjects.add(rseSubject(lock.rse));
      for (const lock of event.data.datasetLocks)
        subjects.add(rseSubject(lock.rse)).add(didSubject(lock.scope, lock.name));
      break;
    case 'RuleLocksChanged':
      subjects.add(ruleSubject(event.data.ruleId)).add(didSubject(event.data.scope, event.data.name));
      for (const lock of event.data.locks) subjects.add(rseSubject(lock.rse));
      break;
    case 'RuleUpdated':
      subjects.add(ruleSubject(event.data.ruleId)).add(didSubject(event.data.scope, event.data.name));
      if (event.data.changes.childRuleId) subjects.add(ruleSubject(event.data.changes.childRuleId));
      for (const moved of event.data.movedUsage ?? []) subjects.add(rseSubject(moved.rse));
      break;
    case 'RuleStateChanged':
    case 'RuleApproved':
    case 'RuleDenied':
    case 'RuleDeleted':
    case 'RuleNotified':
      subjects.add(ruleSubject(event.data.ruleId)).add(didSubject(event.data.scope, event.data.name));
      break;
    case 'RseDistanceSet':
    case 'RseDistanceRemoved':
      subjects.add(rseSubject(event.data.rse)).add(rseSubject(event.data.destRse));
      break;
    case 'RseCreated':
    case 'RseUpdated':
    case 'RseDeleted':
    case 'RseAttributeSet':
    case 'RseAttributeRemoved':
    case 'RseProtocolAdded':
    case 'RseProtocolUpdated':
    case 'RseProtocolRemoved':
    case 'RseUsageSet':
    case 'RseLimitSet':
    case 'RseLimitRemoved':
    case 'RseQosPolicyAdded':
    case 'RseQosPolicyRemoved':
    case 'ReplicasQuarantined':
    case 'QuarantinedReplicasRemoved':
    case 'LocalAccountLimitSet':
    case 'LocalAccountLimitRemoved':
      subjects.add(rseSubject(event.data.rse));
      break;
    // A batch of requests concerns each request's file; a queued one also its rule and RSE.
    case 'RequestQueued':
      for (const { request } of event.data.requests)
        subjects
          .add(didSubject(request.scope, request.name))
          .add(ruleSubject(request.ruleId))
          .add(rseSubject(request.destRse));
      break;
    case 'RequestCancelled':
      for (const request of event.data.requests) subjects.add(didSubject(request.scope, request.name));
      break;
    // A multihop path concerns its file and every RSE it passes through.
    case 'RequestHopsQueued':
      for (const { hops, path } of event.data.paths) {
        for (const hop of hops) subjects.add(didSubject(hop.scope, hop.name));
        for (const rse of path) subjects.add(rseSubject(rse));
      }
      break;
    // An open data entry, and the DOI or record id it takes or gives up, concern its DID.
    case 'OpenDataDidAdded':
    case 'OpenDataDidStateChanged':
    case 'OpenDataDidMetaSet':
    case 'OpenDataDidDoiSet':
    case 'OpenDataDidRecordIdSet':
    case 'OpenDataDidDeleted':
    case 'OpenDataIdentifierClaimed':
    case 'OpenDataIdentifierReleased':
      subjects.add(didSubject(event.data.scope, event.data.name));
      break;
    case 'SubscriptionAdded':
      subjects.add(subscriptionSubject(event.data.subscription.id));
      break;
    case 'SubscriptionUpdated':
    case 'SubscriptionDeactivated':
    case 'SubscriptionRetroactiveProgressed':
    case 'SubscriptionRetroactiveCompleted':
      subjects.add(subscriptionSubject(event.data.id));
      break;
    case 'SubscriptionNameClaimed':
      subjects.add(subscriptionSubject(event.data.subscriptionId));
      break;
    case 'SubscriptionDryRunRecorded':
      subjects.add(subscriptionSubject(event.data.subscriptionId)).add(didSubject(event.data.scope, event.data.name));
      break;
    case 'ExceptionRequested':
      for (const did of event.data.exception.dids) subjects.add(didSubject(did.scope, did.name));
      break;
    default:
      break;
  }
  return subjects;
};
