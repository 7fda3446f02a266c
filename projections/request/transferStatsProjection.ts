import type { RequestEvent } from '../../domain/request/request.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { EventsOf, Projected, Projection } from '../projection.ts';

/**
 * Rucio's transfer statistics (`TransferStatsManager`, behaviour-reference §4.7): files and
 * bytes done and files failed per link (destination, source) and activity, in 5-minute buckets
 * by the time the transfer ended. Rucio folds old buckets into hours and days to bound its table;
 * here the buckets stay (a few hundred rows a day per link and activity), and the metrics sum the
 * ones inside the window asked for.
 */
export type TransferStatDocument = Projected<{
  dest_rse_id: string;
  src_rse_id: string | null;
  activity: string;
  /** Start of the 5-minute bucket (ISO time). */
  timestamp: string;
  files_done: number;
  bytes_done: number;
  files_failed: number;
}>;

export const transferStatsCollection: CollectionSpec = { name: 'transfer_stats', indexes: [{ fields: ['timestamp'] }] };

const BUCKET_MS = 5 * 60_000;

const bucketOf = (at: string): string => new Date(Math.floor(Date.parse(at) / BUCKET_MS) * BUCKET_MS).toISOString();

type TransferOutcomeEvent = EventsOf<RequestEvent, 'TransferSucceeded' | 'TransferFailed'>;

export const transferStatsProjection: Projection<TransferOutcomeEvent> = {
  name: 'transfer_stats',
  version: 1,
  collections: [transferStatsCollection],
  handles: { TransferSucceeded: true, TransferFailed: true },
  async apply(event, context) {
    const stats = context.collection<TransferStatDocument>(transferStatsCollection);
    const done = event.type === 'TransferSucceeded';
    const transfers =
      event.type === 'TransferSucceeded'
        ? event.data.requests.map((transfer) => ({ ...transfer, at: transfer.transferredAt }))
        : event.data.requests.map((transfer) => ({ ...transfer, at: transfer.failedAt }));
    for (const { destRseId, sourceRseId, activity, bytes, at } of transfers) {
      const timestamp = bucketOf(at);
      const id = `${timestamp} ${destRseId} ${sourceRseId ?? '-'} ${activity}`;
      await stats.update(id, (document) => {
        const current = document ?? {
          _id: id,
          dest_rse_id: destRseId,
          src_rse_id: sourceRseId,
          activity,
          timestamp,
          files_done: 0,
          bytes_done: 0,
          files_failed: 0,
        };
        return done
          ? { ...current, files_done: current.files_done + 1, bytes_done: current.bytes_done + bytes }
          : { ...current, files_failed: current.files_failed + 1 };
      });
    }
  },
};
