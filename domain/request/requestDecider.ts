import { unknownCommand, type Decider } from '../shared/decider.ts';
import type { Command } from '../shared/event.ts';
import {
  evolveRequest,
  FINISHED_REQUEST_STATES,
  initialRequest,
  type ActiveRequest,
  type Request,
  type RequestEvent,
  type RequestRecord,
  type RequestState,
  type SourcelessState,
  type SubmittedSource,
} from './request.ts';

/**
 * What the conveyor does to one request. Every command names the state it moves the request
 * from; on any other state it decides nothing, because the daemons that issue them work from read
 * models that may lag, and several of them may run at once: the first to move a request wins and
 * the others find it moved (Rucio's `transition_request_state` with its state guard).
 */

/** Queues a new request; `state` is QUEUED, or PREPARING when the preparer chooses sources first. */
export type QueueRequest = Command<'QueueRequest', { request: RequestRecord; state: RequestState }>;
/** PREPARING → QUEUED, or WAITING when a transfer limit applies: the preparer's choice of source and tool. */
export type PrepareRequest = Command<
  'PrepareRequest',
  { sourceRseId: string; sourceRse: string; transfertool: string; waiting: boolean }
>;
/** PREPARING or QUEUED → NO_SOURCES, ONLY_TAPE_SOURCES or MISMATCH_SCHEME. */
export type RecordSourcesUnavailable = Command<'RecordSourcesUnavailable', { state: SourcelessState; reason: string }>;
/** WAITING → QUEUED (the throttler). */
export type ReleaseRequest = Command<'ReleaseRequest', Record<string, never>>;
/** WAITING → PREPARING (the throttler, for requests waiting more than a day). */
export type ReturnRequestToPreparing = Command<'ReturnRequestToPreparing', Record<string, never>>;
/** QUEUED → SUBMITTING, before the tool is asked: a crash afterwards leaves a trace the finisher retries. */
export type MarkRequestSubmitting = Command<
  'MarkRequestSubmitting',
  { sources: readonly SubmittedSource[]; destUrl: string; transfertool: string }
>;
/** SUBMITTING → SUBMITTED with the tool's job id. */
export type RecordSubmission = Command<'RecordSubmission', { externalId: string; externalHost: string }>;
/** SUBMITTING → SUBMISSION_FAILED. */
export type RecordSubmissionFailure = Command<'RecordSubmissionFailure', { reason: string }>;
/**
 * SUBMITTED → DONE, FAILED or LOST, as the tool reports its job. Only a report of the request's
 * current job counts; a late report of an earlier job, or one for a request that moved on,
 * changes nothing.
 */
export type RecordTransferReport = Command<
  'RecordTransferReport',
  {
    externalId: string;
    outcome: 'DONE' | 'FAILED' | 'LOST';
    reason: string | null;
    /** The source the tool read, when it says. */
    source: Readonly<{ rseId: string; rse: string }> | null;
    startedAt: string | null;
    finishedAt: string | null;
  }
>;
/**
 * The finisher is done: a finished request (or one stuck SUBMITTING, which the finisher retries)
 * moves to the history, naming its retry when there is one.
 */
export type ArchiveRequest = Command<'ArchiveRequest', { retriedAs: string | null; error: string | null }>;
/** Cancels a request that has not finished; a finished or absent one is left as it is. */
export type CancelRequest = Command<'CancelRequest', { requestId: string; reason: string }>;

export type RequestCommand =
  | QueueRequest
  | PrepareRequest
  | RecordSourcesUnavailable
  | ReleaseRequest
  | ReturnRequestToPreparing
  | MarkRequestSubmitting
  | RecordSubmission
  | RecordSubmissionFailure
  | RecordTransferReport
  | ArchiveRequest
  | CancelRequest;

const activeIn = (state: Request, states: readonly RequestState[]): state is ActiveRequest =>
  state.status === 'Active' && states.includes(state.state);

export const queueRequest = ({ data }: QueueRequest, state: Request): RequestEvent[] =>
  state.status === 'Absent' ? [{ type: 'RequestQueued', data: { request: data.request, state: data.state } }] : [];

export const prepareRequest = ({ data, metadata }: PrepareRequest, state: Request): RequestEvent[] => {
  if (!activeIn(state, ['PREPARING'])) return [];
  const { sourceRseId, sourceRse, transfertool } = data;
  return [
    {
      type: 'RequestPrepared',
      data: {
        requestId: state.record.id,
        state: data.waiting ? 'WAITING' : 'QUEUED',
        sourceRseId,
        sourceRse,
        transfertool,
        preparedAt: metadata.now.toISOString(),
      },
    },
  ];
};

export const recordSourcesUnavailable = (
  { data, metadata }: RecordSourcesUnavailable,
  state: Request,
): RequestEvent[] => {
  if (!activeIn(state, ['PREPARING', 'QUEUED'])) return [];
  return [
    {
      type: 'RequestSourcesUnavailable',
      data: {
        requestId: state.record.id,
        previousState: state.state,
        state: data.state,
        reason: data.reason,
        at: metadata.now.toISOString(),
      },
    },
  ];
};

export const releaseRequest = ({ metadata }: ReleaseRequest, state: Request): RequestEvent[] =>
  activeIn(state, ['WAITING'])
    ? [{ type: 'RequestReleased', data: { requestId: state.record.id, releasedAt: metadata.now.toISOString() } }]
    : [];

export const returnRequestToPreparing = ({ metadata }: ReturnRequestToPreparing, state: Request): RequestEvent[] =>
  activeIn(state, ['WAITING'])
    ? [{ type: 'RequestReturnedToPreparing', data: { requestId: state.record.id, at: metadata.now.toISOString() } }]
    : [];

export const markRequestSubmitting = ({ data, metadata }: MarkRequestSubmitting, state: Request): RequestEvent[] => {
  if (!activeIn(state, ['QUEUED'])) return [];
  const { sources, destUrl, transfertool } = data;
  return [
    {
      type: 'RequestSubmitting',
      data: { requestId: state.record.id, sources, destUrl, transfertool, submittingAt: metadata.now.toISOString() },
    },
  ];
};

export const recordSubmission = ({ data, metadata }: RecordSubmission, state: Request): RequestEvent[] => {
  if (!activeIn(state, ['SUBMITTING'])) return [];
  const { externalId, externalHost } = data;
  return [
    {
      type: 'RequestSubmitted',
      data: { requestId: state.record.id, externalId, externalHost, submittedAt: metadata.now.toISOString() },
    },
  ];
};

export const recordSubmissionFailure = ({ data, metadata }: RecordSubmissionFailure, state: Request): RequestEvent[] =>
  activeIn(state, ['SUBMITTING'])
    ? [
        {
          type: 'RequestSubmissionFailed',
          data: { requestId: state.record.id, reason: data.reason, failedAt: metadata.now.toISOString() },
        },
      ]
    : [];

export const recordTransferReport = ({ data, metadata }: RecordTransferReport, state: Request): RequestEvent[] => {
  if (!activeIn(state, ['SUBMITTED']) || state.externalId !== data.externalId) return [];
  const { record } = state;
  const source =
    data.source ?? (state.sourceRseId && state.sourceRse ? { rseId: state.sourceRseId, rse: state.sourceRse } : null);
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
    externalId: data.externalId,
  };
  const at = data.finishedAt ?? metadata.now.toISOString();
  switch (data.outcome) {
    case 'DONE':
      return [{ type: 'TransferSucceeded', data: { ...link, startedAt: data.startedAt, transferredAt: at } }];
    case 'FAILED':
      return [
        {
          type: 'TransferFailed',
          data: { ...link, reason: data.reason ?? 'Transfer failed', startedAt: data.startedAt, failedAt: at },
        },
      ];
    case 'LOST':
      return [
        {
          type: 'TransferLost',
          data: {
            ...link,
            reason: data.reason ?? 'Transfer job unknown to the transfer tool',
            lostAt: metadata.now.toISOString(),
          },
        },
      ];
  }
};

export const archiveRequest = ({ data, metadata }: ArchiveRequest, state: Request): RequestEvent[] => {
  if (state.status !== 'Active' || (!FINISHED_REQUEST_STATES.has(state.state) && state.state !== 'SUBMITTING'))
    return [];
  const { id, scope, name, destRseId } = state.record;
  return [
    {
      type: 'RequestArchived',
      data: {
        requestId: id,
        scope,
        name,
        destRseId,
        state: state.state,
        retriedAs: data.retriedAs,
        error: data.error,
        archivedAt: metadata.now.toISOString(),
      },
    },
  ];
};

export const cancelRequest = ({ data, metadata }: CancelRequest, state: Request): RequestEvent[] => {
  if (state.status !== 'Active') return [];
  const { scope, name, destRseId } = state.record;
  return [
    {
      type: 'RequestCancelled',
      data: {
        requestId: data.requestId,
        scope,
        name,
        destRseId,
        previousState: state.state,
        reason: data.reason,
        cancelledAt: metadata.now.toISOString(),
        externalId: state.externalId,
        transfertool: state.transfertool,
      },
    },
  ];
};

export const decideRequest = (command: RequestCommand, state: Request): RequestEvent[] => {
  switch (command.type) {
    case 'QueueRequest':
      return queueRequest(command, state);
    case 'PrepareRequest':
      return prepareRequest(command, state);
    case 'RecordSourcesUnavailable':
      return recordSourcesUnavailable(command, state);
    case 'ReleaseRequest':
      return releaseRequest(command, state);
    case 'ReturnRequestToPreparing':
      return returnRequestToPreparing(command, state);
    case 'MarkRequestSubmitting':
      return markRequestSubmitting(command, state);
    case 'RecordSubmission':
      return recordSubmission(command, state);
    case 'RecordSubmissionFailure':
      return recordSubmissionFailure(command, state);
    case 'RecordTransferReport':
      return recordTransferReport(command, state);
    case 'ArchiveRequest':
      return archiveRequest(command, state);
    case 'CancelRequest':
      return cancelRequest(command, state);
    default:
      return unknownCommand('request', command);
  }
};

export const requestDecider: Decider<Request, RequestCommand, RequestEvent> = {
  name: 'request',
  initialState: initialRequest,
  evolve: evolveRequest,
  decide: decideRequest,
};
