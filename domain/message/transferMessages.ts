import type { RequestEvent, RequestRecord } from '../request/request.ts';
import { requestIn, type ActiveRequest, type RequestBatch } from '../request/requestBatch.ts';
import type { MessagePayload } from './message.ts';
import { pythonDate, pythonDurationSeconds } from './pythonText.ts';

type TransferMessageEvent = Extract<
  RequestEvent,
  {
    type:
      | 'RequestQueued'
      | 'RequestHopsQueued'
      | 'RequestSubmitted'
      | 'RequestSubmissionFailed'
      | 'TransferSucceeded'
      | 'TransferFailed'
      | 'TransferLost';
  }
>;

/** Rucio's event type of a request's message: its type and new state, `transfer-done`, `stagein-queued`. */
const typeOf = (record: RequestRecord, state: string): string => `${record.requestType}-${state}`.toLowerCase();

/** The request as the batch held it before the event; undefined when the batch never held it. */
const before = (batch: RequestBatch | undefined, requestId: string): ActiveRequest | undefined => {
  const request = batch ? requestIn(batch, requestId) : undefined;
  return request?.status === 'Active' ? request : undefined;
};

/** rucio/core/request.py `queue_requests`: one message per request queued (QUEUED, or PREPARING with the preparer). */
const queued = (event: Extract<TransferMessageEvent, { type: 'RequestQueued' }>): MessagePayload[] =>
  event.data.requests.map(({ request, state }) => ({
    eventType: typeOf(request, state),
    payload: {
      'request-id': request.id,
      'request-type': request.requestType.toLowerCase(),
      scope: request.scope,
      name: request.name,
      'dst-rse-id': request.destRseId,
      'dst-rse': request.destRse,
      state: state.toLowerCase(),
      'retry-count': request.retryCount,
      'rule-id': request.ruleId,
      activity: request.activity,
      'file-size': request.bytes,
      bytes: request.bytes,
      'checksum-md5': request.md5,
      'checksum-adler': request.adler32,
      queued_at: pythonDate(request.requestedAt),
    },
  }));

/**
 * rucio/core/transfer.py `set_transfers_state`: the submitter's outcome per request. Rucio's
 * encoder writes the request type and state as enum names here (`TRANSFER`, `SUBMITTED`), unlike
 * the other transfer messages.
 */
const submission = (
  request: ActiveRequest,
  state: 'SUBMITTED' | 'SUBMISSION_FAILED',
  externalId: string | null,
  externalHost: string | null,
  at: string,
): MessagePayload => {
  const { record } = request;
  return {
    eventType: typeOf(record, state),
    payload: {
      'request-id': record.id,
      'request-type': record.requestType,
      scope: record.scope,
      name: record.name,
      dataset: record.attributes.dsName,
      datasetScope: record.attributes.dsScope,
      'src-rse-id': request.sourceRseId,
      'src-rse': request.sourceRse,
      'dst-rse-id': record.destRseId,
      'dst-rse': record.destRse,
      state,
      activity: record.activity,
      'file-size': record.bytes,
      bytes: record.bytes,
      'checksum-md5': record.md5,
      'checksum-adler': record.adler32,
      'external-id': externalId,
      'external-host': externalHost,
      queued_at: pythonDate(at),
      datatype: null,
    },
  };
};

type Outcome = Readonly<{
  state: 'DONE' | 'FAILED' | 'LOST';
  sourceRseId: string | null;
  sourceRse: string | null;
  reason: string | null;
  externalId: string;
  startedAt: string | null;
  transferredAt: string | null;
}>;

/** FTS3's monitoring link of a job (rucio/transfertool/fts3.py `_transfer_link`). */
const fts3Link = (host: string, jobId: string): string => `${host.replace('8446', '8449')}/fts3/ftsmon/#/job/${jobId}`;

/**
 * rucio/core/request.py `add_monitor_message`: what the poller heard from the tool, with the
 * request's facts. The source URL is the one of the source the tool used; `submitted_at` is when
 * the request became SUBMITTED; the file types of source and destination, the guid and the
 * file's datatype are not recorded with requests, so they are null. FTS3 jobs get their
 * monitoring link, as Rucio's FTS3 status report adds it.
 */
const outcome = (request: ActiveRequest, result: Outcome): MessagePayload => {
  const { record } = request;
  const sourceRseId = result.sourceRseId ?? request.sourceRseId;
  const source =
    request.sourcesInUse.find((candidate) => candidate.rseId === sourceRseId) ?? request.sourcesInUse[0] ?? null;
  const destUrl = request.destUrl;
  const scheme = destUrl?.includes(':') ? destUrl.split(':')[0]! : request.transfertool;
  return {
    eventType: typeOf(record, result.state),
    payload: {
      activity: record.activity,
      'request-id': record.id,
      duration: pythonDurationSeconds(result.startedAt, result.transferredAt),
      'checksum-adler': record.adler32,
      'checksum-md5': record.md5,
      'file-size': record.bytes,
      bytes: record.bytes,
      guid: null,
      'previous-request-id': record.previousAttemptId,
      protocol: scheme,
      scope: record.scope,
      name: record.name,
      dataset: record.attributes.dsName,
      datasetScope: record.attributes.dsScope,
      'src-type': null,
      'src-rse': result.sourceRse ?? request.sourceRse,
      'src-url': source?.pfn ?? null,
      'dst-type': null,
      'dst-rse': record.destRse,
      'dst-url': destUrl,
      reason: result.reason,
      'transfer-endpoint': request.externalHost,
      'transfer-id': result.externalId,
      'transfer-link': null,
      created_at: pythonDate(record.requestedAt),
      submitted_at: request.state === 'SUBMITTED' ? pythonDate(request.changedAt) : null,
      started_at: pythonDate(result.startedAt),
      transferred_at: pythonDate(result.transferredAt),
      'tool-id': 'rucio-conveyor',
      account: record.account,
      datatype: null,
      ...(request.transfertool === 'fts3' && request.externalHost
        ? { transfer_link: fts3Link(request.externalHost, result.externalId) }
        : {}),
    },
  };
};

/**
 * The transfer messages of a request event. All but `RequestQueued` read the requests as their
 * batch held them before the event (`requestsBefore`); a request the batch did not hold gives none.
 */
export const transferMessages = (
  event: TransferMessageEvent,
  requestsBefore: RequestBatch | undefined,
): MessagePayload[] => {
  const each = <I extends { requestId: string }>(
    items: readonly I[],
    message: (request: ActiveRequest, item: I) => MessagePayload,
  ): MessagePayload[] =>
    items.flatMap((item) => {
      const request = before(requestsBefore, item.requestId);
      return request ? [message(request, item)] : [];
    });
  switch (event.type) {
    case 'RequestQueued':
      return queued(event);
    // Rucio queues a multihop path's hops through `queue_requests` too: a queued message each.
    case 'RequestHopsQueued':
      return queued({
        type: 'RequestQueued',
        data: {
          requests: event.data.paths.flatMap(({ hops }) =>
            hops.map((request) => ({ request, state: 'QUEUED' as const })),
          ),
        },
      });
    case 'RequestSubmitted':
      return each(event.data.requests, (request, { externalId, externalHost }) =>
        submission(request, 'SUBMITTED', externalId, externalHost, event.data.submittedAt),
      );
    case 'RequestSubmissionFailed':
      return each(event.data.requests, (request) =>
        submission(request, 'SUBMISSION_FAILED', null, request.externalHost, event.data.failedAt),
      );
    case 'TransferSucceeded':
      return each(event.data.requests, (request, item) =>
        outcome(request, {
          state: 'DONE',
          sourceRseId: item.sourceRseId,
          sourceRse: item.sourceRse,
          reason: null,
          externalId: item.externalId,
          startedAt: item.startedAt,
          transferredAt: item.transferredAt,
        }),
      );
    case 'TransferFailed':
      return each(event.data.requests, (request, item) =>
        outcome(request, {
          state: 'FAILED',
          sourceRseId: item.sourceRseId,
          sourceRse: item.sourceRse,
          reason: item.reason,
          externalId: item.externalId,
          startedAt: item.startedAt,
          transferredAt: item.failedAt,
        }),
      );
    case 'TransferLost':
      return each(event.data.requests, (request, item) =>
        outcome(request, {
          state: 'LOST',
          sourceRseId: item.sourceRseId,
          sourceRse: item.sourceRse,
          reason: item.reason,
          externalId: item.externalId,
          startedAt: null,
          transferredAt: null,
        }),
      );
  }
};
