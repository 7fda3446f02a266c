/**
 * Events in words a person reads: "10,000 locks created on POSIX_B for user.jdoe", never
 * `RuleLocksCreated … datasetLocks: 1`. Each known type has a sentence built from its data; a type
 * without one is named in words ("rse qos policy added") with the subject it concerns. The stored
 * event itself (type, stream, JSON) stays one click away in the timeline (timeline.js).
 */

/** @param {number} count @param {string} one @param {string} [many] */
export const plural = (count, one, many = `${one}s`) => `${count.toLocaleString('en')} ${count === 1 ? one : many}`;

/** @param {any} data */
const didOf = (data) =>
  data && typeof data.scope === 'string' && typeof data.name === 'string' ? `${data.scope}:${data.name}` : undefined;

/** The distinct values of a field over a list, as "A, B and 3 more". @param {any[]} items @param {string} field */
const namesIn = (items, field) => {
  const names = [...new Set((items ?? []).map((item) => item?.[field]).filter(Boolean))];
  if (names.length <= 3) return names.join(', ');
  return `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`;
};

/** @param {any[] | undefined} items */
const count = (items) => (Array.isArray(items) ? items.length : 0);

/** A cause as words: "while creating the rule", "after a transfer", … @param {any} cause */
const because = (cause) => {
  const kinds = /** @type {Record<string, string>} */ ({
    creation: 'at creation',
    injection: 'by the injector',
    attach: 'as files were attached',
    detach: 'as files were detached',
    transfer: 'after transfers',
    repair: 'by the repairer',
    update: 'by an update',
    deletion: 'as the rule was deleted',
    recovery: 'by a recovery',
  });
  return cause?.kind ? ` ${kinds[cause.kind] ?? cause.kind}` : '';
};

/** "the rule of user.jdoe on user.jdoe:ds1" @param {any} data */
const ruleOf = (data) => `${didOf(data) ?? 'its DID'}${data.account ? ` for ${data.account}` : ''}`;

/** @param {any} data @param {string} verb */
const lockWords = (data, verb) => {
  const locks = count(data.locks);
  const rses = namesIn(data.locks, 'rse');
  const datasets = count(data.datasetLocks);
  return `${plural(locks, 'lock')} ${verb}${rses ? ` on ${rses}` : ''} for ${data.account ?? 'its owner'}${
    datasets > 0 ? ` (and ${plural(datasets, 'dataset lock')})` : ''
  }${because(data.cause)}`;
};

/** @param {any} data */
const requestsOf = (data) => (Array.isArray(data.requests) ? data.requests : []);

/** @param {any} data @param {string} what */
const transfers = (data, what) => {
  const requests = requestsOf(data);
  const to =
    namesIn(requests, 'destRse') ||
    namesIn(
      requests.map((/** @type {any} */ item) => item.request),
      'destRse',
    );
  return `${plural(requests.length, 'transfer')} ${what}${to ? ` to ${to}` : ''}`;
};

/** @param {any} value */
const shortValue = (value) => (typeof value === 'object' ? JSON.stringify(value) : String(value));

/** @type {Record<string, (data: any) => string>} */
const SENTENCES = {
  // Data identifiers
  DidCreated: (data) =>
    `${String(data.didType ?? 'DID').toLowerCase()} ${didOf(data) ?? ''} created by ${data.account ?? '?'}${
      count(data.replicas) > 0 ? ` with a replica on ${namesIn(data.replicas, 'rse')}` : ''
    }`,
  DidsAttached: (data) =>
    `${plural(count(data.children), 'DID')} attached to ${didOf(data)}${data.totals?.length !== undefined ? ` (now ${plural(data.totals.length, 'file')})` : ''}`,
  DidsDetached: (data) => `${plural(count(data.children), 'DID')} detached from ${didOf(data)}`,
  DidClosed: (data) => `${didOf(data)} closed`,
  DidReopened: (data) => `${didOf(data)} reopened`,
  DidMetadataSet: (data) =>
    `metadata of ${didOf(data)} set: ${Object.entries({ ...(data.columns ?? {}), ...(data.json ?? {}) })
      .slice(0, 4)
      .map(([key, value]) => `${key}=${shortValue(value)}`)
      .join(', ')}`,
  DidMetadataKeyDeleted: (data) => `metadata key ${data.key} of ${didOf(data)} deleted`,
  DidRuleAttached: (data) => `rule ${data.ruleId} now keeps ${didOf(data)} on ${data.rule?.rseExpression ?? '?'}`,
  DidRuleChanged: (data) => `rule ${data.ruleId} on ${didOf(data)} changed`,
  DidRuleDetached: (data) => `rule ${data.ruleId} no longer keeps ${didOf(data)}`,
  DidErased: (data) => `${didOf(data)} erased`,
  DidFollowed: (data) => `${data.account} follows ${didOf(data)}`,
  DidUnfollowed: (data) => `${data.account} stopped following ${didOf(data)}`,
  DidAccessed: (data) => `${didOf(data)} read (${plural(data.accesses ?? 1, 'access', 'accesses')})`,
  FileAvailabilityChanged: (data) => `${didOf(data)} is ${data.availability ?? 'changed'}`,
  // Replicas
  ReplicaAdded: (data) =>
    `replica of ${didOf(data)} added on ${data.rse}${data.lock ? `, locked by rule ${data.lock.ruleId}` : ''}`,
  ReplicaLocked: (data) =>
    `replica of ${didOf(data)} on ${data.rse} locked by rule ${data.ruleId} (${data.lockState})${
      data.previousState ? `, copy requested` : ''
    }`,
  ReplicaUnlocked: (data) => `rule ${data.ruleId} released the replica of ${didOf(data)} on ${data.rse}`,
  ReplicaStateChanged: (data) =>
    `replica of ${didOf(data)} on ${data.rse}: ${data.previousState} → ${data.state}${
      Object.keys(data.locks ?? {}).length > 0 ? `, ${plural(Object.keys(data.locks).length, 'lock')} moved` : ''
    }`,
  ReplicaLocksChanged: (data) =>
    `${plural(Object.keys(data.locks ?? {}).length, 'lock')} on ${didOf(data)} at ${data.rse} retried`,
  ReplicaDeclaredBad: (data) =>
    `replica of ${didOf(data)} on ${data.rse} declared bad by ${data.account}${data.reason ? `: ${data.reason}` : ''}`,
  ReplicaDeclaredSuspicious: (data) =>
    `replica of ${didOf(data)} on ${data.rse} declared suspicious by ${data.account}${data.reason ? `: ${data.reason}` : ''}`,
  ReplicaDeclaredTemporarilyUnavailable: (data) =>
    `replica of ${didOf(data)} on ${data.rse} unavailable until ${data.expiresAt}`,
  ReplicaDeletionStarted: (data) => `${data.daemon ?? 'the reaper'} started deleting ${didOf(data)} on ${data.rse}`,
  ReplicaDeleted: (data) => `replica of ${didOf(data)} on ${data.rse} deleted (${data.reason ?? data.storage})`,
  ReplicaLost: (data) => `replica of ${didOf(data)} on ${data.rse} lost: ${data.reason}`,
  ReplicaTombstoneSet: (data) =>
    `replica of ${didOf(data)} on ${data.rse} ${data.tombstone ? 'may be deleted' : 'kept (tombstone cleared)'}`,
  // Rules
  RuleAdded: (data) => {
    const rule = data.rule ?? {};
    return `${plural(rule.copies ?? 1, 'copy', 'copies')} of ${didOf(rule) ?? '?'} asked on ${rule.rseExpression ?? '?'} for ${rule.account ?? '?'}`;
  },
  RuleLocksCreated: (data) => lockWords(data, 'created'),
  RuleLocksRemoved: (data) => lockWords(data, 'removed'),
  RuleLocksChanged: (data) => {
    const states = namesIn(data.locks, 'state');
    return `${plural(count(data.locks), 'lock')} on ${namesIn(data.locks, 'rse') || '?'} now ${states}${because(data.cause)}`;
  },
  RuleStateChanged: (data) =>
    `rule on ${ruleOf(data)}: ${data.previousState} → ${data.state}${data.error ? ` (${data.error})` : ''}${because(data.cause)}`,
  RuleUpdated: (data) =>
    `rule on ${didOf(data)} updated: ${Object.entries(data.changes ?? {})
      .map(([key, value]) => `${key} ${value === null ? 'cleared' : `= ${shortValue(value)}`}`)
      .join(', ')}`,
  RuleApproved: (data) => `rule on ${ruleOf(data)} approved by ${data.approver}`,
  RuleDenied: (data) => `rule on ${ruleOf(data)} denied by ${data.approver}${data.reason ? `: ${data.reason}` : ''}`,
  RuleDeleted: (data) => `rule on ${ruleOf(data)} deleted${because(data.cause)}`,
  RuleNotified: (data) => `${plural(count(data.messages), 'message')} for rule on ${didOf(data)}`,
  // Transfers
  RequestQueued: (data) => transfers(data, 'queued'),
  RequestPrepared: (data) =>
    `${plural(count(data.requests), 'transfer')} given a source (${namesIn(data.requests, 'sourceRse')})`,
  RequestSourcesUnavailable: (data) =>
    `${plural(count(data.requests), 'transfer')} without a source: ${namesIn(data.requests, 'reason')}`,
  RequestReleased: (data) => `${plural(count(data.requests), 'transfer')} released to the submitter`,
  RequestSubmitting: (data) => `${plural(count(data.requests), 'transfer')} being submitted`,
  RequestSubmitted: (data) => `${plural(count(data.requests), 'transfer')} submitted`,
  RequestSubmissionFailed: (data) =>
    `${plural(count(data.requests), 'submission')} failed: ${namesIn(data.requests, 'reason')}`,
  TransferSucceeded: (data) => transfers(data, 'done'),
  TransferFailed: (data) => `${transfers(data, 'failed')}: ${namesIn(requestsOf(data), 'reason')}`,
  TransferLost: (data) => `${transfers(data, 'lost')}: ${namesIn(requestsOf(data), 'reason')}`,
  RequestArchived: (data) =>
    `${plural(count(data.requests), 'transfer')} archived (${namesIn(data.requests, 'state')})`,
  RequestCancelled: (data) => `${plural(count(data.requests), 'transfer')} cancelled`,
  // Accounts and identities
  AccountCreated: (data) =>
    `account ${data.account} created (${String(data.type ?? data.accountType ?? '').toLowerCase()})`,
  AccountSuspended: (data) => `account ${data.account} suspended`,
  AccountReactivated: (data) => `account ${data.account} active again`,
  AccountDeleted: (data) => `account ${data.account} deleted`,
  AccountEmailChanged: (data) => `email of ${data.account} changed`,
  AccountAttributeAdded: (data) => `attribute ${data.key}=${data.value} given to ${data.account}`,
  AccountAttributeRemoved: (data) => `attribute ${data.key} taken from ${data.account}`,
  AccountSessionsRevoked: (data) => `every session of ${data.account} ended`,
  LocalAccountLimitSet: (data) => `quota of ${data.account} on ${data.rse ?? data.rseId} set to ${data.bytes} bytes`,
  LocalAccountLimitRemoved: (data) => `quota of ${data.account} on ${data.rse ?? data.rseId} removed`,
  GlobalAccountLimitSet: (data) => `quota of ${data.account} over ${data.rseExpression} set to ${data.bytes} bytes`,
  GlobalAccountLimitRemoved: (data) => `quota of ${data.account} over ${data.rseExpression} removed`,
  // Storage elements
  RseCreated: (data) => `RSE ${data.rse} created`,
  RseUpdated: (data) =>
    `RSE ${data.rse} updated: ${Object.entries(data.changes ?? {})
      .map(([key, value]) => `${key} = ${shortValue(value)}`)
      .join(', ')}`,
  RseDeleted: (data) => `RSE ${data.rse} deleted`,
  RseAttributeSet: (data) => `attribute ${data.key}=${shortValue(data.value)} set on ${data.rse}`,
  RseAttributeRemoved: (data) => `attribute ${data.key} removed from ${data.rse}`,
  RseProtocolAdded: (data) => `protocol ${data.protocol?.scheme ?? ''} added to ${data.rse}`,
  RseProtocolUpdated: (data) => `protocol ${data.protocol?.scheme ?? ''} of ${data.rse} changed`,
  RseProtocolRemoved: (data) => `protocol ${data.scheme ?? ''} removed from ${data.rse}`,
  RseDistanceSet: (data) => `distance from ${data.rse} to ${data.destRse} set to ${data.distance}`,
  RseDistanceRemoved: (data) => `distance from ${data.rse} to ${data.destRse} removed`,
  RseLimitSet: (data) => `limit ${data.name} of ${data.rse} set to ${data.value}`,
  RseLimitRemoved: (data) => `limit ${data.name} of ${data.rse} removed`,
  RseUsageSet: (data) => `usage of ${data.rse} (${data.source}) recorded`,
  // Subscriptions and exceptions
  SubscriptionAdded: (data) =>
    `subscription ${data.subscription?.name ?? data.name ?? ''} of ${data.subscription?.account ?? data.account ?? '?'} added`,
  SubscriptionUpdated: (data) => `subscription ${data.name ?? data.subscriptionId ?? ''} updated`,
  SubscriptionDeactivated: (data) => `subscription ${data.name ?? data.subscriptionId ?? ''} made inactive`,
  ExceptionRequested: (data) =>
    `lifetime exception asked by ${data.exception?.account ?? '?'} for ${plural(count(data.exception?.dids), 'DID')}`,
  ExceptionApproved: (data) => `lifetime exception ${data.exceptionId ?? data.id ?? ''} approved`,
  ExceptionRejected: (data) => `lifetime exception ${data.exceptionId ?? data.id ?? ''} rejected`,
  // Configuration
  ConfigOptionSet: (data) => `option ${data.section}.${data.option} set to ${shortValue(data.value)}`,
  ConfigOptionRemoved: (data) => `option ${data.section}.${data.option} back to its default`,
  ConfigSectionRemoved: (data) => `configuration section ${data.section} removed`,
};

/** `RseQosPolicyAdded` → "rse qos policy added". @param {string} type */
export const typeInWords = (type) =>
  type
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .replace(/^rse\b/, 'RSE')
    .replace(/\bdid\b/g, 'DID');

/**
 * What an event says, in one sentence.
 * @param {{ type?: string, data?: any, error?: string }} event
 */
export const sentenceOf = (event) => {
  if (event.error) return event.error;
  const data = event.data ?? {};
  const type = event.type ?? '';
  const make = SENTENCES[type];
  if (make) {
    try {
      return make(data);
    } catch {
      // A stored shape this sentence does not know: the words of the type below.
    }
  }
  const subject = didOf(data) ?? data.rse ?? data.account ?? data.ruleId ?? '';
  return `${typeInWords(type || 'event')}${subject ? `: ${subject}` : ''}`;
};
