import type { Event } from '../shared/event.ts';

/**
 * A transfer request: one file to bring to one RSE for a rule. Each request is an aggregate with
 * its own stream (`request-<id>`); a retry is a new request that names the previous attempt.
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
}>;

export type RequestQueued = Event<'RequestQueued', { request: RequestRecord; state: RequestState }>;
/** The request is not wanted any more (its lock went away, its rule was deleted). */
export type RequestCancelled = Event<'RequestCancelled', { requestId: string; scope: string; name: string; destRseId: string; previousState: RequestState; reason: string; cancelledAt: string }>;

export type RequestEvent = RequestQueued | RequestCancelled;

export const REQUEST_EVENT_TYPES: readonly RequestEvent['type'][] = ['RequestQueued', 'RequestCancelled'];

/** States from which a request no longer moves: it is archived, answered by the history routes. */
export const FINISHED_REQUEST_STATES: ReadonlySet<RequestState> = new Set([
  'DONE',
  'FAILED',
  'LOST',
  'NO_SOURCES',
  'ONLY_TAPE_SOURCES',
  'SUBMISSION_FAILED',
  'MISMATCH_SCHEME',
]);

export type Request =
  | Readonly<{ status: 'Absent' }>
  | Readonly<{ status: 'Active'; record: RequestRecord; state: RequestState }>
  | Readonly<{ status: 'Archived'; record: RequestRecord; state: RequestState; cancelled: boolean }>;

export const initialRequest = (): Request => ({ status: 'Absent' });

export const evolveRequest = (state: Request, event: RequestEvent): Request => {
  switch (event.type) {
    case 'RequestQueued':
      return { status: 'Active', record: event.data.request, state: event.data.state };
    case 'RequestCancelled':
      return state.status === 'Active' ? { status: 'Archived', record: state.record, state: state.state, cancelled: true } : state;
    default:
      return state;
  }
};
