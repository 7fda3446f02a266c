import { compilePythonPattern, UnsupportedPattern, type StartMatcher } from '../shared/pythonRegex.ts';
import type { Workflow, WorkflowOutput } from '../shared/workflow.ts';
import { FINISHED_REQUEST_STATES, type RequestState } from './request.ts';
import { shouldRetry, transferError } from './retries.ts';

/**
 * The conveyor-finisher (Rucio's finisher, behaviour rules 17, 18 and 22): what becomes of each
 * finished request.
 *
 * - DONE: the replica is AVAILABLE (its locks OK, their rules OK when it was their last), and the
 *   request is archived.
 * - FAILED: a source whose error matches a `conveyor.suspicious_pattern` is declared SUSPICIOUS
 *   (§2.4); then the transfer is retried as a new request with the used sources ranked lower,
 *   while retries are left, or given up: the replica UNAVAILABLE, its locks STUCK, their rules
 *   STUCK with the error.
 * - LOST, SUBMISSION_FAILED, NO_SOURCES, ONLY_TAPE_SOURCES, MISMATCH_SCHEME, and SUBMITTING for
 *   longer than the bound (a submitter that died between marking and submitting): the same,
 *   without touching rankings.
 * - An intermediate hop of a multihop path is never retried (Rucio's `should_retry_request`): its
 *   replica ends UNAVAILABLE, and the request it served, failed with it, is retried along a new path.
 */

export type MarkReplicaAvailable = WorkflowOutput<'MarkReplicaAvailable', { requestId: string }>;
export type RetryTransfer = WorkflowOutput<'RetryTransfer', { requestId: string; lowerRankings: boolean }>;
export type GiveUpTransfer = WorkflowOutput<'GiveUpTransfer', { requestId: string; error: string | null }>;
export type DeclareSourceSuspicious = WorkflowOutput<'DeclareSourceSuspicious', { requestId: string; reason: string }>;

export type FinisherOutput = MarkReplicaAvailable | RetryTransfer | GiveUpTransfer | DeclareSourceSuspicious;

export type FinishedRequest = Readonly<{
  requestId: string;
  state: RequestState;
  retryCount: number | null;
  /** The tool's or the conveyor's reason, when the request failed. */
  error: string | null;
  /** When it entered its state. */
  changedAt: string;
  /** Whether a source was in use (a suspicious declaration needs one). */
  hasSource: boolean;
  /** A copy on a multihop path before the request's own: never retried alone (a new path is planned instead). */
  intermediateHop?: boolean;
}>;

export type FinisherSettings = Readonly<{
  retryProtocolMismatches: boolean;
  /** Regular expressions matched at the start of a failure's message (Python's `re.match`). */
  suspiciousPatterns: readonly string[];
  /** Seconds after which a SUBMITTING request is retried (Rucio: 120 minutes). */
  submittingTimeoutSeconds: number;
}>;

/**
 * The patterns, on RE2 (domain/shared/pythonRegex.ts); `/config` refuses one RE2 cannot run, and
 * one stored before that is ignored rather than stopping the finisher.
 */
const compiled = (patterns: readonly string[]): StartMatcher[] =>
  patterns.flatMap((pattern) => {
    try {
      return [compilePythonPattern(pattern.trim())];
    } catch (error) {
      if (error instanceof UnsupportedPattern) return [];
      throw error;
    }
  });

export const finisher: Workflow<
  Readonly<{ now: string }>,
  Readonly<{ requests: readonly FinishedRequest[]; settings: FinisherSettings }>,
  FinisherOutput
> = {
  name: 'conveyor-finisher',
  decide: ({ now }, { requests, settings }) => {
    const suspicious = compiled(settings.suspiciousPatterns);
    const submittingBefore = Date.parse(now) - settings.submittingTimeoutSeconds * 1000;
    return requests.flatMap((request): FinisherOutput[] => {
      const { requestId, state } = request;
      if (state === 'DONE') return [{ type: 'MarkReplicaAvailable', data: { requestId } }];
      if (!FINISHED_REQUEST_STATES.has(state) && state !== 'SUBMITTING') return [];
      if (state === 'SUBMITTING' && Date.parse(request.changedAt) > submittingBefore) return [];
      const outputs: FinisherOutput[] = [];
      if (
        state === 'FAILED' &&
        request.hasSource &&
        request.error &&
        suspicious.some((matches) => matches(request.error!))
      ) {
        outputs.push({ type: 'DeclareSourceSuspicious', data: { requestId, reason: request.error.slice(0, 255) } });
      }
      if (!request.intermediateHop && shouldRetry(state, request.retryCount, settings.retryProtocolMismatches))
        outputs.push({ type: 'RetryTransfer', data: { requestId, lowerRankings: state === 'FAILED' } });
      else outputs.push({ type: 'GiveUpTransfer', data: { requestId, error: transferError(state, request.error) } });
      return outputs;
    });
  },
};
