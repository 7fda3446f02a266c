import { unknownCommand, type Decider } from '../shared/decider.ts';
import type { Command } from '../shared/event.ts';
import {
  FINISHED_REQUEST_STATES,
  type QueuedRequest,
  type RequestEvent,
  type RequestItem,
  type RequestState,
  type SourcelessState,
  type SubmittedSource,
  type TransferFailed,
  type TransferLost,
  type TransferSucceeded,
} from './request.ts';
import {
  evolveRequestBatch,
  initialRequestBatch,
  requestIn,
  type ActiveRequest,
  type Request,
  type RequestBatch,
} from './requestBatch.ts';
import { queueRequestHops, withFailedChains, type QueueRequestHops } from './requestHopDecisions.ts';

/**
 * What the conveyor does to the requests of one batch stream (request.ts). Each command names the
 * requests it moves and, through its type, the state it moves each from; a request in any other
 * state is left out of the event, because the daemons that issue these commands work from read
 * models that may lag, and several may run at once: the first to move a request wins and the
 * others find it moved (Rucio's `transition_request_state` with its state guard). A command
 * records the requests it moves as one event; one that moves none records nothing. A request
 * named twice in one command is moved by the first item only.
 */

/** Queues new requests, QUEUED, or PREPARING when the preparer chooses sources first. */
export type QueueRequests = Command<'QueueRequests', { requests: readonly QueuedRequest[] }>;
/** PREPARING → QUEUED, or WAITING when a transfer limit applies: the preparer's choice of source and tool. */
export type PrepareRequests = Command<
  'PrepareRequests',
  {
    requests: readonly Readonly<{
      requestId: string;
      sourceRseId: string;
      sourceRse: string;
      transfertool: string;
      waiting: boolean;
    }>[];
  }
>;
/** PREPARING or QUEUED → NO_SOURCES, ONLY_TAPE_SOURCES or MISMATCH_SCHEME. */
export type RecordSourcesUnavailable = Command<
  'RecordSourcesUnavailable',
  { requests: readonly Readonly<{ requestId: string; state: SourcelessState; reason: string }>[] }
>;
/** WAITING → QUEUED (the throttler). */
export type ReleaseRequests = Command<'ReleaseRequests', { requests: readonly RequestItem[] }>;
/** WAITING → PREPARING (the throttler, for requests waiting more than a day). */
export type ReturnRequestsToPreparing = Command<'ReturnRequestsToPreparing', { requests: readonly RequestItem[] }>;
/** QUEUED → SUBMITTING, before the tool is asked: a crash afterwards leaves a trace the finisher retries. */
export type MarkRequestsSubmitting = Command<
  'MarkRequestsSubmitting',
  {
    requests: readonly Readonly<{
      requestId: string;
      sources: readonly SubmittedSource[];
      destUrl: string;
      transfertool: string;
    }>[];
  }
>;
/** SUBMITTING → SUBMITTED with the tool's job id. */
export type RecordSubmissions = Command<
  'RecordSubmissions',
  { requests: readonly Readonly<{ requestId: string; externalId: string; externalHost: string }>[] }
>;
/** SUBMITTING → SUBMISSION_FAILED. */
export type RecordSubmissionFailures = Command<
  'RecordSubmissionFailures',
  { requests: readonly Readonly<{ requestId: string; reason: string }>[] }
>;

/** What a tool reported of one request's job. */
export type TransferReport = Readonly<{
  requestId: string;
  externalId: string;
  outcome: 'DONE' | 'FAILED' | 'LOST';
  reason: string | null;
  /** The source the tool read, when it says. */
  source: Readonly<{ rseId: string; rse: string }> | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** When the tool brought a tape source online, when it did. */
  stagingStartedAt?: string | null;
  stagingFinishedAt?: string | null;
}>;

/**
 * SUBMITTED → DONE, FAILED or LOST, as the tool reports each job: one event per outcome. Only a
 * report of a request's current job counts; a late report of an earlier job, or one for a request
 * that moved on, changes nothing.
 */
export type RecordTransferReports = Command<'RecordTransferReports', { requests: readonly TransferReport[] }>;
/**
 * The finisher is done: finished requests (or ones stuck SUBMITTING, which the finisher retries)
 * move to the history, each naming its retry when there is one.
 */
export type ArchiveRequests = Command<
  'ArchiveRequests',
  { requests: readonly Readonly<{ requestId: string; retriedAs: string | null; error: string | null }>[] }
>;
/** Cancels requests that have not finished; a finished or absent one is left as it is. */
export type CancelRequests = Command<
  'CancelRequests',
  { requests: readonly Readonly<{ requestId: string; reason: string }>[] }
>;

export type RequestCommand =
  | QueueRequests
  | QueueRequestHops
  | PrepareRequests
  | RecordSourcesUnavailable
  | ReleaseRequests
  | ReturnRequestsToPreparing
  | MarkRequestsSubmitting
  | RecordSubmissions
  | RecordSubmissionFailures
  | RecordTransferReports
  | ArchiveRequests
  | CancelRequests;

const activeIn = (state: Request, states: readonly RequestState[]): state is ActiveRequest =>
  state.status === 'Active' && states.includes(state.state);

/**
 * The items whose request is in one of `states`, each with the request (each request once: a
 * second item naming it is decided after the first moved it, so it no longer applies).
 */
const applying = <I extends RequestItem>(
  batch: RequestBatch,
  items: readonly I[],
  states: readonly RequestState[] | ((request: Request, item: I) => boolean),
): { item: I; request: ActiveRequest }[] => {
  const seen = new Set<string>();
  const found: { item: I; request: ActiveRequest }[] = [];
  for (const item of items) {
    if (seen.has(item.requestId)) continue;
    seen.add(item.requestId);
    const request = requestIn(batch, item.requestId);
    const applies = typeof states === 'function' ? states(request, item) : activeIn(request, states);
    if (applies && request.status === 'Active') found.push({ item, request });
  }
  return found;
};

/** One event for the requests that moved, none when none did. */
const recorded = <E extends Exclude<RequestEvent, { type: 'RequestHopsQueued' }>>(event: E): RequestEvent[] =>
  event.data.requests.length > 0 ? [event] : [];

export const queueRequests = ({ data }: QueueRequests, batch: RequestBatch): RequestEvent[] => {
  const seen = new Set<string>();
  const requests = data.requests.filter(({ request }) => {
    if (seen.has(request.id) || batch.requests.has(request.id)) return false;
    seen.add(request.id);
    return true;
  });
  return recorded({ type: 'RequestQueued', data: { requests } });
};

export const prepareRequests = ({ data, metadata }: PrepareRequests, batch: RequestBatch): RequestEvent[] =>
  recorded({
    type: 'RequestPrepared',
    data: {
      requests: applying(batch, data.requests, ['PREPARING']).map(({ item }) => ({
        requestId: item.requestId,
        state: item.waiting ? 'WAITING' : 'QUEUED',
        sourceRseId: item.sourceRseId,
        sourceRse: item.sourceRse,
        transfertool: item.transfertool,
      })),
      preparedAt: metadata.now.toISOString(),
    },
  });

export const recordSourcesUnavailable = (
  { data, metadata }: RecordSourcesUnavailable,
  batch: RequestBatch,
): RequestEvent[] =>
  recorded({
    type: 'RequestSourcesUnavailable',
    data: {
      requests: applying(batch, data.requests, ['PREPARING', 'QUEUED']).map(({ item, request }) => ({
        requestId: item.requestId,
        previousState: request.state,
        state: item.state,
        reason: item.reason,
      })),
      at: metadata.now.toISOString(),
    },
  });

export const releaseRequests = ({ data, metadata }: ReleaseRequests, batch: RequestBatch): RequestEvent[] =>
  recorded({
    type: 'RequestReleased',
    data: {
      requests: applying(batch, data.requests, ['WAITING']).map(({ item }) => ({ requestId: item.requestId })),
      releasedAt: metadata.now.toISOString(),
    },
  });

export const returnRequestsToPreparing = (
  { data, metadata }: ReturnRequestsToPreparing,
  batch: RequestBatch,
): RequestEvent[] =>
  recorded({
    type: 'RequestReturnedToPreparing',
    data: {
      requests: applying(batch, data.requests, ['WAITING']).map(({ item }) => ({ requestId: item.requestId })),
      at: metadata.now.toISOString(),
    },
  });

export const markRequestsSubmitting = (
  { data, metadata }: MarkRequestsSubmitting,
  batch: RequestBatch,
): RequestEvent[] =>
  recorded({
    type: 'RequestSubmitting',
    data: {
      requests: applying(batch, data.requests, ['QUEUED']).map(({ item }) => ({
        requestId: item.requestId,
        sources: item.sources,
        destUrl: item.destUrl,
        transfertool: item.transfertool,
      })),
      submittingAt: metadata.now.toISOString(),
    },
  });

export const recordSubmissions = ({ data, metadata }: RecordSubmissions, batch: RequestBatch): RequestEvent[] =>
  recorded({
    type: 'RequestSubmitted',
    data: {
      requests: applying(batch, data.requests, ['SUBMITTING']).map(({ item }) => ({
        requestId: item.requestId,
        externalId: item.externalId,
        externalHost: item.externalHost,
      })),
      submittedAt: metadata.now.toISOString(),
    },
  });

export const recordSubmissionFailures = (
  { data, metadata }: RecordSubmissionFailures,
  batch: RequestBatch,
): RequestEvent[] =>
  recorded({
    type: 'RequestSubmissionFailed',
    data: {
      requests: applying(batch, data.requests, ['SUBMITTING']).map(({ item }) => ({
        requestId: item.requestId,
        reason: item.reason,
      })),
      failedAt: metadata.now.toISOString(),
    },
  });

export const recordTransferReports = (
  { data, metadata }: RecordTransferReports,
  batch: RequestBatch,
): RequestEvent[] => {
  const now = metadata.now.toISOString();
  const succeeded: TransferSucceeded['data']['requests'][number][] = [];
  const failed: TransferFailed['data']['requests'][number][] = [];
  const lost: TransferLost['data']['requests'][number][] = [];
  const current = applying(
    batch,
    data.requests,
    (request, report) => activeIn(request, ['SUBMITTED']) && request.externalId === report.externalId,
  );
  for (const { item, request } of current) {
    const { record } = request;
    const source =
      item.source ??
      (request.sourceRseId && request.sourceRse ? { rseId: request.sourceRseId, rse: request.sourceRse } : null);
    const link = {
      requestId: record.id,
      scope: record.scope,
      name: record.name,
      destRseId: record.destRseId,
      destRse: record.destRse,
      sourceRseId: source?.rseId ?? null,
      sourceRse: source?.rse ?? null,
      activity: record.activity,
      bytes: record.bytes,
      externalId: item.externalId,
    };
    const at = item.finishedAt ?? now;
    const staging =
      item.stagingStartedAt || item.stagingFinishedAt
        ? { stagingStartedAt: item.stagingStartedAt ?? null, stagingFinishedAt: item.stagingFinishedAt ?? null }
        : {};
    if (item.outcome === 'DONE') succeeded.push({ ...link, startedAt: item.startedAt, transferredAt: at, ...staging });
    else if (item.outcome === 'FAILED')
      failed.push({ ...link, reason: item.reason ?? 'Transfer failed', startedAt: item.startedAt, failedAt: at });
    else lost.push({ ...link, reason: item.reason ?? 'Transfer job unknown to the transfer tool', lostAt: now });
  }
  return [
    ...recorded({ type: 'TransferSucceeded', data: { requests: succeeded } }),
    ...recorded({ type: 'TransferFailed', data: { requests: failed } }),
    ...recorded({ type: 'TransferLost', data: { requests: lost } }),
  ];
};

export const archiveRequests = ({ data, metadata }: ArchiveRequests, batch: RequestBatch): RequestEvent[] =>
  recorded({
    type: 'RequestArchived',
    data: {
      requests: applying(
        batch,
        data.requests,
        (request) =>
          request.status === 'Active' && (FINISHED_REQUEST_STATES.has(request.state) || request.state === 'SUBMITTING'),
      ).map(({ item, request }) => ({
        requestId: item.requestId,
        scope: request.record.scope,
        name: request.record.name,
        destRseId: request.record.destRseId,
        state: request.state,
        retriedAs: item.retriedAs,
        error: item.error,
      })),
      archivedAt: metadata.now.toISOString(),
    },
  });

export const cancelRequests = ({ data, metadata }: CancelRequests, batch: RequestBatch): RequestEvent[] =>
  recorded({
    type: 'RequestCancelled',
    data: {
      requests: applying(batch, data.requests, (request) => request.status === 'Active').map(({ item, request }) => ({
        requestId: item.requestId,
        scope: request.record.scope,
        name: request.record.name,
        destRseId: request.record.destRseId,
        previousState: request.state,
        reason: item.reason,
        externalId: request.externalId,
        transfertool: request.transfertool,
      })),
      cancelledAt: metadata.now.toISOString(),
    },
  });

/** A decision, with the copies after any intermediate hop it failed failed too (transferHops.ts). */
export const decideRequests = (command: RequestCommand, batch: RequestBatch): RequestEvent[] =>
  withFailedChains(decideOne(command, batch), batch, command.metadata.now.toISOString());

const decideOne = (command: RequestCommand, batch: RequestBatch): RequestEvent[] => {
  switch (command.type) {
    case 'QueueRequests':
      return queueRequests(command, batch);
    case 'QueueRequestHops':
      return queueRequestHops(command, batch);
    case 'PrepareRequests':
      return prepareRequests(command, batch);
    case 'RecordSourcesUnavailable':
      return recordSourcesUnavailable(command, batch);
    case 'ReleaseRequests':
      return releaseRequests(command, batch);
    case 'ReturnRequestsToPreparing':
      return returnRequestsToPreparing(command, batch);
    case 'MarkRequestsSubmitting':
      return markRequestsSubmitting(command, batch);
    case 'RecordSubmissions':
      return recordSubmissions(command, batch);
    case 'RecordSubmissionFailures':
      return recordSubmissionFailures(command, batch);
    case 'RecordTransferReports':
      return recordTransferReports(command, batch);
    case 'ArchiveRequests':
      return archiveRequests(command, batch);
    case 'CancelRequests':
      return cancelRequests(command, batch);
    default:
      return unknownCommand('request', command);
  }
};

/** The decider of a request stream: a batch (`requests-...`), or a single request written before batches (`request-<id>`). */
export const requestDecider: Decider<RequestBatch, RequestCommand, RequestEvent> = {
  name: 'requestBatch',
  initialState: initialRequestBatch,
  evolve: evolveRequestBatch,
  decide: decideRequests,
};
