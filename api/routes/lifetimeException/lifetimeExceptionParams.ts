import { z } from 'zod';
import { parseFilterDate, parseRucioDate } from '../../../domain/shared/dates.ts';
import { InvalidObject } from '../../../domain/shared/errors.ts';
import { boundedText, orNull } from '../../params.ts';
import { convertedBy, refusedAs } from '../../routeInput.ts';
import { didRefIn, listIn } from '../did/didParams.ts';
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

/** Text of at most `maxLength` characters, null when absent. */
const text = (key: string, maxLength: number) =>
  orNull(
    refusedAs(
      boundedText(key, maxLength, { multiline: key === 'comments' }),
      () => new InvalidObject(`Problem validating lifetime exception: ${key} must be a string`),
    ),
  );

/**
 * `POST /lifetime_exceptions/`: `dids` (a list of `{scope, name}`, default none), `pattern`,
 * `comments`, `expires_at`; the `account` the client sends is ignored (the requester is the
 * caller, as in Rucio).
 */
export const EXCEPTION_REQUEST = z
  .looseObject({
    dids: listIn('lifetime exception', didRefIn('lifetime exception'))
      .nullish()
      .transform((dids) => dids ?? []),
    pattern: text('pattern', PATTERN_LENGTH),
    comments: text('comments', COMMENTS_LENGTH),
    expires_at: convertedBy(z.unknown().optional(), expiresAtOf),
  })
  .transform(({ dids, pattern, comments, expires_at }) => ({ dids, pattern, comments, expiresAt: expires_at }));
