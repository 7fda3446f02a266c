import type { Command } from '../shared/event.ts';
import { requestIdsOf, type RequestEvent } from './request.ts';
import { evolveRequestBatch, type RequestBatch } from './requestBatch.ts';
import { copiesAfterFailedHops, hopRecords, type HopPlan, type PlannedPath } from './transferHops.ts';

/**
 * The decisions of a batch about multihop paths (transferHops.ts): queuing a path's intermediate
 * hops, and failing the copies after a hop that failed, in the same step as its failure.
 */

/**
 * Queues the intermediate hops of initial requests still QUEUED and on no path yet, their records
 * made from the initial request's (`hopRecord`); a path whose initial request moved on (another
 * submitter took it), or whose hops exist already, is left out.
 */
export type QueueRequestHops = Command<
  'QueueRequestHops',
  {
    paths: readonly Readonly<{
      initialRequestId: string;
      /** The RSEs of the path, from the source to the initial request's destination. */
      path: readonly string[];
      hops: readonly HopPlan[];
    }>[];
  }
>;

export const queueRequestHops = ({ data, metadata }: QueueRequestHops, batch: RequestBatch): RequestEvent[] => {
  const seen = new Set<string>();
  const queuedAt = metadata.now.toISOString();
  const paths: PlannedPath[] = [];
  for (const { initialRequestId, path, hops } of data.paths) {
    const initial = batch.requests.get(initialRequestId);
    if (seen.has(initialRequestId) || initial?.status !== 'Active' || initial.state !== 'QUEUED') continue;
    if (initial.transferHop !== null || hops.length === 0 || hops.some((hop) => batch.requests.has(hop.id))) continue;
    seen.add(initialRequestId);
    paths.push({ initialRequestId, path, hops: hopRecords(initial.record, hops, path, queuedAt) });
  }
  return paths.length > 0 ? [{ type: 'RequestHopsQueued', data: { paths, queuedAt } }] : [];
};

/**
 * The events of a decision, followed by the failure of the copies after any intermediate hop
 * those events failed (one `RequestHopsFailed` for all of them).
 */
export const withFailedChains = (events: RequestEvent[], batch: RequestBatch, failedAt: string): RequestEvent[] => {
  if (events.length === 0) return events;
  const after = events.reduce(evolveRequestBatch, batch);
  const failed = copiesAfterFailedHops(
    events.flatMap((event) => (event.type === 'RequestHopsFailed' ? [] : requestIdsOf(event))),
    after.requests,
  );
  return failed.length > 0 ? [...events, { type: 'RequestHopsFailed', data: { requests: failed, failedAt } }] : events;
};
