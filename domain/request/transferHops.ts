import { createHash } from 'node:crypto';
import type { Event } from '../shared/event.ts';
import type { RequestRecord, RequestState } from './request.ts';
import type { ActiveRequest } from './requestBatch.ts';

/**
 * Multihop transfers (Rucio's `transfer_hops`): when the cheapest path to a request's destination
 * passes through other RSEs, the submitter queues one request per copy before the request's own
 * (an intermediate hop), in the request's batch, and each request of the path knows where it
 * stands in it. The request that started it all (the initial request, Rucio's
 * `initial_request_id`) is the path's last copy, and its replica holds the rule's lock; an
 * intermediate hop's replica is made with a tombstone so that the reaper removes it once the
 * path no longer needs it. A request waits while the copy before it is active; a failed
 * intermediate hop fails the copies after it, and only the initial request is retried.
 */

/** Rucio's rule id of intermediate hops: they serve a request, not a rule. */
export const INTERMEDIATE_HOP_RULE_ID = '0'.repeat(32);

/** Rucio's reason for the copies after a failed one. */
export const UNUSED_HOP_REASON = 'Unused hop in multi-hop';

/** Where a request stands in a multihop path. */
export type TransferHop = Readonly<{
  initialRequestId: string;
  /** The copy before this one; null for the path's first copy. */
  previousHopId: string | null;
  /** The copy after this one; null for the initial request, the path's last copy. */
  nextHopId: string | null;
  /** The RSEs of the whole path, from the source to the initial request's destination. */
  path: readonly string[];
}>;

/** A multihop path chosen for an initial request: the intermediate hops queued, in path order. */
export type PlannedPath = Readonly<{
  initialRequestId: string;
  path: readonly string[];
  hops: readonly RequestRecord[];
}>;

/** The submitter queued the intermediate hops of requests' paths (each hop's record carries its `transferHop`). */
export type RequestHopsQueued = Event<'RequestHopsQueued', { paths: readonly PlannedPath[]; queuedAt: string }>;

/** A failed intermediate hop failed the copies after it that were still waiting or under way (Rucio's `handle_failed_intermediate_hop`). */
export type RequestHopsFailed = Event<
  'RequestHopsFailed',
  {
    requests: readonly Readonly<{
      requestId: string;
      previousState: RequestState;
      failedHopId: string;
      reason: string;
    }>[];
    failedAt: string;
  }
>;

/** Whether a request is a copy on the way to another request's destination (Rucio's `is_intermediate_hop`). */
export const isIntermediateHop = (record: RequestRecord): boolean => record.attributes.isIntermediateHop === true;

/** States from which the copies after a failed hop are failed with it (Rucio: QUEUED and SUBMITTED). */
const ABANDONED_STATES: ReadonlySet<RequestState> = new Set(['QUEUED', 'SUBMITTED']);

/** States in which an intermediate hop has failed for good (it is never retried). */
const HOP_FAILED_STATES: ReadonlySet<RequestState> = new Set([
  'FAILED',
  'LOST',
  'SUBMISSION_FAILED',
  'NO_SOURCES',
  'ONLY_TAPE_SOURCES',
  'MISMATCH_SCHEME',
]);

/**
 * The copies to fail after intermediate hops that `moved` put in a failed state: every copy after
 * each of them along its path that is QUEUED or SUBMITTED in `after` (the batch once the step's
 * other events are folded).
 */
export const copiesAfterFailedHops = (
  moved: readonly string[],
  after: ReadonlyMap<string, ActiveRequest | { status: 'Archived' }>,
): RequestHopsFailed['data']['requests'] => {
  const failed: { requestId: string; previousState: RequestState; failedHopId: string; reason: string }[] = [];
  const seen = new Set<string>();
  for (const hopId of moved) {
    const hop = after.get(hopId);
    if (hop?.status !== 'Active' || !HOP_FAILED_STATES.has(hop.state) || !isIntermediateHop(hop.record)) continue;
    for (let next = hop.transferHop?.nextHopId ?? null; next !== null && !seen.has(next);) {
      seen.add(next);
      const request = after.get(next);
      if (request?.status !== 'Active') break;
      if (ABANDONED_STATES.has(request.state))
        failed.push({ requestId: next, previousState: request.state, failedHopId: hopId, reason: UNUSED_HOP_REASON });
      next = request.transferHop?.nextHopId ?? null;
    }
  }
  return failed;
};

/** The id of a path's intermediate hop: derived from the initial request and the copy's place, so a step made again queues the same hops. */
export const hopIdOf = (initialRequestId: string, index: number): string =>
  createHash('sha1').update(`${initialRequestId}/hop/${index}`).digest('hex').slice(0, 32);

/** A copy of a path to queue as an intermediate hop: where it goes and where it reads. */
export type HopPlan = Readonly<{ id: string; destRseId: string; destRse: string; sourceRse: string }>;

/**
 * The record of an intermediate hop, as Rucio makes it from the initial request: the same file,
 * account and activity, Rucio's placeholder rule, a retry count of 0, and attributes that read
 * from the hop's own source only and mark it intermediate.
 */
export const hopRecord = (
  initial: RequestRecord,
  hop: HopPlan,
  transferHop: TransferHop,
  requestedAt: string,
): RequestRecord => ({
  id: hop.id,
  requestType: initial.requestType,
  scope: initial.scope,
  name: initial.name,
  destRseId: hop.destRseId,
  destRse: hop.destRse,
  ruleId: INTERMEDIATE_HOP_RULE_ID,
  account: initial.account,
  activity: initial.activity,
  bytes: initial.bytes,
  md5: initial.md5,
  adler32: initial.adler32,
  priority: initial.priority,
  retryCount: 0,
  previousAttemptId: null,
  attributes: {
    activity: initial.activity,
    sourceReplicaExpression: hop.sourceRse,
    lifetime: null,
    dsScope: null,
    dsName: null,
    bytes: initial.bytes,
    md5: initial.md5,
    adler32: initial.adler32,
    priority: initial.priority,
    allowTapeSource: true,
    isIntermediateHop: true,
  },
  requestedAt,
  transferHop,
});

/** The records of a path's hops, each linked to the copies before and after it. */
export const hopRecords = (
  initial: RequestRecord,
  hops: readonly HopPlan[],
  path: readonly string[],
  requestedAt: string,
): RequestRecord[] =>
  hops.map((hop, index) =>
    hopRecord(
      initial,
      hop,
      {
        initialRequestId: initial.id,
        previousHopId: index === 0 ? null : hops[index - 1]!.id,
        nextHopId: hops[index + 1]?.id ?? initial.id,
        path,
      },
      requestedAt,
    ),
  );
