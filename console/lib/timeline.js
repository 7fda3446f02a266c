import { formatAgo, formatTime, h } from './dom.js';

/**
 * An event history as a timeline, as EventStoreDB's stream browser shows a stream: one entry per
 * event, newest or oldest first, each saying when, what, who and from which request, and opening
 * to the event as stored (JSON). Events are rendered generically: a few known types get a
 * sentence, every other (batch events with `items` included) its headline fields.
 */

/**
 * @typedef {{ position: number, stream?: string, revision?: number, type?: string, at?: string, account?: string,
 *   request_id?: string, causation_id?: string | null, data?: any, error?: string, step?: unknown }} AuditEvent
 */

/** @param {any} data */
const didOf = (data) =>
  data && typeof data.scope === 'string' && typeof data.name === 'string' ? `${data.scope}:${data.name}` : undefined;

/** @param {any} data */
const transfers = (data) => {
  const count = Array.isArray(data.requests) ? data.requests.length : 1;
  return count === 1 ? 'transfer' : `${count} transfers`;
};

/** Sentences for a few types an auditor meets most; the rest are described from their fields. */
const SENTENCES = /** @type {Record<string, (data: any) => string | undefined>} */ ({
  // A file registered with replicas carries them (docs/architecture.md, "Event granularity").
  DidCreated: (data) =>
    `${String(data.didType ?? data.type ?? 'DID').toLowerCase()} ${didOf(data) ?? ''} created${
      Array.isArray(data.replicas) && data.replicas.length > 0
        ? ` with a replica on ${data.replicas.map((/** @type {any} */ replica) => replica.rse).join(', ')}`
        : ''
    }`,
  RuleAdded: (data) => {
    const rule = data.rule ?? data;
    const copies = rule.copies ?? '?';
    return `rule for ${copies} ${copies === 1 ? 'copy' : 'copies'} of ${didOf(rule) ?? '?'} on ${rule.rseExpression ?? '?'}`;
  },
  RuleStateChanged: (data) =>
    `${data.previousState ? `${data.previousState} → ` : 'became '}${data.state ?? '?'}${data.cause?.detail ? ` (${data.cause.detail})` : ''}${data.error ? `: ${data.error}` : ''}`,
  RuleDeleted: () => 'rule deleted',
  // A replica a rule needed is created and locked in one event (docs/architecture.md, "Event granularity").
  ReplicaAdded: (data) =>
    `replica of ${didOf(data) ?? '?'} on ${data.rse ?? '?'}${data.lock ? `, locked by rule ${data.lock.ruleId}: ${data.lock.lockState}` : ''}`,
  ReplicaLocked: (data) =>
    `lock on ${didOf(data) ?? '?'} at ${data.rse ?? '?'}: ${data.lockState ?? ''}${data.previousState ? ` (replica ${data.previousState} → COPYING)` : ''}`,
  // Transfer events name a batch of requests (older stores: one request).
  TransferSucceeded: (data) => `${transfers(data)} done`,
  TransferFailed: (data) => {
    const reason = data.requests?.length === 1 ? data.requests[0].reason : data.reason;
    return `${transfers(data)} failed${reason ? `: ${reason}` : data.error ? `: ${data.error}` : ''}`;
  },
  AccountCreated: (data) => `account ${data.account ?? ''} created`,
});

/** Fields worth a glance, in this order, for events without a sentence. */
const HEADLINE = [
  'rse',
  'state',
  'lockState',
  'newState',
  'ruleId',
  'rseExpression',
  'account',
  'key',
  'value',
  'reason',
];

/**
 * What an event says, in one line.
 * @param {AuditEvent} event
 */
export const describeEvent = (event) => {
  if (event.error) return event.error;
  const data = event.data ?? {};
  const sentence = event.type ? SENTENCES[event.type]?.(data) : undefined;
  if (sentence) return sentence;
  const parts = [];
  const did = didOf(data);
  if (did) parts.push(did);
  for (const key of HEADLINE) {
    const value = data[key];
    if (value !== undefined && value !== null && typeof value !== 'object') parts.push(`${key} ${String(value)}`);
    if (parts.length >= 4) break;
  }
  for (const [key, value] of Object.entries(data)) {
    if (Array.isArray(value) && value.length > 0) parts.push(`${key}: ${value.length}`);
  }
  return parts.join(' · ');
};

/** @param {string | undefined} stream */
const categoryOf = (stream) => (stream ?? '').split('-')[0] || 'other';

/**
 * One entry of a timeline.
 * @param {AuditEvent} event
 */
export const timelineEntry = (event) =>
  h(
    'li',
    { class: `event cat-${categoryOf(event.stream)}`, 'data-position': String(event.position) },
    h(
      'details',
      null,
      h(
        'summary',
        null,
        h(
          'span',
          { class: 'event-time' },
          event.at ? h('time', { dateTime: event.at, title: formatAgo(event.at) }, formatTime(event.at)) : '–',
        ),
        h(
          'span',
          { class: 'event-main' },
          h('span', { class: 'event-type' }, event.type ?? 'missing event'),
          h('span', { class: 'event-text' }, describeEvent(event)),
        ),
        h(
          'span',
          { class: 'event-meta' },
          event.account ? h('span', { class: 'event-who', title: 'acting account' }, event.account) : null,
          event.request_id
            ? h(
                'span',
                { class: 'event-request mono', title: `request ${event.request_id}` },
                `req ${event.request_id.slice(0, 8)}`,
              )
            : null,
          h(
            'span',
            { class: 'event-where mono', title: `stream ${event.stream ?? '?'}, revision ${event.revision ?? '?'}` },
            `#${event.position}`,
          ),
        ),
      ),
      h(
        'div',
        { class: 'event-detail' },
        h(
          'p',
          { class: 'small muted' },
          `Stream ${event.stream ?? '?'} · revision ${event.revision ?? '?'} · position ${event.position}`,
          event.causation_id ? ` · caused by event ${event.causation_id}` : '',
        ),
        h('pre', { class: 'json', tabIndex: 0 }, JSON.stringify(event, null, 2)),
      ),
    ),
  );

/**
 * An empty timeline to append entries to.
 * @param {string} label
 */
export const timelineList = (label) => h('ol', { class: 'timeline', 'aria-label': label });
