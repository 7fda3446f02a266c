import type { Context } from 'koa';
import { JSON_TYPE } from './http.ts';

const INFINITY_MARK = '\u0000Infinity\u0000';
const QUOTED_MARK = JSON.stringify(INFINITY_MARK);

/**
 * JSON as Python's json.dumps writes it for Rucio's unlimited quotas: `float('inf')` becomes the
 * bare word `Infinity`, which Python's json.loads (the client) reads back as infinity. Plain
 * JSON.stringify would write null.
 */
export const jsonWithInfinity = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) => (item === Infinity ? INFINITY_MARK : item)).replaceAll(
    QUOTED_MARK,
    'Infinity',
  );

export const sendJsonWithInfinity = (ctx: Context, value: unknown): void => {
  ctx.status = 200;
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = jsonWithInfinity(value);
};

/** A stored limit in bytes as Rucio answers it: -1 (no limit) is infinity. */
export const limitValue = (bytes: number): number => (bytes === -1 ? Infinity : bytes);
