import { eventTypes, type Event } from '../shared/event.ts';
import type { RequestHopsFailed, RequestHopsQueued, TransferHop } from './transferHops.ts';

/**
 * Transfer requests: each brings one file to one RSE for a rule, through every state Rucio gives
 * it (behaviour-reference §4.2): queued by the rule engine, prepared (a source chosen), released
 * by the throttler, submitted to a transfer tool, reported done, failed or lost by the poller, and
 * archived by the finisher. A retry is a new request that names the previous attempt.
 *
 * Requests live in batches: the requests one step queues for a rule on one RSE share a stream
 * (`requests-<rule>-<rse>-<first request>`, at most `REQUESTS_PER_BATCH`), and each later step
 * writes one event per batch it moves, naming its requests inside (docs/architecture.md, "Event
 * granularity"). A request keeps Rucio's 32-hex id; the read model records its stream, and so
 * does the replica waiting for it. A stream written before batches (`request-<id>`) is a batch of
 * one: its state is the same map, and its events are upcast to the batch shapes.
 */

/** The stream of a request queued before batches. */
export const requestStreamName = (requestId: string): string => `request-${requestId}`;

/** At most this many requests share a batch: its first event stays well under EventStoreDB's 1 MiB append. */
export const REQUESTS_PER_BATCH = 1000;

/**
 * The stream of a batch of requests for one rule on one RSE, named after its first request (unique:
 * request ids are random), so an auditor reading the stream's name sees the rule and the RSE.
 */
export const requestBatchStreamName = (ruleId: string, rse: string, firstRequestId: string): string =>
  `requests-${ruleId}-${rse}-${firstRequestId.slice(0, 16)}`;

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
  /** A copy on the way to another request's destination (Rucio's `is_intermediate_hop`); absent otherwise. */
  isIntermediateHop?: true;
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
  /** An intermediate hop's place in its multihop path (transferHops.ts); absent on other requests. */
  transferHop?: TransferHop;
}>;

/** A source handed to the transfer tool, with the physical file name read there. */
export type SubmittedSource = RankedSource & Readonly<{ pfn: string }>;

/** The source and destination RSEs of a transfer, and what it moves: what the transfer statistics count. */
export type TransferLink = {
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

/** A request to queue: its record, and the state it starts in (QUEUED, or PREPARING when the preparer is on). */
export type QueuedRequest = Readonly<{ request: RequestRecord; state: RequestState }>;
/** Requests queued by one step (a rule's locks on one RSE, a finisher's retries). */
export type RequestQueued = Event<'RequestQueued', { requests: readonly QueuedRequest[] }>;
/** The preparer chose the source and the tool: each request is QUEUED, or WAITING under a transfer limit. */
export type RequestPrepared = Event<
  'RequestPrepared',
  {
    requests: readonly Readonly<{
      requestId: string;
      state: 'QUEUED' | 'WAITING';
      sourceRseId: string;
      sourceRse: string;
      transfertool: string;
    }>[];
    preparedAt: string;
  }
>;
/** No source could be chosen: NO_SOURCES, ONLY_TAPE_SOURCES or MISMATCH_SCHEME, from PREPARING or QUEUED. */
export type RequestSourcesUnavailable = Event<
  'RequestSourcesUnavailable',
  {
    requests: readonly Readonly<{
      requestId: string;
      previousState: RequestState;
      state: SourcelessState;
      reason: string;
    }>[];
    at: string;
  }
>;
/** The throttler released WAITING requests: they are QUEUED. */
export type RequestReleased = Event<'RequestReleased', { requests: readonly RequestItem[]; releasedAt: string }>;
/** Requests WAITING for more than a day go back to PREPARING, their source forgotten. */
export type RequestReturnedToPreparing = Event<
  'RequestReturnedToPreparing',
  { requests: readonly RequestItem[]; at: string }
>;
/** The submitter took requests (QUEUED → SUBMITTING) with the sources and destination URL it hands to the tool. */
export type RequestSubmitting = Event<
  'RequestSubmitting',
  {
    requests: readonly Readonly<{
      requestId: string;
      sources: readonly SubmittedSource[];
      destUrl: string;
      transfertool: string;
    }>[];
    submittingAt: string;
  }
>;
/** The tool took the jobs. */
export type RequestSubmitted = Event<
  'RequestSubmitted',
  {
    requests: readonly Readonly<{ requestId: string; externalId: string; externalHost: string }>[];
    submittedAt: string;
  }
>;
/** The tool refused the jobs. */
export type RequestSubmissionFailed = Event<
  'RequestSubmissionFailed',
  { requests: readonly Readonly<{ requestId: string; reason: string }>[]; failedAt: string }
>;
/** The tool reports copies verified at their destination; each with its own times, as the tool gives them. */
export type TransferSucceeded = Event<
  'TransferSucceeded',
  {
    requests: readonly (TransferLink & {
      startedAt: string | null;
      transferredAt: string;
      /** When the tool started and finished bringing a tape source online (absent: no staging). */
      stagingStartedAt?: string | null;
      stagingFinishedAt?: string | null;
    })[];
  }
>;
/** The tool reports copies failed. */
export type TransferFailed = Event<
  'TransferFailed',
  { requests: readonly (TransferLink & { reason: string; startedAt: string | null; failedAt: string })[] }
>;
/** The tool does not know the jobs (a restarted tool, a purged job). */
export type TransferLost = Event<
  'TransferLost',
  { requests: readonly (TransferLink & { reason: string; lostAt: string })[] }
>;
/**
 * The finisher is done with requests (Rucio moves them to `requests_history`): `retriedAs` names
 * a request's new attempt when there is one; `error` is what the failure left on the rules.
 */
export type RequestArchived = Event<
  'RequestArchived',
  {
    requests: readonly Readonly<{
      requestId: string;
      scope: string;
      name: string;
      destRseId: string;
      state: RequestState;
      retriedAs: string | null;
      error: string | null;
    }>[];
    archivedAt: string;
  }
>;
/**
 * Requests not wanted any more (their lock went away, their rule was deleted). `externalId` and
 * `transfertool` name the tool's job to cancel, when one had one.
 */
export type RequestCancelled = Event<
  'RequestCancelled',
  {
    requests: readonly Readonly<{
      requestId: string;
      scope: string;
      name: string;
      destRseId: string;
      previousState: RequestState;
      reason: string;
      externalId: string | null;
      transfertool: string | null;
    }>[];
    cancelledAt: string;
  }
>;

/** An item that names its request only. */
export type RequestItem = Readonly<{ requestId: string }>;

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
  | RequestCancelled
  | RequestHopsQueued
  | RequestHopsFailed;

/** Every request event type, each once: a type added to the union and missing here does not compile. */
export const REQUEST_EVENT_TYPES = eventTypes<RequestEvent>({
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
  RequestHopsQueued: true,
  RequestHopsFailed: true,
});

/** The ids of the requests an event names. */
export const requestIdsOf = (event: RequestEvent): string[] => {
  switch (event.type) {
    case 'RequestQueued':
      return event.data.requests.map(({ request }) => request.id);
    case 'RequestHopsQueued':
      return event.data.paths.flatMap(({ initialRequestId, hops }) => [...hops.map((hop) => hop.id), initialRequestId]);
    default:
      return event.data.requests.map(({ requestId }) => requestId);
  }
};

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
