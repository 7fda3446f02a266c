import { upcaster, type Upcaster } from '../shared/upcasting.ts';
import type {
  RequestArchived,
  RequestCancelled,
  RequestPrepared,
  RequestQueued,
  RequestReleased,
  RequestReturnedToPreparing,
  RequestState,
  RequestSourcesUnavailable,
  RequestSubmissionFailed,
  RequestSubmitted,
  RequestSubmitting,
  TransferFailed,
  TransferLost,
  TransferSucceeded,
} from './request.ts';

/**
 * Request events 1 → 2: before batches (docs/architecture.md, "Event granularity"), each request
 * had a stream of its own and each event named one request at its top level. Version 2 names a
 * list of requests, what the event says of each inside its item, and the time once where the step
 * shares it. An old event becomes the batch of its one request, so an old stream folds as a
 * batch of one and the projections read one shape.
 */

type Item<E extends { data: { requests: readonly unknown[] } }> = E['data']['requests'][number];

export const requestUpcasters: readonly Upcaster[] = [
  upcaster<RequestQueued, Item<RequestQueued>>('RequestQueued', 1, ({ request, state }) => ({
    requests: [{ request, state }],
  })),
  upcaster<RequestPrepared, Item<RequestPrepared> & { preparedAt: string }>(
    'RequestPrepared',
    1,
    ({ requestId, state, sourceRseId, sourceRse, transfertool, preparedAt }) => ({
      requests: [{ requestId, state, sourceRseId, sourceRse, transfertool }],
      preparedAt,
    }),
  ),
  upcaster<RequestSourcesUnavailable, Item<RequestSourcesUnavailable> & { at: string }>(
    'RequestSourcesUnavailable',
    1,
    ({ requestId, previousState, state, reason, at }) => ({
      requests: [{ requestId, previousState, state, reason }],
      at,
    }),
  ),
  upcaster<RequestReleased, { requestId: string; releasedAt: string }>('RequestReleased', 1, (data) => ({
    requests: [{ requestId: data.requestId }],
    releasedAt: data.releasedAt,
  })),
  upcaster<RequestReturnedToPreparing, { requestId: string; at: string }>('RequestReturnedToPreparing', 1, (data) => ({
    requests: [{ requestId: data.requestId }],
    at: data.at,
  })),
  upcaster<RequestSubmitting, Item<RequestSubmitting> & { submittingAt: string }>(
    'RequestSubmitting',
    1,
    ({ requestId, sources, destUrl, transfertool, submittingAt }) => ({
      requests: [{ requestId, sources, destUrl, transfertool }],
      submittingAt,
    }),
  ),
  upcaster<RequestSubmitted, Item<RequestSubmitted> & { submittedAt: string }>(
    'RequestSubmitted',
    1,
    ({ requestId, externalId, externalHost, submittedAt }) => ({
      requests: [{ requestId, externalId, externalHost }],
      submittedAt,
    }),
  ),
  upcaster<RequestSubmissionFailed, Item<RequestSubmissionFailed> & { failedAt: string }>(
    'RequestSubmissionFailed',
    1,
    ({ requestId, reason, failedAt }) => ({ requests: [{ requestId, reason }], failedAt }),
  ),
  upcaster<TransferSucceeded, Item<TransferSucceeded>>('TransferSucceeded', 1, (data) => ({ requests: [data] })),
  upcaster<TransferFailed, Item<TransferFailed>>('TransferFailed', 1, (data) => ({ requests: [data] })),
  upcaster<TransferLost, Item<TransferLost>>('TransferLost', 1, (data) => ({ requests: [data] })),
  upcaster<RequestArchived, Item<RequestArchived> & { archivedAt: string }>(
    'RequestArchived',
    1,
    ({ requestId, scope, name, destRseId, state, retriedAs, error, archivedAt }) => ({
      requests: [{ requestId, scope, name, destRseId, state, retriedAs, error }],
      archivedAt,
    }),
  ),
  upcaster<RequestCancelled, RequestCancelledV1>('RequestCancelled', 1, (data) => ({
    requests: [
      {
        requestId: data.requestId,
        scope: data.scope,
        name: data.name,
        destRseId: data.destRseId,
        previousState: data.previousState,
        reason: data.reason,
        externalId: data.externalId ?? null,
        transfertool: data.transfertool ?? null,
      },
    ],
    cancelledAt: data.cancelledAt,
  })),
];

/** `RequestCancelled` at version 1: the tool's job was named only once cancellations stopped jobs. */
type RequestCancelledV1 = Readonly<{
  requestId: string;
  scope: string;
  name: string;
  destRseId: string;
  previousState: RequestState;
  reason: string;
  cancelledAt: string;
  externalId?: string | null;
  transfertool?: string | null;
}>;
