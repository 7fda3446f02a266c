import { ValueError } from '../../../domain/shared/errors.ts';
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
