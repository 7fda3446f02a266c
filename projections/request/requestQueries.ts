import { didKey } from '../../domain/did/did.ts';
import type { RequestState } from '../../domain/request/request.ts';
import { rsesCollection, type RseDocument } from '../rse/rsesProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { requestsCollection, requestsHistoryCollection, type RequestDocument } from './requestsProjection.ts';
import { transferLimitsCollection, type TransferLimitDocument } from './transferLimitsProjection.ts';

/** What the request routes read: one DID's request to an RSE, and the listings by state and link. */

export type RequestListing = Readonly<{
  states: readonly RequestState[];
  sourceRseIds: readonly string[];
  destRseIds: readonly string[];
}>;

export const activeRequest = (
  readModels: ReadModels,
  scope: string,
  name: string,
  rseId: string,
): Promise<RequestDocument | null> =>
  readModels
    .collection<RequestDocument>(requestsCollection)
    .findOne({ didKey: didKey(scope, name), dest_rse_id: rseId });

/** The most recently archived request of a DID to an RSE. */
export const archivedRequest = async (
  readModels: ReadModels,
  scope: string,
  name: string,
  rseId: string,
): Promise<RequestDocument | null> => {
  const rows = await readModels
    .collection<RequestDocument>(requestsHistoryCollection)
    .find(
      { didKey: didKey(scope, name), dest_rse_id: rseId },
      { sort: { didKey: -1, dest_rse_id: -1, updated_at: -1 }, limit: 1 },
    )
    .toArray();
  return rows[0] ?? null;
};

/**
 * Requests in the given states between the given RSEs, as Rucio's `list_requests` selects them:
 * by source and destination, so a request with no source chosen yet is not listed.
 */
export const listRequests = (
  readModels: ReadModels,
  listing: RequestListing,
  options: Readonly<{ history: boolean; offset?: number; limit?: number }>,
): AsyncIterable<RequestDocument> =>
  readModels.collection<RequestDocument>(options.history ? requestsHistoryCollection : requestsCollection).find(
    {
      state: { $in: [...listing.states] },
      source_rse_id: { $in: [...listing.sourceRseIds] },
      dest_rse_id: { $in: [...listing.destRseIds] },
    },
    {
      sort: { _id: 1 },
      ...(options.offset ? { skip: options.offset } : {}),
      ...(options.limit ? { limit: options.limit } : {}),
    },
  );

/** The RSEs whose `site` attribute names the site. */
export const rseIdsOfSite = async (readModels: ReadModels, site: string): Promise<{ id: string; rse: string }[]> =>
  (
    await readModels
      .collection<RseDocument>(rsesCollection)
      .find({ deleted: false, 'attributes.site': site }, { sort: { rse: 1 } })
      .toArray()
  ).map((rse) => ({ id: rse.id, rse: rse.rse }));

/** Every transfer limit, as `list_transfer_limits` gives them. */
export const listTransferLimits = (readModels: ReadModels): AsyncIterable<TransferLimitDocument> =>
  readModels.collection<TransferLimitDocument>(transferLimitsCollection).find({}, { sort: { _id: 1 } });
