import type { ReadModels } from '../runtime/readModels.ts';
import {
  accountUsageCollection,
  accountUsageHistoryCollection,
  accountUsageId,
  type AccountUsageDocument,
  type AccountUsageHistoryDocument,
} from './accountUsageProjection.ts';

/** What the usage and RSE routes read of account usage: one row per account and RSE, and its history. */

const usage = (readModels: ReadModels) => readModels.collection<AccountUsageDocument>(accountUsageCollection);

/** What one account stores on one RSE; no row is no usage. */
export const accountUsageOn = (
  readModels: ReadModels,
  account: string,
  rseId: string,
): Promise<AccountUsageDocument | null> => usage(readModels).get(accountUsageId(account, rseId));

/** The account's usage rows, on one RSE only when `rseId` is given, in no order: callers merge them with limits. */
export const usageOf = (readModels: ReadModels, account: string, rseId?: string): AsyncIterable<AccountUsageDocument> =>
  usage(readModels).find({ account, ...(rseId !== undefined ? { rseId } : {}) });

/** Bytes and files the account stores over the given RSEs together. */
export const usageSummedOver = async (
  readModels: ReadModels,
  account: string,
  rseIds: readonly string[],
): Promise<{ bytes: number; files: number }> => {
  let [bytes, files] = [0, 0];
  for await (const used of usage(readModels).find({ account, rseId: { $in: [...rseIds] } })) {
    bytes += used.bytes;
    files += used.files;
  }
  return { bytes, files };
};

/** Every account's usage row on an RSE, in no order; one row per account that has stored there. */
export const usagesOnRse = (readModels: ReadModels, rseId: string): Promise<AccountUsageDocument[]> =>
  usage(readModels).find({ rseId }).toArray();

/** The account's usage on an RSE as it was after each change, oldest first. */
export const usageHistoryOf = (
  readModels: ReadModels,
  account: string,
  rseId: string,
): Promise<AccountUsageHistoryDocument[]> =>
  readModels
    .collection<AccountUsageHistoryDocument>(accountUsageHistoryCollection)
    .find({ account, rseId }, { sort: { updatedAt: 1 } })
    .toArray();
