import type { ReadModels } from '../runtime/readModels.ts';
import {
  distanceDocumentId,
  rseDistancesCollection,
  rsesCollection,
  rseUsageHistoryCollection,
  type RseDistanceDocument,
  type RseDocument,
  type RseUsageHistoryDocument,
} from './rses.ts';

/** What the RSE routes read: RSEs by name, distances, and the usage history. */

const rses = (readModels: ReadModels) => readModels.collection<RseDocument>(rsesCollection);
const distances = (readModels: ReadModels) => readModels.collection<RseDistanceDocument>(rseDistancesCollection);

/** The RSE of that name, deleted ones too (they keep their names). */
export const findRse = (readModels: ReadModels, rse: string): Promise<RseDocument | null> => rses(readModels).get(rse);

/** The RSEs that are not deleted, by name. */
export const activeRses = (readModels: ReadModels): AsyncIterable<RseDocument> =>
  rses(readModels).find({ deleted: false }, { sort: { rse: 1 } });

/** The distance from one RSE to another; distances are directed. */
export const findDistance = (
  readModels: ReadModels,
  srcRseId: string,
  destRseId: string,
): Promise<RseDistanceDocument | null> => distances(readModels).get(distanceDocumentId(srcRseId, destRseId));

/** The distances from one RSE, by destination id: a range of the ids, which start with the source's. */
export const distancesFrom = (readModels: ReadModels, srcRseId: string): AsyncIterable<RseDistanceDocument> =>
  distances(readModels).find(
    { _id: { $gte: distanceDocumentId(srcRseId, ''), $lt: `${srcRseId}}` } },
    { sort: { _id: 1 } },
  );

/** Every distance, deleted RSEs' too, by source then destination id. */
export const everyDistance = (readModels: ReadModels): AsyncIterable<RseDistanceDocument> =>
  distances(readModels).find({}, { sort: { _id: 1 } });

/** The usage values set on an RSE, of one source or all, newest first. */
export const rseUsageHistory = (
  readModels: ReadModels,
  rseId: string,
  source?: string,
): AsyncIterable<RseUsageHistoryDocument> =>
  readModels
    .collection<RseUsageHistoryDocument>(rseUsageHistoryCollection)
    .find({ rseId, ...(source ? { source } : {}) }, { sort: { updatedAt: -1, _id: -1 } });
