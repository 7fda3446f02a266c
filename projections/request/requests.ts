import type { RequestEvent, RequestRecord, RequestState } from '../../domain/request/request.ts';
import { didKey } from '../../domain/did/did.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';

/**
 * Transfer requests with Rucio's column names: the active ones (`requests`) and, once finished
 * or cancelled, the archived ones (`requests_history`), which the history routes answer from.
 */
export type RequestDocument = Projected<{
  id: string;
  request_type: string;
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
}>;

export const requestsCollection: CollectionSpec = {
  name: 'requests',
  indexes: [{ fields: ['didKey', 'dest_rse_id'] }, { fields: ['state', 'requested_at'] }, { fields: ['rule_id'] }, { fields: ['dest_rse_id', 'state'] }],
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
});

export const requestsProjection: Projection<RequestEvent> = {
  name: 'requests',
  version: 1,
  collections: [requestsCollection, requestsHistoryCollection],
  handles: { RequestQueued: true, RequestCancelled: true },
  async apply(event, context) {
    const active = context.collection<RequestDocument>(requestsCollection);
    switch (event.type) {
      case 'RequestQueued':
        await active.create(event.data.request.id, documentOf(event.data.request, event.data.state));
        return;
      case 'RequestCancelled': {
        let archived: RequestDocument | null = null;
        await active.update(event.data.requestId, (document) => {
          if (!document) return undefined;
          archived = { ...document, err_msg: `cancelled: ${event.data.reason}`, updated_at: event.data.cancelledAt };
          return null;
        });
        const document = archived as RequestDocument | null;
        if (document) await context.collection<RequestDocument>(requestsHistoryCollection).create(document.id, document);
        return;
      }
    }
  },
};
