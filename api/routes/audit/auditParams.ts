import { z } from 'zod';
import { IDENTITY_TYPES } from '../../../domain/identity/identity.ts';
import { ValueError } from '../../../domain/shared/errors.ts';
import { isTraceId } from '../../../infra/tracing.ts';
import { identityKey } from '../../../projections/audit/auditIndex.ts';
import type { HistoryBound } from '../../../projections/audit/auditQueries.ts';
import { queryOf } from '../../params.ts';
import { convertedBy } from '../../routeInput.ts';

/**
 * The query parameters of the audit routes, as schemas. A repeated parameter counts by its last
 * value (the event types by every value).
 */

/** RFC 3339 with a zone (`Z` or `±hh:mm`), fractions of a second optional. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** The last value of a query parameter; absent or empty is undefined. */
const lastText = () =>
  z.preprocess((value) => {
    const last: unknown = Array.isArray(value) ? value.at(-1) : value;
    return last === '' ? undefined : last;
  }, z.string().optional());

/**
 * A bound given as a global position (digits) or an RFC 3339 time, turned into the form events
 * record times in (ISO 8601 in UTC with milliseconds), so times compare as text.
 */
export const historyBound = (name: string) =>
  convertedBy(lastText(), (text): HistoryBound | undefined => {
    if (text === undefined) return undefined;
    if (/^\d{1,19}$/.test(text)) return { position: BigInt(text) };
    const time = RFC3339.test(text) ? new Date(text.replace(' ', 'T')) : undefined;
    if (!time || Number.isNaN(time.getTime()))
      throw new ValueError(`${name} must be a global position or an RFC 3339 time, not '${text}'`);
    return { time: time.toISOString() };
  });

/** Event types, the parameter repeated or its values comma-separated; undefined for none. */
const eventTypes = () =>
  z
    .preprocess((value) => (Array.isArray(value) ? value : value === undefined ? [] : [value]), z.array(z.string()))
    .transform((values) => {
      const types = values
        .flatMap((item) => item.split(','))
        .map((item) => item.trim())
        .filter(Boolean);
      return types.length > 0 ? types : undefined;
    });

/** A position (digits), for `after`. */
export const positionParam = (name: string) =>
  convertedBy(lastText(), (text) => {
    if (text === undefined) return undefined;
    if (!/^\d{1,19}$/.test(text)) throw new ValueError(`${name} must be a global position, not '${text}'`);
    return BigInt(text);
  });

/** A page size between 1 and `max`; `fallback` when absent. */
export const limitParam = (fallback: number, max: number) =>
  convertedBy(lastText(), (text) => {
    if (text === undefined) return fallback;
    const limit = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
    if (!(limit >= 1 && limit <= max)) throw new ValueError(`limit must be between 1 and ${max}, not '${text}'`);
    return limit;
  });

/** The filters of every history. */
export const RANGE = {
  since: historyBound('since').describe('The first event: a global position (digits) or an RFC 3339 time, inclusive.'),
  until: historyBound('until').describe('The last event: a global position or an RFC 3339 time, inclusive.'),
  type: eventTypes().describe('Event types, the parameter repeated or comma-separated.'),
};

export const rangeQuery = queryOf(RANGE);

/** The kinds of identity an event may record (domain/shared/event.ts, `ActingIdentity`). */
export const IDENTITY_KINDS: readonly string[] = [...IDENTITY_TYPES, 'DAEMON', 'CLI', 'SERVICE'];

/**
 * The identity to filter by, as the feed indexes it (`<kind>:<value>`): `identity_type` (one of
 * `IDENTITY_KINDS`) with `identity` (the user name, the DN, `SUB=…, ISS=…`, the SSH key's
 * fingerprint, a daemon's name...); undefined when neither is given, ValueError for one alone.
 */
const identityOf = (kind: string | undefined, value: string | undefined): string | undefined => {
  if (kind === undefined && value === undefined) return undefined;
  if (!kind || !value) throw new ValueError('identity and identity_type go together');
  if (!IDENTITY_KINDS.includes(kind))
    throw new ValueError(`identity_type must be one of ${IDENTITY_KINDS.join(', ')}, not '${kind}'`);
  return identityKey({ kind, value });
};

/** A trace id (32 lower-case hex digits, as in a `traceparent`). */
export const traceIdParam = (text: string): string => {
  if (!isTraceId(text)) throw new ValueError(`A trace id is 32 lower-case hex digits, not all zero, not '${text}'`);
  return text;
};

const IDENTITY = {
  // An enum in the document (the console's feed offers it from there), checked with `identity`.
  identity_type: lastText()
    .describe('With identity: the kind of identity that acted.')
    .meta({ enum: [...IDENTITY_KINDS] }),
  identity: lastText().describe(
    'Only the events this identity caused (a user name, a DN, SUB=…, ISS=…, an SSH key’s fingerprint, a daemon).',
  ),
};

/** An account's history: the range, and who acted (`identity_type` and `identity`, read together). */
export const accountHistoryQuery = convertedBy(queryOf({ ...RANGE, ...IDENTITY }), (query) => ({
  since: query.since,
  until: query.until,
  type: query.type,
  identity: identityOf(query.identity_type, query.identity),
}));

/** A past state's point: `as_of`. */
export const asOfQuery = queryOf({
  as_of: historyBound('as_of').describe('A global position or an RFC 3339 time; default now.'),
});

/** The feed's query: the range, `account`, who acted, `trace`, `after` and `limit`. */
export const feedQuery = convertedBy(
  queryOf({
    ...RANGE,
    account: lastText().describe('Only the events this account caused.'),
    ...IDENTITY,
    trace: convertedBy(lastText(), (text) => (text === undefined ? undefined : traceIdParam(text))).describe(
      'Only the events of this trace (a W3C trace id): what one request caused.',
    ),
    after: positionParam('after').describe('The last position of the previous page.'),
    limit: limitParam(1000, 10_000).describe('Events per page: 1000 by default, at most 10 000.'),
  }),
  (query) => ({
    since: query.since,
    until: query.until,
    type: query.type,
    account: query.account,
    identity: identityOf(query.identity_type, query.identity),
    trace: query.trace,
    after: query.after,
    limit: query.limit,
  }),
);
