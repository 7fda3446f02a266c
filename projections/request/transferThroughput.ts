import type { ReadModels } from '../runtime/readModels.ts';
import { transferStatsCollection, type TransferStatDocument } from './transferStatsProjection.ts';

/** The buckets of `transfer_stats` (projections/request/transferStatsProjection.ts). */
const BUCKET_MS = 5 * 60_000;

export type ThroughputBucket = Readonly<{
  /** Start of the 5-minute bucket (ISO time). */
  at: string;
  filesDone: number;
  bytesDone: number;
  filesFailed: number;
}>;

/**
 * What the transfer tools finished in each 5-minute bucket of the last `minutes` (every link and
 * activity summed), oldest first, empty buckets included: the console's throughput chart.
 */
export const transferThroughput = async (
  readModels: ReadModels,
  now: Date,
  minutes = 60,
): Promise<ThroughputBucket[]> => {
  const last = Math.floor(now.getTime() / BUCKET_MS) * BUCKET_MS;
  const count = Math.ceil((minutes * 60_000) / BUCKET_MS);
  const first = last - (count - 1) * BUCKET_MS;
  const buckets = new Map<string, { filesDone: number; bytesDone: number; filesFailed: number }>();
  for (let at = first; at <= last; at += BUCKET_MS)
    buckets.set(new Date(at).toISOString(), { filesDone: 0, bytesDone: 0, filesFailed: 0 });
  for await (const stat of readModels
    .collection<TransferStatDocument>(transferStatsCollection)
    .find({ timestamp: { $gte: new Date(first).toISOString() } })) {
    const bucket = buckets.get(stat.timestamp);
    if (!bucket) continue;
    bucket.filesDone += stat.files_done;
    bucket.bytesDone += stat.bytes_done;
    bucket.filesFailed += stat.files_failed;
  }
  return [...buckets].map(([at, totals]) => ({ at, ...totals }));
};
