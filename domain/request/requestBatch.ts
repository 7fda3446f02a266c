import type { RequestEvent, RequestItem, RequestRecord, RequestState, SubmittedSource } from './request.ts';
import type { TransferHop } from './transferHops.ts';

/**
 * The state of a batch stream (request.ts says what a batch is): each of its requests as the
 * events left it, active while it moves through its states, archived once the finisher took it.
 * The request decider decides on this state; the messages of transfers read it too.
 */

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
  /** Its place in a multihop path, when it is part of one. */
  transferHop: TransferHop | null;
}>;

export type ArchivedRequest = Readonly<{
  status: 'Archived';
  record: RequestRecord;
  state: RequestState;
  cancelled: boolean;
  retriedAs: string | null;
}>;

export type Request = Readonly<{ status: 'Absent' }> | ActiveRequest | ArchivedRequest;

/** What a batch stream holds: its requests by id. A request not in the map is absent. */
export type RequestBatch = Readonly<{ requests: ReadonlyMap<string, ActiveRequest | ArchivedRequest> }>;

export const initialRequestBatch = (): RequestBatch => ({ requests: new Map() });

const ABSENT: Request = { status: 'Absent' };

/** One request of a batch, absent when the batch does not hold it. */
export const requestIn = (batch: RequestBatch, requestId: string): Request => batch.requests.get(requestId) ?? ABSENT;

/** A request just queued: nothing chosen, submitted or failed yet. */
const queuedRequest = (record: RequestRecord, state: RequestState, changedAt: string): ActiveRequest => ({
  status: 'Active',
  record,
  state,
  sourceRseId: null,
  sourceRse: null,
  transfertool: null,
  sourcesInUse: [],
  destUrl: null,
  externalId: null,
  externalHost: null,
  error: null,
  changedAt,
  transferHop: record.transferHop ?? null,
});

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

/** The map is copied once per event, never mutated: cached states stay valid. */
export const evolveRequestBatch = (batch: RequestBatch, event: RequestEvent): RequestBatch => {
  const requests = new Map(batch.requests);
  /** Each active request an item names, changed as the item says. */
  const each = <I extends RequestItem>(
    items: readonly I[],
    change: (state: ActiveRequest, item: I) => ActiveRequest | ArchivedRequest,
  ): RequestBatch => {
    for (const item of items) {
      const current = requests.get(item.requestId);
      if (current?.status === 'Active') requests.set(item.requestId, change(current, item));
    }
    return { requests };
  };
  switch (event.type) {
    case 'RequestQueued':
      for (const { request, state } of event.data.requests) {
        if (requests.has(request.id)) continue;
        requests.set(request.id, queuedRequest(request, state, request.requestedAt));
      }
      return { requests };
    case 'RequestHopsQueued':
      for (const { initialRequestId, path, hops } of event.data.paths) {
        const initial = requests.get(initialRequestId);
        if (initial?.status !== 'Active' || hops.length === 0) continue;
        for (const hop of hops) {
          if (requests.has(hop.id)) continue;
          requests.set(hop.id, queuedRequest(hop, 'QUEUED', event.data.queuedAt));
        }
        requests.set(initialRequestId, {
          ...initial,
          transferHop: { initialRequestId, previousHopId: hops[hops.length - 1]!.id, nextHopId: null, path },
        });
      }
      return { requests };
    case 'RequestHopsFailed':
      return each(event.data.requests, (state, { reason }) =>
        moved(state, 'FAILED', event.data.failedAt, { error: reason }),
      );
    case 'RequestPrepared':
      return each(event.data.requests, (state, { state: next, sourceRseId, sourceRse, transfertool }) =>
        moved(state, next, event.data.preparedAt, { sourceRseId, sourceRse, transfertool }),
      );
    case 'RequestSourcesUnavailable':
      return each(event.data.requests, (state, { state: next, reason }) =>
        moved(state, next, event.data.at, { error: reason }),
      );
    case 'RequestReleased':
      return each(event.data.requests, (state) => moved(state, 'QUEUED', event.data.releasedAt));
    case 'RequestReturnedToPreparing':
      return each(event.data.requests, (state) =>
        moved(state, 'PREPARING', event.data.at, { sourceRseId: null, sourceRse: null, transfertool: null }),
      );
    case 'RequestSubmitting':
      return each(event.data.requests, (state, { sources, destUrl, transfertool }) =>
        moved(state, 'SUBMITTING', event.data.submittingAt, {
          sourcesInUse: sources,
          destUrl,
          transfertool,
          sourceRseId: sources[0]?.rseId ?? state.sourceRseId,
          sourceRse: sources[0]?.rse ?? state.sourceRse,
        }),
      );
    case 'RequestSubmitted':
      return each(event.data.requests, (state, { externalId, externalHost }) =>
        moved(state, 'SUBMITTED', event.data.submittedAt, { externalId, externalHost }),
      );
    case 'RequestSubmissionFailed':
      return each(event.data.requests, (state, { reason }) =>
        moved(state, 'SUBMISSION_FAILED', event.data.failedAt, { error: reason }),
      );
    case 'TransferSucceeded':
      return each(event.data.requests, (state, { transferredAt, sourceRseId, sourceRse }) =>
        moved(state, 'DONE', transferredAt, { sourceRseId, sourceRse }),
      );
    case 'TransferFailed':
      return each(event.data.requests, (state, { failedAt, reason }) =>
        moved(state, 'FAILED', failedAt, { error: reason }),
      );
    case 'TransferLost':
      return each(event.data.requests, (state, { lostAt, reason }) => moved(state, 'LOST', lostAt, { error: reason }));
    case 'RequestArchived':
      return each(event.data.requests, (state, { retriedAs }) => ({
        status: 'Archived',
        record: state.record,
        state: state.state,
        cancelled: false,
        retriedAs,
      }));
    case 'RequestCancelled':
      return each(event.data.requests, (state) => ({
        status: 'Archived',
        record: state.record,
        state: state.state,
        cancelled: true,
        retriedAs: null,
      }));
  }
};
