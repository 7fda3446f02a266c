import { createHash } from 'node:crypto';
import type { RankedSource, RequestRecord, RequestState } from './request.ts';
import type { ActiveRequest } from './requestBatch.ts';

/**
 * Rucio's `should_retry_request` and `requeue_and_archive` (behaviour rule 22): which finished
 * requests are tried again, and the new request a retry queues.
 */

/** Rucio's hardcoded bound: a transfer is attempted at most four times (retry counts NULL, 1, 2, 3). */
export const MAX_RETRIES = 3;

/**
 * SUBMITTING (stuck past the bound) is always retried; NO_SOURCES and ONLY_TAPE_SOURCES never;
 * the others while the retry count is below 3, MISMATCH_SCHEME only when configured.
 */
export const shouldRetry = (
  state: RequestState,
  retryCount: number | null,
  retryProtocolMismatches: boolean,
): boolean => {
  if (state === 'SUBMITTING') return true;
  if (state === 'NO_SOURCES' || state === 'ONLY_TAPE_SOURCES') return false;
  if (retryCount !== null && retryCount >= MAX_RETRIES) return false;
  if (state === 'MISMATCH_SCHEME') return retryProtocolMismatches;
  return true;
};

/** The error a request that is not retried leaves on its rules (Rucio's `get_transfer_error`). */
export const transferError = (state: RequestState, reason: string | null): string | null => {
  switch (state) {
    case 'NO_SOURCES':
    case 'ONLY_TAPE_SOURCES':
      return `NO_SOURCES:${state}`;
    case 'SUBMISSION_FAILED':
      return `SUBMISSION_FAILED:${reason ?? state}`;
    case 'SUBMITTING':
      return 'SUBMISSION_FAILED:Too long time in submitting state';
    case 'LOST':
      return 'TRANSFER_FAILED:Transfer job on the transfer tool is lost';
    case 'FAILED':
      return `TRANSFER_FAILED:${reason ?? 'unknown reason'}`;
    case 'MISMATCH_SCHEME':
      return `MISMATCH_SCHEME:${state}`;
    default:
      return reason;
  }
};

/**
 * The id of the retry of a request: derived from the failed request's id, so a finisher job run
 * again after a crash queues the same retry instead of a second one. 32 hex digits, as Rucio's ids.
 */
export const retryIdOf = (requestId: string): string =>
  createHash('sha1').update(`${requestId}/retry`).digest('hex').slice(0, 32);

/**
 * The sources the retry starts from: every source known to the old request, those it used
 * (Rucio's `is_using`) ranked one lower when the transfer itself failed (`lowerRankings`).
 */
const retrySources = (request: ActiveRequest, lowerRankings: boolean): RankedSource[] => {
  const sources = new Map<string, RankedSource>((request.record.sources ?? []).map((source) => [source.rseId, source]));
  for (const used of request.sourcesInUse) {
    const known = sources.get(used.rseId) ?? { rseId: used.rseId, rse: used.rse, ranking: used.ranking };
    sources.set(used.rseId, lowerRankings ? { ...known, ranking: known.ranking - 1 } : known);
  }
  return [...sources.values()];
};

/**
 * The new request of a retry: a new id, the old one as `previous_attempt_id`, the retry count
 * one higher (NULL becomes 1; a SUBMITTING request keeps its count), the same attributes, and the
 * sources with their rankings.
 */
export const retryRecord = (request: ActiveRequest, requestedAt: string, lowerRankings: boolean): RequestRecord => {
  const { record } = request;
  const retryCount =
    record.retryCount === null ? 1 : request.state === 'SUBMITTING' ? record.retryCount : record.retryCount + 1;
  return {
    ...record,
    id: retryIdOf(record.id),
    previousAttemptId: record.id,
    retryCount,
    requestedAt,
    sources: retrySources(request, lowerRankings),
  };
};
