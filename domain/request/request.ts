import type { Event } from '../shared/event.ts';
import { keysOf } from '../shared/narrowing.ts';

/**
 * A transfer request: one file to bring to one RSE for a rule. Each request is an aggregate with
 * its own stream (`request-<id>`) that records every state Rucio gives it (behaviour-reference
 * §4.2): queued by the rule engine, prepared (a source chosen), released by the throttler,
 * submitted to a transfer tool, reported done, failed or lost by the poller, and archived by the
 * finisher. A retry is a new request that names the previous attempt.
 */

export const requestStreamName = (requestId: string): string => `request-${requestId}`;

export const REQUEST_STATES = [
  'QUEUED',
  'SUBMITTING',
  'SUBMITTED',
  'FAILED',
  'DONE',
  'LOST',
  'NO_SOURCES',
  'ONLY_TAPE_SOURCES',
  'SUBMISSION_FAILED',
  'MISMATCH_SCHEME',
  'SUSPEND',
  'WAITING',
  'PREPARING',
] as const;
export type RequestState = (typeof REQUEST_STATES)[number];

/** The letters Rucio stores and `/requests/list` takes (RequestState in constants.py). */
export const REQUEST_STATE_LETTERS: Readonly<Record<string, RequestState>> = {
  Q: 'QUEUED',
  G: 'SUBMITTING',
  S: 'SUBMITTED',
  F: 'FAILED',
  D: 'DONE',
  L: 'LOST',
  N: 'NO_SOURCES',
  O: 'ONLY_TAPE_SOURCES',
  A: 'SUBMISSION_FAILED',
  M: 'MISMATCH_SCHEME',
  U: 'SUSPEND',
  W: 'WAITING',
  P: 'PREPARING',
};

export type RequestType = 'TRANSFER' | 'STAGEIN' | 'STAGEOUT' | 'UPLOAD' | 'DOWNLOAD';

/** The states in which no source could be chosen (the preparer's or the submitter's verdict). */
export type SourcelessState = 'NO_SOURCES' | 'ONLY_TAPE_SOURCES' | 'MISMATCH_SCHEME';

/** What the rule engine hands to the transfer machinery (Rucio's request `attributes`). */
export type RequestAttributes = Readonly<{
  activity: string;
  sourceReplicaExpression: string | null;
  /** Seconds until the rule expires (the pin lifetime of staging), null without expiry. */
  lifetime: number | null;
  dsScope: string | null;
  dsName: string | null;
  bytes: number;
  md5: string | null;
  adler32: string | null;
  priority: number;
  allowTapeSource: boolean;
}>;

/**
 * A source known to a request with its ranking (Rucio's `sources` rows): 0 unless an earlier
 * attempt that used it failed, each such failure lowering it by one.
 */
export type RankedSource = Readonly<{ rseId: string; rse: string; ranking: number }>;

export type RequestRecord = Readonly<{
  id: string;
  requestType: RequestType;
  scope: string;
  name: string;
  destRseId: string;
  destRse: string;
  ruleId: string;
  account: string;
  activity: string;
  bytes: number;
  md5: string | null;
  adler32: string | null;
  priority: number;
  /** Null for a first attempt (Rucio's NULL), then 1, 2, 3. */
  retryCount: number | null;
  previousAttemptId: string | null;
  attributes: RequestAttributes;
  requestedAt: string;
  /** Sources ranked by earlier attempts (retries copy them); absent on first attempts. */
  sources?: readonly RankedSource[];
}>;

/** A source handed to the transfer tool, with the physical file name read there. */
export type SubmittedSource = RankedSource & Readonly<{ pfn: string }>;

/** The source and destination RSEs of a transfer, and what it moves: what the transfer statistics count. */
type TransferLink = {
  requestId: string;
  scope: string;
  name: string;
  destRseId: string;
  destRse: string;
  sourceRseId: string | null;
  sourceRse: string | null;
  activity: string;
  bytes: number;
  externalId: string;
};

export type RequestQueued = Event<'RequestQueued', { request: RequestRecord; state: RequestState }>;
/** The preparer chose the source and the tool: the request is QUEUED, or WAITING under a transfer limit. */
export type RequestPrepared = Event<
  'RequestPrepared',
  {
    requestId: string;
    state: 'QUEUED' | 'WAITING';
    sourceRseId: string;
    sourceRse: string;
    transfertool: string;
    preparedAt: string;
  }
>;
/** No source could be chosen: NO_SOURCES, ONLY_TAPE_SOURCES or MISMATCH_SCHEME, from PREPARING or QUEUED. */
export type RequestSourcesUnavailable = Event<
  'RequestSourcesUnavailable',
  { requestId: string; previousState: RequestState; state: SourcelessState; reason: string; at: string }
>;
/** The throttler released a WAITING request: it is QUEUED. */
export type RequestReleased = Event<'RequestReleased', { requestId: string; releasedAt: string }>;
/** A request WAITING for more than a day goes back to PREPARING, its source forgotten. */
export type RequestReturnedToPreparing = Event<'RequestReturnedToPreparing', { requestId: string; at: string }>;
/** The submitter took the request (QUEUED → SUBMITTING) with the sources and destination URL it hands to the tool. */
export type RequestSubmitting = Event<
  'RequestSubmitting',
  {
    requestId: string;
    sources: readonly SubmittedSource[];
    destUrl: string;
    transfertool: string;
    submittingAt: string;
  }
>;
/** The tool took the job. */
export type RequestSubmitted = Event<
  'RequestSubmitted',
  { requestId: string; externalId: string; externalHost: string; submittedAt: string }
>;
/** The tool refused the job. */
export type RequestSubmissionFailed = Event<
  'RequestSubmissionFailed',
  { requestId: string; reason: string; failedAt: string }
>;
/** The tool reports the copy verified at the destination. */
export type TransferSucceeded = Event<
  'TransferSucceeded',
  TransferLink & { startedAt: string | null; transferredAt: string }
>;
/** The tool reports the copy failed. */
export type TransferFailed = Event<
  'TransferFailed',
  TransferLink & { reason: string; startedAt: string | null; failedAt: string }
>;
/** The tool does not know the job (a restarted tool, a purged job). */
export type TransferLost = Event<'TransferLost', TransferLink & { reason: string; lostAt: string }>;
/**
 * The finisher is done with the request (Rucio moves it to `requests_history`): `retriedAs` names
 * the new attempt when there is one; `error` is what the failure left on the rules.
 */
export type RequestArchived = Event<
  'RequestArchived',
  {
    requestId: string;
    scope: string;
    name: string;
    destRseId: string;
    state: RequestState;
    retriedAs: string | null;
    error: string | null;
    archivedAt: string;
  }
>;
/**
 * The request is not wanted any more (its lock went away, its rule was deleted). `externalId`
 * and `transfertool` name the tool's job to cancel, when it had one.
 */
export type RequestCancelled = Event<
  'RequestCancelled',
  {
    requestId: string;
    scope: string;
    name: string;
    destRseId: string;
    previousState: RequestState;
    reason: string;
    cancelledAt: string;
    externalId?: string | null;
    transfertool?: string | null;
  }
>;

export type RequestEvent =
  | RequestQueued
  | RequestPrepared
  | RequestSourcesUnavailable
  | RequestReleased
  | RequestReturnedToPreparing
  | RequestSubmitting
  | RequestSubmitted
  | RequestSubmissionFailed
  | TransferSucceeded
  | TransferFailed
  | TransferLost
  | RequestArchived
  | RequestCancelled;

/** Every request event type, each once: a type added to the union and missing here does not compile. */
export const REQUEST_EVENT_TYPE_SET = {
  RequestQueued: true,
  RequestPrepared: true,
  RequestSourcesUnavailable: true,
  RequestReleased: true,
  RequestReturnedToPreparing: true,
  RequestSubmitting: true,
  RequestSubmitted: true,
  RequestSubmissionFailed: true,
  TransferSucceeded: true,
  TransferFailed: true,
  TransferLost: true,
  RequestArchived: true,
  RequestCancelled: true,
} as const satisfies Readonly<Record<RequestEvent['type'], true>>;

export const REQUEST_EVENT_TYPES: readonly RequestEvent['type'][] = keysOf(REQUEST_EVENT_TYPE_SET);

/** States from which a request no longer moves: the finisher archives it (retrying where allowed). */
export const FINISHED_REQUEST_STATES: ReadonlySet<RequestState> = new Set([
  'DONE',
  'FAILED',
  'LOST',
  'NO_SOURCES',
  'ONLY_TAPE_SOURCES',
  'SUBMISSION_FAILED',
  'MISMATCH_SCHEME',
]);

/** States in which a transfer counts against transfer limits (the throttler's "active"). */
export const ACTIVE_REQUEST_STATES: ReadonlySet<RequestState> = new Set(['QUEUED', 'SUBMITTING', 'SUBMITTED']);

export type ActiveRequest = Readonly<{
  status: 'Active';
  record: RequestRecord;
  state: RequestState;
  /** The source chosen by the preparer, or the first source handed to the tool. */
  sourceRseId: string | null;
  sourceRse: string | null;
  transfertool: string | null;
  /** The sources of the current submission (Rucio's `is_using`): a failure ranks them lower. */
  sourcesInUse: readonly SubmittedSource[];
  destUrl: string | null;
  externalId: string | null;
  externalHost: string | null;
  /** Why the request failed, once it did. */
  error: string | null;
  /** When the request last changed state (a SUBMITTING one is retried once this is old). */
  changedAt: string;
}>;

export type Request =
  | Readonly<{ status: 'Absent' }>
  | ActiveRequest
  | Readonly<{
      status: 'Archived';
      record: RequestRecord;
      state: RequestState;
      cancelled: boolean;
      retriedAs: string | null;
    }>;

export const initialRequest = (): Request => ({ status: 'Absent' });

const moved = (
  state: ActiveRequest,
  next: RequestState,
  at: string,
  changes: Partial<ActiveRequest> = {},
): ActiveRequest => ({
  ...state,
  ...changes,
  state: next,
  changedAt: at,
});

export const evolveRequest = (state: Request, event: RequestEvent): Request => {
  if (event.type === 'RequestQueued') {
    if (state.status !== 'Absent') return state;
    return {
      status: 'Active',
      record: event.data.request,
      state: event.data.state,
      sourceRseId: null,
      sourceRse: null,
      transfertool: null,
      sourcesInUse: [],
      destUrl: null,
      externalId: null,
      externalHost: null,
      error: null,
      changedAt: event.data.request.requestedAt,
    };
  }
  if (state.status !== 'Active') return state;
  switch (event.type) {
    case 'RequestPrepared': {
      const { sourceRseId, sourceRse, transfertool, preparedAt } = event.data;
      return moved(state, event.data.state, preparedAt, { sourceRseId, sourceRse, transfertool });
    }
    case 'RequestSourcesUnavailable':
      return moved(state, event.data.state, event.data.at, { error: event.data.reason });
    case 'RequestReleased':
      return moved(state, 'QUEUED', event.data.releasedAt);
    case 'RequestReturnedToPreparing':
      return moved(state, 'PREPARING', event.data.at, { sourceRseId: null, sourceRse: null, transfertool: null });
    case 'RequestSubmitting': {
      const main = event.data.sources[0];
      return moved(state, 'SUBMITTING', event.data.submittingAt, {
        sourcesInUse: event.data.sources,
        destUrl: event.data.destUrl,
        transfertool: event.data.transfertool,
        sourceRseId: main?.rseId ?? state.sourceRseId,
        sourceRse: main?.rse ?? state.sourceRse,
      });
    }
    case 'RequestSubmitted':
      return moved(state, 'SUBMITTED', event.data.submittedAt, {
        externalId: event.data.externalId,
        externalHost: event.data.externalHost,
      });
    case 'RequestSubmissionFailed':
      return moved(state, 'SUBMISSION_FAILED', event.data.failedAt, { error: event.data.reason });
    case 'TransferSucceeded':
      return moved(state, 'DONE', event.data.transferredAt, {
        sourceRseId: event.data.sourceRseId,
        sourceRse: event.data.sourceRse,
      });
    case 'TransferFailed':
      return moved(state, 'FAILED', event.data.failedAt, { error: event.data.reason });
    case 'TransferLost':
      return moved(state, 'LOST', event.data.lostAt, { error: event.data.reason });
    case 'RequestArchived':
      return {
        status: 'Archived',
        record: state.record,
        state: state.state,
        cancelled: false,
        retriedAs: event.data.retriedAs,
      };
    case 'RequestCancelled':
      return { status: 'Archived', record: state.record, state: state.state, cancelled: true, retriedAs: null };
  }
};
