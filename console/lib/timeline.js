import { formatAgo, formatTime, h } from './dom.js';
import { sentenceOf } from './events.js';

/**
 * An event history as a timeline, as EventStoreDB's stream browser shows a stream: one entry per
 * event, newest or oldest first, each saying when, what, who and from which request, and opening
 * to the event as stored (JSON). Each event is a sentence a person reads (lib/events.js); its
 * stored type, stream and data are one click away, in the entry's details.
 */

/**
 * @typedef {{ position: number, stream?: string, revision?: number, type?: string, at?: string, account?: string,
 *   identity?: { kind: string, value: string }, request_id?: string, correlation_id?: string,
 *   causation_id?: string | null, data?: any, error?: string, step?: unknown }} AuditEvent
 */

/**
 * Who acted, beside the account: the identity's value (a DN or a subject shortened to its last
 * part, whole on hover) and its kind. Events written before identities were recorded have none.
 * @param {{ kind: string, value: string }} identity
 */
const identityLabel = (identity) => {
  const value = identity.value;
  const short = identity.kind === 'X509' ? (value.split('/CN=').pop() ?? value) : value;
  return `${short.length > 28 ? `${short.slice(0, 27)}…` : short} (${identity.kind.toLowerCase()})`;
};

/**
 * What an event says, in one line (lib/events.js).
 * @param {AuditEvent} event
 */
export const describeEvent = (event) => sentenceOf(event);

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
        h('span', { class: 'event-main' }, h('span', { class: 'event-text' }, describeEvent(event))),
        h(
          'span',
          { class: 'event-meta' },
          event.account ? h('span', { class: 'event-who', title: 'acting account' }, event.account) : null,
          event.identity
            ? h(
                'span',
                { class: 'event-identity', title: `acting identity: ${event.identity.kind} ${event.identity.value}` },
                identityLabel(event.identity),
              )
            : null,
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
          'Stored as ',
          h('code', { class: 'event-type' }, event.type ?? 'a missing event'),
          ` · stream ${event.stream ?? '?'} · revision ${event.revision ?? '?'} · position ${event.position}`,
          event.causation_id ? ` · caused by event ${event.causation_id}` : '',
          event.correlation_id ? ' · ' : '',
          event.correlation_id
            ? h(
                'a',
                { href: `#/audit?trace=${event.correlation_id}`, class: 'event-trace mono' },
                `everything request trace ${event.correlation_id.slice(0, 8)}… caused`,
              )
            : '',
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
