import type { DidRef } from '../../../domain/did/did.ts';
import { parseFilterDate, parseRucioDate } from '../../../domain/shared/dates.ts';
import { InvalidObject } from '../../../domain/shared/errors.ts';
import { checkText } from '../../../domain/shared/limits.ts';
import { asArray, didRefItem } from '../did/didParams.ts';
import { COMMENTS_LENGTH } from '../subscription/subscriptionParams.ts';

/** The body of `POST /lifetime_exceptions/`, checked with clear InvalidObject messages (Rucio answers 500 for most shapes it does not expect). */

/** Rucio's `pattern` column: String(255). */
const PATTERN_LENGTH = 255;

/** An exception's end as the Python client sends it (Rucio's date format), or ISO 8601. */
const expiresAtOf = (value: unknown): string | null => {
  if (value === null || value === undefined) return null;
  const date =
    typeof value === 'string'
      ? (parseRucioDate(value) ??
        parseFilterDate(value) ??
        (/^\d{4}-\d{2}-\d{2}$/.test(value) ? parseFilterDate(`${value} 00:00:00`) : undefined))
      : undefined;
  if (!date)
    throw new InvalidObject(`Problem validating lifetime exception: expires_at ${JSON.stringify(value)} is not a date`);
  return date.toISOString();
};

/**
 * `POST /lifetime_exceptions/`: `dids` (a list of `{scope, name}`, default none), `pattern`,
 * `comments`, `expires_at`; the `account` the client sends is ignored (the requester is the
 * caller, as in Rucio).
 */
export const exceptionRequestOf = (
  body: Readonly<Record<string, unknown>>,
): { dids: DidRef[]; pattern: string | null; comments: string | null; expiresAt: string | null } => {
  const dids = asArray('lifetime exception', body.dids ?? []).map((item) => didRefItem('lifetime exception', item));
  const text = (key: string, maxLength: number): string | null => {
    const value = body[key];
    if (value === null || value === undefined) return null;
    if (typeof value !== 'string')
      throw new InvalidObject(`Problem validating lifetime exception: ${key} must be a string`);
    return checkText(key, value, maxLength, { multiline: key === 'comments' });
  };
  return {
    dids,
    pattern: text('pattern', PATTERN_LENGTH),
    comments: text('comments', COMMENTS_LENGTH),
    expiresAt: expiresAtOf(body.expires_at),
  };
};
