import { didKey, type DidRef, type DidType } from '../did/did.ts';
import { InvalidObject, UnsupportedOperation } from '../shared/errors.ts';
import { LifetimeExceptionDuplicate } from './lifetimeExceptionErrors.ts';
import type { ExceptionDid, LifetimeExceptionRecord } from './lifetimeException.ts';

/**
 * Rucio's `add_exception` (behaviour reference §8) as one pure function: the request is refused
 * unless `lifetime_model.cutoff_date` is a day in the future; `expires_at` defaults to, and is
 * capped at, `lifetime_model.max_extension` days from now when that is set. DIDs that do not
 * exist are `unknown`; DIDs whose end of life is not before the cutoff are `not_affected`; the
 * others are grouped by scope and `datatype`, one exception (one id) per group, each WAITING.
 *
 * A DID's end of life is its `eol_at` column, as in Rucio, or else the earliest `eol_at` of its
 * rules (which is what atropos acts on; Rucio's lifetime model fills the DID column only for its
 * ATLAS policy). Naming a DID twice, or a DID the requester already has a waiting or approved,
 * unexpired exception for, is LifetimeExceptionDuplicate.
 */

/** What the command layer read of a DID named in the request; undefined when it does not exist. */
export type ExceptionDidFacts = Readonly<{
  didType: DidType;
  datatype: string | null;
  /** The DID's `eol_at` column, else its rules' earliest `eol_at` (ISO); null when neither is set. */
  endOfLife: string | null;
  /** The requester holds a waiting or an approved, unexpired exception for it already. */
  openException: boolean;
}>;

export type ExceptionRequest = Readonly<{
  dids: readonly DidRef[];
  account: string;
  pattern: string | null;
  comments: string | null;
  /** ISO; null when not given. */
  expiresAt: string | null;
  now: Date;
  /** `lifetime_model.cutoff_date` as stored; empty when not set. */
  cutoffDate: string;
  /** `lifetime_model.max_extension` in days; 0 when not set. */
  maxExtensionDays: number;
}>;

export type PlannedExceptions = Readonly<{
  exceptions: readonly LifetimeExceptionRecord[];
  unknown: readonly ExceptionDid[];
  notAffected: readonly ExceptionDid[];
}>;

const DAY_MS = 86_400_000;

const cutoffOf = (text: string, now: Date): Date => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim());
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : undefined;
  const exact = date && match && date.getUTCMonth() === Number(match[2]) - 1 && date.getUTCDate() === Number(match[3]);
  if (!date || !exact || date.getTime() < now.getTime())
    throw new UnsupportedOperation('Cannot submit exception at that date.');
  return date;
};

/** The exception's end: as asked, defaulted and capped by `max_extension`; never in the past. */
const expiryOf = (request: ExceptionRequest): string | null => {
  const now = request.now.getTime();
  if (request.expiresAt !== null && Date.parse(request.expiresAt) <= now) {
    throw new InvalidObject(`Problem validating lifetime exception: expires_at ${request.expiresAt} is in the past`);
  }
  if (request.maxExtensionDays <= 0) return request.expiresAt;
  const longest = new Date(now + request.maxExtensionDays * DAY_MS).toISOString();
  return request.expiresAt === null || request.expiresAt > longest ? longest : request.expiresAt;
};

export const planExceptions = (
  request: ExceptionRequest,
  facts: ReadonlyMap<string, ExceptionDidFacts>,
  /** A new exception id for each group, in order. */
  newId: () => string,
): PlannedExceptions => {
  const cutoff = cutoffOf(request.cutoffDate, request.now).toISOString();
  const expiresAt = expiryOf(request);
  const seen = new Set<string>();
  const groups = new Map<string, ExceptionDid[]>();
  const unknown: ExceptionDid[] = [];
  const notAffected: ExceptionDid[] = [];
  for (const did of request.dids) {
    const key = didKey(did.scope, did.name);
    if (seen.has(key)) throw new LifetimeExceptionDuplicate(`The DID ${key} is named twice in the request`);
    seen.add(key);
    const found = facts.get(key);
    // Rucio reports DIDs it does not know as datasets.
    if (!found) {
      unknown.push({ scope: did.scope, name: did.name, didType: 'DATASET' });
      continue;
    }
    const entry: ExceptionDid = { scope: did.scope, name: did.name, didType: found.didType };
    if (found.endOfLife === null || found.endOfLife >= cutoff) {
      notAffected.push(entry);
      continue;
    }
    if (found.openException)
      throw new LifetimeExceptionDuplicate(`Account ${request.account} has a lifetime exception for ${key} already`);
    const group = `${did.scope}\u0000${found.datatype ?? ''}`;
    groups.set(group, [...(groups.get(group) ?? []), entry]);
  }
  const createdAt = request.now.toISOString();
  const exceptions = [...groups.values()].map((dids): LifetimeExceptionRecord => ({
    id: newId(),
    account: request.account,
    pattern: request.pattern,
    comments: request.comments,
    expiresAt,
    dids,
    createdAt,
  }));
  return { exceptions, unknown, notAffected };
};
