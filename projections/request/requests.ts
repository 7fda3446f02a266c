import {
  REQUEST_EVENT_TYPES,
  type RankedSource,
  type RequestEvent,
  type RequestRecord,
  type RequestState,
  type RequestType,
} from '../../domain/request/request.ts';
import { didKey } from '../../domain/did/did.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';

/**
 * Transfer requests with Rucio's column names: the active ones (`requests`) and, once archived
 * or cancelled, the finished ones (`requests_history`), which the history routes answer from.
 * Besides Rucio's columns a document keeps what the conveyor's daemons select on: when it entered
 * its state (`changed_at`), the rankings of its sources, and the sources handed to the tool.
 */
export type RequestDocument = Projected<{
  id: string;
  request_type: RequestType;
  scope: string;
  name: string;
  didKey: string;
  did_type: string;
  dest_rse_id: string;
  dest_rse: string;
  source_rse_id: string | null;
  source_rse: string | null;
  attributes: Readonly<Record<string, unknown>>;
  state: RequestState;
  external_id: string | null;
  external_host: string | null;
  retry_count: number | null;
  err_msg: string | null;
  previous_attempt_id: string | null;
  rule_id: string;
  activity: string;
  bytes: number;
  md5: string | null;
  adler32: string | null;
  dest_url: string | null;
  submitted_at: string | null;
  started_at: string | null;
  transferred_at: string | null;
  account: string;
  requested_at: string;
  priority: number;
  transfertool: string | null;
  created_at: string;
  updated_at: string;
  /** When the request entered its state. */
  changed_at?: string;
  /** Rankings from earlier attempts (Rucio's `sources` rows). */
  sources?: readonly RankedSource[];
  /** The request this one was retried as, once archived. */
  retried_as?: string | null;
}>;

/**
 * The conveyor pages through a state sorted by `requested_at` or `changed_at`, then `_id`
 * (conveyorQueries.ts). Requests made by one rule share `requested_at`, and a step stamps a
 * thousand requests with one `changed_at`: without `_id` in the index SQLite sorts every request
 * of the state on each page instead of walking the index.
 */
export const requestsCollection: CollectionSpec = {
  name: 'requests',
  indexes: [
    { fields: ['didKey', 'dest_rse_id'] },
    { fields: ['state', 'requested_at', '_id'] },
    { fields: ['state', 'changed_at', '_id'] },
    { fields: ['dest_rse_id', 'state'] },
  ],
};
export const requestsHistoryCollection: CollectionSpec = {
  name: 'requests_history',
  indexes: [{ fields: ['didKey', 'dest_rse_id', 'updated_at'] }, { fields: ['state', 'updated_at'] }],
};

const documentOf = (request: RequestRecord, state: RequestState): RequestDocument => ({
  _id: request.id,
  id: request.id,
  request_type: request.requestType,
  scope: request.scope,
  name: request.name,
  didKey: didKey(request.scope, request.name),
  did_type: 'FILE',
  dest_rse_id: request.destRseId,
  dest_rse: request.destRse,
  source_rse_id: null,
  source_rse: null,
  attributes: {
    activity: request.attributes.activity,
    source_replica_expression: request.attributes.sourceReplicaExpression,
    lifetime: request.attributes.lifetime,
    ds_scope: request.attributes.dsScope,
    ds_name: request.attributes.dsName,
    bytes: request.attributes.bytes,
    md5: request.attributes.md5,
    adler32: request.attributes.adler32,
    priority: request.attributes.priority,
    allow_tape_source: request.attributes.allowTapeSource,
  },
  state,
  external_id: null,
  external_host: null,
  retry_count: request.retryCount,
  err_msg: null,
  previous_attempt_id: request.previousAttemptId,
  rule_id: request.ruleId,
  activity: request.activity,
  bytes: request.bytes,
  md5: request.md5,
  adler32: request.adler32,
  dest_url: null,
  submitted_at: null,
  started_at: null,
  transferred_at: null,
  account: request.account,
  requested_at: request.requestedAt,
  priority: request.priority,
  transfertool: null,
  created_at: request.requestedAt,
  updated_at: request.requestedAt,
  changed_at: request.requestedAt,
  sources: request.sources ?? [],
});

/** How an event changes an active request's document (the archiving events are applied apart). */
const evolveActive = (
  document: RequestDocument,
  event: Exclude<RequestEvent, { type: 'RequestQueued' | 'RequestArchived' | 'RequestCancelled' }>,
): RequestDocument => {
  const moved = (state: RequestState, at: string, changes: Partial<RequestDocument> = {}): RequestDocument => ({
    ...document,
    ...changes,
    state,
    changed_at: at,
    updated_at: at,
  });
  switch (event.type) {
    case 'RequestPrepared':
      return moved(event.data.state, event.data.preparedAt, {
        source_rse_id: event.data.sourceRseId,
        source_rse: event.data.sourceRse,
        transfertool: event.data.transfertool,
      });
    case 'RequestSourcesUnavailable':
      return moved(event.data.state, event.data.at, { err_msg: event.data.reason });
    case 'RequestReleased':
      return moved('QUEUED', event.data.releasedAt);
    case 'RequestReturnedToPreparing':
      return moved('PREPARING', event.data.at, { source_rse_id: null, source_rse: null, transfertool: null });
    case 'RequestSubmitting': {
      const main = event.data.sources[0];
      return moved('SUBMITTING', event.data.submittingAt, {
        dest_url: event.data.destUrl,
        transfertool: event.data.transfertool,
        submitted_at: event.data.submittingAt,
        source_rse_id: main?.rseId ?? document.source_rse_id,
        source_rse: main?.rse ?? document.source_rse,
      });
    }
    case 'RequestSubmitted':
      return moved('SUBMITTED', event.data.submittedAt, {
        external_id: event.data.externalId,
        external_host: event.data.externalHost,
        submitted_at: event.data.submittedAt,
      });
    case 'RequestSubmissionFailed':
      return moved('SUBMISSION_FAILED', event.data.failedAt, { err_msg: event.data.reason });
    case 'TransferSucceeded':
      return moved('DONE', event.data.transferredAt, {
        started_at: event.data.startedAt,
        transferred_at: event.data.transferredAt,
        source_rse_id: event.data.sourceRseId,
        source_rse: event.data.sourceRse,
      });
    case 'TransferFailed':
      return moved('FAILED', event.data.failedAt, { started_at: event.data.startedAt, err_msg: event.data.reason });
    case 'TransferLost':
      return moved('LOST', event.data.lostAt, { err_msg: event.data.reason });
  }
};

export const requestsProjection: Projection<RequestEvent> = {
  name: 'requests',
  // 3: the state indexes end with `_id` (a new generation, without the old indexes).
  version: 3,
  collections: [requestsCollection, requestsHistoryCollection],
  handles: REQUEST_EVENT_TYPES,
  async apply(event, context) {
    const active = context.collection<RequestDocument>(requestsCollection);
    switch (event.type) {
      case 'RequestQueued':
        await active.create(event.data.request.id, documentOf(event.data.request, event.data.state));
        return;
      case 'RequestArchived':
      case 'RequestCancelled': {
        let archived: RequestDocument | null = null;
        await active.update(event.data.requestId, (document) => {
          if (!document) return undefined;
          archived =
            event.type === 'RequestArchived'
              ? {
                  ...document,
                  err_msg: event.data.error ?? document.err_msg,
                  retried_as: event.data.retriedAs,
                  updated_at: event.data.archivedAt,
                }
              : { ...document, err_msg: `cancelled: ${event.data.reason}`, updated_at: event.data.cancelledAt };
          return null;
        });
        const document = archived as RequestDocument | null;
        if (document)
          await context.collection<RequestDocument>(requestsHistoryCollection).create(document.id, document);
        return;
      }
      default:
        await active.update(event.data.requestId, (document) => (document ? evolveActive(document, event) : undefined));
    }
  },
};
