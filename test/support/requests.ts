import { requestStreams } from '../../projections/request/conveyorQueries.ts';
import { requestsCollection, type RequestDocument } from '../../projections/request/requestsProjection.ts';
import type { ReadModels } from '../../projections/runtime/readModels.ts';

/**
 * The batch streams of active requests, by id, as the conveyor's daemons read them from the read
 * model: what tests that take requests through the conveyor's steps by hand give those steps.
 */
export const activeRequestStreams = async (
  readModels: ReadModels,
  requestIds: readonly string[],
): Promise<Map<string, string>> =>
  requestStreams(
    await readModels
      .collection<RequestDocument>(requestsCollection)
      .find({ _id: { $in: [...requestIds] } })
      .toArray(),
  );
