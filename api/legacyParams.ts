import { KeyError, TypeError_, ValueError } from '../domain/shared/errors.ts';
import { checkJsonBounds } from './jsonBounds.ts';
import type { AppContext } from './services.ts';
import { isRecord } from '../domain/shared/narrowing.ts';

/**
 * Request bodies the way Rucio's helpers read them (flaskapi/v1/common.py): the raw body is JSON
 * whatever the Content-Type says (the Python client sends none), also on DELETE.
 */
const rawBody = (ctx: AppContext): string => {
  return ctx.state.body ?? '';
};

/** The body parsed as JSON; `what` names the expected shape in the error ("dictionary", "list", ...). */
export const parseJsonBody = (ctx: AppContext, what: string): unknown => {
  let value: unknown;
  try {
    value = JSON.parse(rawBody(ctx)) as unknown;
  } catch {
    throw new ValueError(`cannot decode json parameter ${what}`);
  }
  checkJsonBounds(value);
  return value;
};

/** A JSON object body; `optional` treats an empty body as `{}`. */
export const jsonObject = (ctx: AppContext, options: { optional?: boolean } = {}): Record<string, unknown> => {
  if (options.optional && rawBody(ctx).trim() === '') return {};
  const body = parseJsonBody(ctx, 'dictionary');
  if (!isRecord(body)) throw new TypeError_('body must be a json dictionary');
  return body;
};

export const jsonList = (ctx: AppContext, options: { optional?: boolean } = {}): unknown[] => {
  if (options.optional && rawBody(ctx).trim() === '') return [];
  const body = parseJsonBody(ctx, 'list');
  if (!Array.isArray(body)) throw new TypeError_('body must be a json list');
  return body;
};

/** A required key: missing → 400 KeyError "'<key>' not defined". */
export const param = (parameters: Readonly<Record<string, unknown>>, name: string): unknown => {
  if (!(name in parameters)) throw new KeyError(`'${name}' not defined`);
  return parameters[name];
};

/** Rucio booleans: JSON booleans, the strings true/false/1/0 (any case), or the integers 1/0. */
export const toBoolean = (value: unknown, name: string): boolean => {
  if (typeof value === 'boolean') return value;
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.toLowerCase() : undefined;
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw new TypeError_(`'${name}' must be a boolean type.`);
};

export const paramBoolean = (
  parameters: Readonly<Record<string, unknown>>,
  name: string,
  fallback: boolean,
): boolean => {
  const value = parameters[name];
  return value === undefined || value === null ? fallback : toBoolean(value, name);
};

/** A query parameter as a Rucio boolean; absent → `fallback`. */
export const queryBoolean = (ctx: AppContext, name: string, fallback: boolean): boolean => {
  const value = ctx.query[name];
  if (value === undefined) return fallback;
  return toBoolean(Array.isArray(value) ? value[0] : value, name);
};

export const queryString = (ctx: AppContext, name: string): string | undefined => {
  const value = ctx.query[name];
  return Array.isArray(value) ? value[0] : value;
};
