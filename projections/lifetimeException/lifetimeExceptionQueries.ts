import { didKey, type DidRef } from '../../domain/did/did.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { lifetimeExceptionsCollection, type LifetimeExceptionDocument } from './lifetimeExceptionsProjection.ts';

/** What the lifetime exception routes and atropos read. */

const exceptions = (readModels: ReadModels) =>
  readModels.collection<LifetimeExceptionDocument>(lifetimeExceptionsCollection);

/** Every exception row (one per exception and DID), by exception id. */
export const listExceptions = (readModels: ReadModels): AsyncIterable<LifetimeExceptionDocument> =>
  exceptions(readModels).find({}, { sort: { _id: 1 } });

/** The rows of one exception. */
export const exceptionRows = (readModels: ReadModels, id: string): Promise<LifetimeExceptionDocument[]> =>
  exceptions(readModels)
    .find({ id }, { sort: { id: 1, _id: 1 } })
    .toArray();

/**
 * Whether `account` holds an exception for the DID that still counts: waiting, or approved and
 * not yet ended at `now`.
 */
export const hasOpenException = async (
  readModels: ReadModels,
  account: string,
  did: DidRef,
  now: string,
): Promise<boolean> => {
  const rows = await exceptions(readModels)
    .find({ account, did_key: didKey(did.scope, did.name) })
    .toArray();
  return rows.some(
    (row) => row.state === 'WAITING' || (row.state === 'APPROVED' && (row.expires_at === null || row.expires_at > now)),
  );
};

/**
 * For each DID (`scope:name`) with an approved exception, the latest end of its approved
 * exceptions, null when one has no end (what atropos weighs against the rules' end of life).
 */
export const approvedExceptionEnds = async (
  readModels: ReadModels,
  didKeys: readonly string[],
): Promise<Map<string, string | null>> => {
  const ends = new Map<string, string | null>();
  if (didKeys.length === 0) return ends;
  for await (const row of exceptions(readModels).find({ did_key: { $in: [...new Set(didKeys)] }, state: 'APPROVED' })) {
    const current = ends.get(row.did_key);
    if (current === null) continue;
    if (row.expires_at === null || current === undefined || row.expires_at > current)
      ends.set(row.did_key, row.expires_at);
  }
  return ends;
};
