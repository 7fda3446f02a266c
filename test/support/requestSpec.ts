import type {
  RequestAttributes,
  RequestEvent,
  RequestRecord,
  RequestState,
  TransferLink,
} from '../../domain/request/request.ts';
import { requestDecider, type RequestCommand } from '../../domain/request/requestDecider.ts';
import { deciderSpec, metadata } from './deciderSpec.ts';

/**
 * What the specifications of transfer requests share (the request decider's, the messages its
 * events give, the conveyor's commands): the given/when/then of a batch's stream, its commands, and
 * one request with the events and links that name it. Each test changes only what it is about.
 */

/** given(request events).when(command).then(events): the batch comes only from the given events. */
export const givenRequests = deciderSpec(requestDecider);

/** A request command by its type, with the specification's metadata; the data is the test's to get right. */
export const requestCommand = <T extends RequestCommand['type']>(type: T, data: object = {}) =>
  ({ type, data, metadata: metadata() }) as Extract<RequestCommand, { type: T }>;

type RequestChanges = Partial<Omit<RequestRecord, 'attributes'>> & { attributes?: Partial<RequestAttributes> };

/** The request r1: a first attempt to copy user.jdoe:f1 (100 bytes) to DEST for rule-1 of jdoe. */
export const transferRequest = ({ attributes, ...changes }: RequestChanges = {}): RequestRecord => ({
  id: 'r1',
  requestType: 'TRANSFER',
  scope: 'user.jdoe',
  name: 'f1',
  destRseId: 'dest-id',
  destRse: 'DEST',
  ruleId: 'rule-1',
  account: 'jdoe',
  activity: 'User Subscriptions',
  bytes: 100,
  md5: null,
  adler32: '0cc737eb',
  priority: 3,
  retryCount: null,
  previousAttemptId: null,
  requestedAt: '2026-11-22T09:00:00.000Z',
  ...changes,
  attributes: {
    activity: 'User Subscriptions',
    sourceReplicaExpression: null,
    lifetime: null,
    dsScope: null,
    dsName: null,
    bytes: 100,
    md5: null,
    adler32: '0cc737eb',
    priority: 3,
    allowTapeSource: true,
    ...attributes,
  },
});

/** Requests queued together, all in one state. */
export const requestsQueued = (
  records: readonly RequestRecord[],
  state: Extract<RequestState, 'QUEUED' | 'PREPARING'> = 'QUEUED',
): RequestEvent => ({
  type: 'RequestQueued',
  data: { requests: records.map((request) => ({ request, state })) },
});

/** What a transfer's outcome names of r1: from SRC to DEST, in job-1. */
export const transferLink = (changes: Partial<TransferLink> = {}): TransferLink => ({
  requestId: 'r1',
  scope: 'user.jdoe',
  name: 'f1',
  destRseId: 'dest-id',
  destRse: 'DEST',
  sourceRseId: 'src-id',
  sourceRse: 'SRC',
  activity: 'User Subscriptions',
  bytes: 100,
  externalId: 'job-1',
  ...changes,
});
