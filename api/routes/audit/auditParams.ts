import { IDENTITY_TYPES } from '../../../domain/identity/identity.ts';
import { ValueError } from '../../../domain/shared/errors.ts';
import { isTraceId } from '../../../infra/tracing.ts';
import { identityKey } from '../../../projections/audit/auditIndex.ts';
import type { HistoryBound } from '../../../projections/audit/auditQueries.ts';
import type { AppContext } from '../../services.ts';

/** RFC 3339 with a zone (`Z` or `±hh:mm`), fractions of a second optional. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

const single = (ctx: AppContext, name: string): string | undefined => {
  const value = ctx.query[name];
  return Array.isArray(value) ? value[value.length - 1] : value;
};

/**
 * A bound given as a global position (digits) or an RFC 3339 time, turned into the form events
 * record times in (ISO 8601 in UTC with milliseconds), so times compare as text.
 */
export const historyBound = (ctx: AppContext, name: string): HistoryBound | undefined => {
  const text = single(ctx, name);
  if (text === undefined || text === '') return undefined;
  if (/^\d{1,19}$/.test(text)) return { position: BigInt(text) };
  const time = RFC3339.test(text) ? new Date(text.replace(' ', 'T')) : undefined;
  if (!time || Number.isNaN(time.getTime()))
    throw new ValueError(`${name} must be a global position or an RFC 3339 time, not '${text}'`);
  return { time: time.toISOString() };
};

/** Event types, the parameter repeated or its values comma-separated; undefined for none. */
export const eventTypes = (ctx: AppContext, name = 'type'): string[] | undefined => {
  const value = ctx.query[name];
  const types = (Array.isArray(value) ? value : value === undefined ? [] : [value])
    .flatMap((item) => item.split(','))
    .map((item) => item.trim())
    .filter(Boolean);
  return types.length > 0 ? types : undefined;
};

/** A position (digits), for `after`. */
export const positionParam = (ctx: AppContext, name: string): bigint | undefined => {
  const text = single(ctx, name);
  if (text === undefined || text === '') return undefined;
  if (!/^\d{1,19}$/.test(text)) throw new ValueError(`${name} must be a global position, not '${text}'`);
  return BigInt(text);
};

/** A page size between 1 and `max`; `fallback` when absent. */
export const limitParam = (ctx: AppContext, fallback: number, max: number): number => {
  const text = single(ctx, 'limit');
  if (text === undefined || text === '') return fallback;
  const limit = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= max)) throw new ValueError(`limit must be between 1 and ${max}, not '${text}'`);
  return limit;
};

/** The kinds of identity an event may record (domain/shared/event.ts, `ActingIdentity`). */
export const IDENTITY_KINDS: readonly string[] = [...IDENTITY_TYPES, 'DAEMON', 'CLI', 'SERVICE'];

/**
 * The identity to filter by, as the feed indexes it (`<kind>:<value>`): `identity_type` (one of
 * `IDENTITY_KINDS`) with `identity` (the user name, the DN, `SUB=…, ISS=…`, the SSH key's
 * fingerprint, a daemon's name...); undefined when neither is given, ValueError for one alone.
 */
export const identityParam = (ctx: AppContext): string | undefined => {
  const kind = single(ctx, 'identity_type');
  const value = single(ctx, 'identity');
  if ((kind === undefined || kind === '') && (value === undefined || value === '')) return undefined;
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
