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
import type { TransferHop } from '../../domain/request/transferHops.ts';
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
  /** The stream of the request's batch (absent in generations built before batches: `request-<id>`). */
  stream?: string;
  /** Rucio's columns of a tape recall: when the tool started and finished bringing the source online. */
  staging_started_at?: string | null;
  staging_finished_at?: string | null;
  /** A multihop path the request is part of: its RSEs in order, from the source to the initial request's destination. */
  transfer_path?: readonly string[] | null;
  /** Rucio's `transfer_hops` columns: the path's initial request and the copies before and after this one. */
  initial_request_id?: string | null;
  previous_hop_request_id?: string | null;
  next_hop_request_id?: string | null;
  /** The copy before this one while it is active: the request waits for it (Rucio skips such requests). */
  waiting_for_hop?: string | null;
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
    { fields: ['state', 'request_type', 'requested_at', '_id'] },
    { fields: ['state', 'changed_at', '_id'] },
    { fields: ['dest_rse_id', 'state'] },
  ],
};
export const requestsHistoryCollection: CollectionSpec = {
  name: 'requests_history',
  indexes: [{ fields: ['didKey', 'dest_rse_id', 'updated_at'] }, { fields: ['state', 'updated_at'] }],
};

/** An attribute the document's columns also hold: kept in `attributes` by generations before version 6. */
const copied = (attributes: Readonly<Record<string, unknown>>, key: string, column: unknown): unknown =>
  key in attributes ? attributes[key] : column;

/**
 * A request's attributes as Rucio keeps them (its `attributes` column, in its order): the ones
 * stored, with the copies of the request's own columns put back.
 */
export const rucioAttributes = (document: RequestDocument): Record<string, unknown> => {
  const { attributes } = document;
  return {
    activity: copied(attributes, 'activity', document.activity),
    source_replica_expression: attributes.source_replica_expression,
    lifetime: attributes.lifetime,
    ds_scope: attributes.ds_scope,
    ds_name: attributes.ds_name,
    bytes: copied(attributes, 'bytes', document.bytes),
    md5: copied(attributes, 'md5', document.md5),
    adler32: copied(attributes, 'adler32', document.adler32),
    priority: copied(attributes, 'priority', document.priority),
    allow_tape_source: attributes.allow_tape_source,
    ...(attributes.is_intermediate_hop === true ? { is_intermediate_hop: true } : {}),
  };
};

const documentOf = (request: RequestRecord, state: RequestState, stream: string): RequestDocument => ({
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
  // Rucio's attributes but those its columns hold too (activity, bytes, md5, adler32, priority: the
  // same values by construction); `rucioAttributes` gives them whole.
  attributes: {
    source_replica_expression: request.attributes.sourceReplicaExpression,
    lifetime: request.attributes.lifetime,
    ds_scope: request.attributes.dsScope,
    ds_name: request.attributes.dsName,
    allow_tape_source: request.attributes.allowTapeSource,
    ...(request.attributes.isIntermediateHop ? { is_intermediate_hop: true } : {}),
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
  stream,
  ...hopColumns(request.transferHop ?? null),
});

/** The multihop columns of a request on a path (all null off one). */
const hopColumns = (hop: TransferHop | null) => ({
  transfer_path: hop?.path ?? null,
  initial_request_id: hop?.initialRequestId ?? null,
  previous_hop_request_id: hop?.previousHopId ?? null,
  next_hop_request_id: hop?.nextHopId ?? null,
  waiting_for_hop: hop?.previousHopId ?? null,
});

/** A document moved to another state at `at`, with other columns changed. */
const moved = (
  document: RequestDocument,
  state: RequestState,
  at: string,
  changes: Partial<RequestDocument> = {},
): RequestDocument => ({
  ...document,
  ...changes,
  state,
  changed_at: at,
  updated_at: at,
});

type ActiveEvent = Exclude<
  RequestEvent,
  { type: 'RequestQueued' | 'RequestArchived' | 'RequestCancelled' | 'RequestHopsQueued' }
>;

/** Each request an event moves, with how its document changes. */
const changesOf = (
  event: ActiveEvent,
): { requestId: string; change: (document: RequestDocument) => RequestDocument }[] => {
  switch (event.type) {
    case 'RequestPrepared':
      return event.data.requests.map(({ requestId, state, sourceRseId, sourceRse, transfertool }) => ({
        requestId,
        change: (document) =>
          moved(document, state, event.data.preparedAt, {
            source_rse_id: sourceRseId,
            source_rse: sourceRse,
            transfertool,
          }),
      }));
    case 'RequestSourcesUnavailable':
      return event.data.requests.map(({ requestId, state, reason }) => ({
        requestId,
        change: (document) => moved(document, state, event.data.at, { err_msg: reason }),
      }));
    case 'RequestReleased':
      return event.data.requests.map(({ requestId }) => ({
        requestId,
        change: (document) => moved(document, 'QUEUED', event.data.releasedAt),
      }));
    case 'RequestReturnedToPreparing':
      return event.data.requests.map(({ requestId }) => ({
        requestId,
        change: (document) =>
          moved(document, 'PREPARING', event.data.at, { source_rse_id: null, source_rse: null, transfertool: null }),
      }));
    case 'RequestSubmitting':
      return event.data.requests.map(({ requestId, sources, destUrl, transfertool }) => ({
        requestId,
        change: (document) =>
          moved(document, 'SUBMITTING', event.data.submittingAt, {
            dest_url: destUrl,
            transfertool,
            submitted_at: event.data.submittingAt,
            source_rse_id: sources[0]?.rseId ?? document.source_rse_id,
            source_rse: sources[0]?.rse ?? document.source_rse,
          }),
      }));
    case 'RequestSubmitted':
      return event.data.requests.map(({ requestId, externalId, externalHost }) => ({
        requestId,
        change: (document) =>
          moved(document, 'SUBMITTED', event.data.submittedAt, {
            external_id: externalId,
            external_host: externalHost,
            submitted_at: event.data.submittedAt,
          }),
      }));
    case 'RequestSubmissionFailed':
      return event.data.requests.map(({ requestId, reason }) => ({
        requestId,
        change: (document) => moved(document, 'SUBMISSION_FAILED', event.data.failedAt, { err_msg: reason }),
      }));
    case 'TransferSucceeded':
      return event.data.requests.map((transfer) => ({
        requestId: transfer.requestId,
        change: (document) =>
          moved(document, 'DONE', transfer.transferredAt, {
            started_at: transfer.startedAt,
            transferred_at: transfer.transferredAt,
            source_rse_id: transfer.sourceRseId,
            source_rse: transfer.sourceRse,
            staging_started_at: transfer.stagingStartedAt ?? null,
            staging_finished_at: transfer.stagingFinishedAt ?? null,
          }),
      }));
    case 'RequestHopsFailed':
      return event.data.requests.map(({ requestId, reason }) => ({
        requestId,
        change: (document) => moved(document, 'FAILED', event.data.failedAt, { err_msg: reason }),
      }));
    case 'TransferFailed':
      return event.data.requests.map(({ requestId, startedAt, failedAt, reason }) => ({
        requestId,
        change: (document) => moved(document, 'FAILED', failedAt, { started_at: startedAt, err_msg: reason }),
      }));
    case 'TransferLost':
      return event.data.requests.map(({ requestId, lostAt, reason }) => ({
        requestId,
        change: (document) => moved(document, 'LOST', lostAt, { err_msg: reason }),
      }));
  }
};

/** The archived document of each request an archiving event names, as the history keeps it. */
const archivedOf = (
  event: Extract<RequestEvent, { type: 'RequestArchived' | 'RequestCancelled' }>,
): { requestId: string; archive: (document: RequestDocument) => RequestDocument }[] =>
  event.type === 'RequestArchived'
    ? event.data.requests.map(({ requestId, error, retriedAs }) => ({
        requestId,
        archive: (document) => ({
          ...document,
          err_msg: error ?? document.err_msg,
          retried_as: retriedAs,
          updated_at: event.data.archivedAt,
        }),
      }))
    : event.data.requests.map(({ requestId, reason }) => ({
        requestId,
        archive: (document) => ({ ...document, err_msg: `cancelled: ${reason}`, updated_at: event.data.cancelledAt }),
      }));

export const requestsProjection: Projection<RequestEvent> = {
  name: 'requests',
  // 4: batches of requests; each document records its request's stream.
  // 5: multihop paths and staging times; an index by state and request type.
  // 6: `attributes` without the copies of the columns activity, bytes, md5, adler32 and priority.
  version: 6,
  collections: [requestsCollection, requestsHistoryCollection],
  handles: REQUEST_EVENT_TYPES,
  async apply(event, context) {
    const active = context.collection<RequestDocument>(requestsCollection);
    switch (event.type) {
      case 'RequestQueued': {
        const { streamName } = context.currentEvent();
        for (const { request, state } of event.data.requests)
          await active.create(request.id, documentOf(request, state, streamName));
        return;
      }
      case 'RequestHopsQueued': {
        const { streamName } = context.currentEvent();
        for (const { initialRequestId, path, hops } of event.data.paths) {
          for (const hop of hops) await active.create(hop.id, documentOf(hop, 'QUEUED', streamName));
          const last = hops[hops.length - 1];
          await active.update(initialRequestId, (document) =>
            document && last
              ? {
                  ...document,
                  ...hopColumns({ initialRequestId, previousHopId: last.id, nextHopId: null, path }),
                  updated_at: event.data.queuedAt,
                }
              : undefined,
          );
        }
        return;
      }
      case 'RequestArchived':
      case 'RequestCancelled': {
        const history = context.collection<RequestDocument>(requestsHistoryCollection);
        for (const { requestId, archive } of archivedOf(event)) {
          let archived: RequestDocument | undefined;
          await active.update(requestId, (document) => {
            if (!document) return undefined;
            archived = archive(document);
            return null;
          });
          if (!archived) continue;
          await history.create(archived.id, archived);
          // The copy after this one no longer waits for it (Rucio deletes its transfer_hops row).
          const next = archived.next_hop_request_id;
          if (next)
            await active.update(next, (document) =>
              document && document.waiting_for_hop === requestId ? { ...document, waiting_for_hop: null } : undefined,
            );
        }
        return;
      }
      default:
        for (const { requestId, change } of changesOf(event))
          await active.update(requestId, (document) => (document ? change(document) : undefined));
    }
  },
};
