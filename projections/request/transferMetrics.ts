import type { Filter } from '../../infra/readstore/readStore.ts';
import {
  rseDistancesCollection,
  rsesCollection,
  type RseDistanceDocument,
  type RseDocument,
} from '../rse/rsesProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { requestsCollection, type RequestDocument } from './requestsProjection.ts';
import { transferStatsCollection, type TransferStatDocument } from './transferStatsProjection.ts';
import { isRecord, numberOrNull } from '../../domain/shared/narrowing.ts';

/**
 * Rucio's `get_request_metrics` (behaviour-reference §4.7): per link `SRC:DST`, the files and
 * bytes QUEUED now per activity (requests whose source is chosen), the files and bytes done and
 * the files failed in the last hour and six hours per activity, and the link's distance; keyed
 * by an RSE attribute's values instead of RSE names when `groupByAttribute` is given.
 */

export type MetricsQuery = Readonly<{
  destRseId?: string;
  srcRseId?: string;
  activity?: string;
  groupByAttribute?: string;
}>;

type Counts = Record<string, unknown>;
type LinkMetrics = { files?: Counts; bytes?: Counts; distance?: number | null; src_rse?: string; dst_rse?: string };

const WINDOWS: readonly (readonly [number, string])[] = [
  [3_600_000, '1h'],
  [6 * 3_600_000, '6h'],
];

const add = (record: Counts, key: string, value: number) => {
  record[key] = (numberOrNull(record[key]) ?? 0) + value;
};

/** The counts under `key`, made when missing (a key holds either counts or a number, never both). */
const nested = (record: Counts, key: string): Counts => {
  const counts = record[key];
  if (isRecord(counts)) return counts;
  const made: Counts = {};
  record[key] = made;
  return made;
};

export const requestMetrics = async (
  readModels: ReadModels,
  query: MetricsQuery,
  now: Date,
): Promise<Record<string, LinkMetrics>> => {
  const metrics = new Map<string, LinkMetrics>();
  const linkOf = (src: string, dst: string): LinkMetrics => {
    const key = `${src} ${dst}`;
    let link = metrics.get(key);
    if (!link) metrics.set(key, (link = {}));
    return link;
  };
  const narrowed = (source: string, dest: string): Filter => ({
    ...(query.destRseId ? { [dest]: query.destRseId } : {}),
    ...(query.srcRseId ? { [source]: query.srcRseId } : {}),
    ...(query.activity ? { activity: query.activity } : {}),
  });

  // The queues now.
  for await (const request of readModels
    .collection<RequestDocument>(requestsCollection)
    .find({ state: 'QUEUED', ...narrowed('source_rse_id', 'dest_rse_id') })) {
    if (!request.source_rse_id) continue;
    const link = linkOf(request.source_rse_id, request.dest_rse_id);
    const files = (link.files ??= {});
    const bytes = (link.bytes ??= {});
    add(nested(files, 'queued'), request.activity, 1);
    add(files, 'queued-total', 1);
    add(nested(bytes, 'queued'), request.activity, request.bytes);
    add(bytes, 'queued-total', request.bytes);
  }

  // What was done and failed, per window.
  const oldest = new Date(now.getTime() - WINDOWS[WINDOWS.length - 1]![0]).toISOString();
  const stats = await readModels
    .collection<TransferStatDocument>(transferStatsCollection)
    .find({ timestamp: { $gte: oldest }, ...narrowed('src_rse_id', 'dest_rse_id') })
    .toArray();
  for (const [duration, label] of WINDOWS) {
    const since = new Date(now.getTime() - duration).toISOString();
    const totals = new Map<
      string,
      { src: string | null; dst: string; activity: string; filesDone: number; bytesDone: number; filesFailed: number }
    >();
    for (const stat of stats) {
      if (stat.timestamp < since) continue;
      const key = `${stat.src_rse_id} ${stat.dest_rse_id} ${stat.activity}`;
      const total = totals.get(key) ?? {
        src: stat.src_rse_id,
        dst: stat.dest_rse_id,
        activity: stat.activity,
        filesDone: 0,
        bytesDone: 0,
        filesFailed: 0,
      };
      total.filesDone += stat.files_done;
      total.bytesDone += stat.bytes_done;
      total.filesFailed += stat.files_failed;
      totals.set(key, total);
    }
    for (const total of totals.values()) {
      if (!total.src) continue;
      const link = linkOf(total.src, total.dst);
      const files = (link.files ??= {});
      const bytes = (link.bytes ??= {});
      if (total.filesDone) {
        add(nested(nested(files, 'done'), total.activity), label, total.filesDone);
        add(files, `done-total-${label}`, total.filesDone);
      }
      if (total.filesFailed) {
        add(nested(nested(files, 'failed'), total.activity), label, total.filesFailed);
        add(files, `failed-total-${label}`, total.filesFailed);
      }
      if (total.bytesDone) add(nested(nested(bytes, 'done'), total.activity), label, total.bytesDone);
      add(bytes, `done-total-${label}`, total.bytesDone);
    }
  }

  // The links' distances.
  const distanceFilter: Filter = {
    ...(query.destRseId ? { destRseId: query.destRseId } : {}),
    ...(query.srcRseId ? { srcRseId: query.srcRseId } : {}),
  };
  for await (const distance of readModels
    .collection<RseDistanceDocument>(rseDistancesCollection)
    .find(distanceFilter)) {
    linkOf(distance.srcRseId, distance.destRseId).distance = distance.distance;
  }

  // Names (deleted RSEs' too), and the keys.
  const rses = new Map<string, RseDocument>();
  for await (const rse of readModels.collection<RseDocument>(rsesCollection).find({})) rses.set(rse.id, rse);
  const answer: Record<string, LinkMetrics> = {};
  for (const [key, link] of metrics) {
    const [srcId = '', dstId = ''] = key.split(' ');
    const src = rses.get(srcId);
    const dst = rses.get(dstId);
    if (!src || !dst) continue;
    link.src_rse = src.rse;
    link.dst_rse = dst.rse;
    if (query.groupByAttribute) {
      const group = (rse: RseDocument) => String(rse.attributes[query.groupByAttribute!] ?? 'UNKNOWN');
      answer[`${group(src)}:${group(dst)}`] = link;
    } else answer[`${src.rse}:${dst.rse}`] = link;
  }
  return answer;
};
