import type { RequestEvent, RequestRecord } from '../../domain/request/request.ts';
import { requestDecider, type RequestCommand } from '../../domain/request/requestDecider.ts';
import { retryIdOf, retryRecord } from '../../domain/request/retries.ts';
import { expect } from 'chai';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

const given = deciderSpec<RequestCommand, RequestEvent, ReturnType<typeof requestDecider.initialState>>(requestDecider);

const record: RequestRecord = {
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
  },
  requestedAt: '2026-11-22T09:00:00.000Z',
};
const command = <T extends RequestCommand['type']>(type: T, data: object = {}) =>
  ({ type, data, metadata: metadata() }) as Extract<RequestCommand, { type: T }>;

const queued = (state: 'QUEUED' | 'PREPARING' = 'QUEUED'): RequestEvent => ({
  type: 'RequestQueued',
  data: { request: record, state },
});
const source = { rseId: 'src-id', rse: 'SRC', ranking: 0, pfn: 'root://src:1094/data/f1' };
const submitting: RequestEvent = {
  type: 'RequestSubmitting',
  data: {
    requestId: 'r1',
    sources: [source],
    destUrl: 'root://dest:1094/data/f1',
    transfertool: 'mock',
    submittingAt: AT,
  },
};
const submitted: RequestEvent = {
  type: 'RequestSubmitted',
  data: { requestId: 'r1', externalId: 'job-1', externalHost: 'mock', submittedAt: AT },
};
const link = {
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
};
const report = (outcome: 'DONE' | 'FAILED' | 'LOST', externalId = 'job-1') =>
  command('RecordTransferReport', {
    externalId,
    outcome,
    reason: outcome === 'DONE' ? null : 'boom',
    source: null,
    startedAt: AT,
    finishedAt: AT,
  });

describe('Request decider: the states of a request (behaviour rule 22)', () => {
  describe('when a request is queued', () => {
    it('queues it', () =>
      given([])
        .when(command('QueueRequest', { request: record, state: 'QUEUED' }))
        .then([queued()]));
    it('queues it only once', () =>
      given([queued()])
        .when(command('QueueRequest', { request: record, state: 'QUEUED' }))
        .thenNothingHappened());
  });

  describe('when a PREPARING request is prepared', () => {
    const prepare = (waiting: boolean) =>
      command('PrepareRequest', { sourceRseId: 'src-id', sourceRse: 'SRC', transfertool: 'mock', waiting });
    it('makes it WAIT under a transfer limit (rule 24)', () =>
      given([queued('PREPARING')])
        .when(prepare(true))
        .then([
          {
            type: 'RequestPrepared',
            data: {
              requestId: 'r1',
              state: 'WAITING',
              sourceRseId: 'src-id',
              sourceRse: 'SRC',
              transfertool: 'mock',
              preparedAt: AT,
            },
          },
        ]));
    it('queues it otherwise', () =>
      given([queued('PREPARING')])
        .when(prepare(false))
        .then([
          {
            type: 'RequestPrepared',
            data: {
              requestId: 'r1',
              state: 'QUEUED',
              sourceRseId: 'src-id',
              sourceRse: 'SRC',
              transfertool: 'mock',
              preparedAt: AT,
            },
          },
        ]));
    it('prepares nothing that is not PREPARING', () =>
      given([queued('QUEUED')])
        .when(prepare(false))
        .thenNothingHappened());
  });

  describe('records that no source could be chosen, from PREPARING or QUEUED only', () => {
    it('from QUEUED', () =>
      given([queued()])
        .when(command('RecordSourcesUnavailable', { state: 'NO_SOURCES', reason: 'none' }))
        .then([
          {
            type: 'RequestSourcesUnavailable',
            data: { requestId: 'r1', previousState: 'QUEUED', state: 'NO_SOURCES', reason: 'none', at: AT },
          },
        ]));
    it('not from SUBMITTING', () =>
      given([queued(), submitting])
        .when(command('RecordSourcesUnavailable', { state: 'NO_SOURCES', reason: 'none' }))
        .thenNothingHappened());
  });

  describe('given a WAITING request', () => {
    const waiting: RequestEvent = {
      type: 'RequestPrepared',
      data: {
        requestId: 'r1',
        state: 'WAITING',
        sourceRseId: 'src-id',
        sourceRse: 'SRC',
        transfertool: 'mock',
        preparedAt: AT,
      },
    };
    it('releases it', () =>
      given([queued('PREPARING'), waiting])
        .when(command('ReleaseRequest'))
        .then([{ type: 'RequestReleased', data: { requestId: 'r1', releasedAt: AT } }]));
    it('returns it to PREPARING', () =>
      given([queued('PREPARING'), waiting])
        .when(command('ReturnRequestToPreparing'))
        .then([{ type: 'RequestReturnedToPreparing', data: { requestId: 'r1', at: AT } }]));
    it('releases nothing that is not WAITING', () =>
      given([queued()]).when(command('ReleaseRequest')).thenNothingHappened());
  });

  describe('goes QUEUED → SUBMITTING → SUBMITTED, each only from the state before', () => {
    const mark = command('MarkRequestSubmitting', {
      sources: [source],
      destUrl: 'root://dest:1094/data/f1',
      transfertool: 'mock',
    });
    it('marks a QUEUED request SUBMITTING', () => given([queued()]).when(mark).then([submitting]));
    it('marks it only once', () => given([queued(), submitting]).when(mark).thenNothingHappened());
    it('records the submission of a SUBMITTING request', () =>
      given([queued(), submitting])
        .when(command('RecordSubmission', { externalId: 'job-1', externalHost: 'mock' }))
        .then([submitted]));
    it('records no submission of a QUEUED one', () =>
      given([queued()])
        .when(command('RecordSubmission', { externalId: 'job-1', externalHost: 'mock' }))
        .thenNothingHappened());
    it('records the submission’s failure', () =>
      given([queued(), submitting])
        .when(command('RecordSubmissionFailure', { reason: 'refused' }))
        .then([{ type: 'RequestSubmissionFailed', data: { requestId: 'r1', reason: 'refused', failedAt: AT } }]));
  });

  describe('records the reports of its current job only', () => {
    it('DONE', () =>
      given([queued(), submitting, submitted])
        .when(report('DONE'))
        .then([{ type: 'TransferSucceeded', data: { ...link, startedAt: AT, transferredAt: AT } }]));
    it('FAILED', () =>
      given([queued(), submitting, submitted])
        .when(report('FAILED'))
        .then([{ type: 'TransferFailed', data: { ...link, reason: 'boom', startedAt: AT, failedAt: AT } }]));
    it('LOST', () =>
      given([queued(), submitting, submitted])
        .when(report('LOST'))
        .then([{ type: 'TransferLost', data: { ...link, reason: 'boom', lostAt: AT } }]));
    it('none of an earlier job', () =>
      given([queued(), submitting, submitted]).when(report('DONE', 'an-earlier-job')).thenNothingHappened());
  });

  it('takes a second report of the same outcome as a no-op', () =>
    given([
      queued(),
      submitting,
      submitted,
      { type: 'TransferSucceeded', data: { ...link, startedAt: AT, transferredAt: AT } },
    ])
      .when(report('DONE'))
      .thenNothingHappened());

  describe('archives finished requests and SUBMITTING ones, and nothing else', () => {
    const failed: RequestEvent = {
      type: 'TransferFailed',
      data: { ...link, reason: 'boom', startedAt: AT, failedAt: AT },
    };
    it('a FAILED request, naming its retry', () =>
      given([queued(), submitting, submitted, failed])
        .when(command('ArchiveRequest', { retriedAs: 'r2', error: null }))
        .then([
          {
            type: 'RequestArchived',
            data: {
              requestId: 'r1',
              scope: 'user.jdoe',
              name: 'f1',
              destRseId: 'dest-id',
              state: 'FAILED',
              retriedAs: 'r2',
              error: null,
              archivedAt: AT,
            },
          },
        ]));
    it('a SUBMITTING request, with the error', () =>
      given([queued(), submitting])
        .when(command('ArchiveRequest', { retriedAs: null, error: 'stuck' }))
        .then([
          {
            type: 'RequestArchived',
            data: {
              requestId: 'r1',
              scope: 'user.jdoe',
              name: 'f1',
              destRseId: 'dest-id',
              state: 'SUBMITTING',
              retriedAs: null,
              error: 'stuck',
              archivedAt: AT,
            },
          },
        ]));
    it('nothing of a request still SUBMITTED', () =>
      given([queued(), submitting, submitted])
        .when(command('ArchiveRequest', { retriedAs: null, error: null }))
        .thenNothingHappened());
  });

  it('cancels an unfinished request with the job the tool must stop', () =>
    given([queued(), submitting, submitted])
      .when(command('CancelRequest', { requestId: 'r1', reason: 'rule deleted' }))
      .then([
        {
          type: 'RequestCancelled',
          data: {
            requestId: 'r1',
            scope: 'user.jdoe',
            name: 'f1',
            destRseId: 'dest-id',
            previousState: 'SUBMITTED',
            reason: 'rule deleted',
            cancelledAt: AT,
            externalId: 'job-1',
            transfertool: 'mock',
          },
        },
      ]));
});

describe('Request retries (behaviour rule 22)', () => {
  const state = (events: RequestEvent[]) => events.reduce(requestDecider.evolve, requestDecider.initialState());
  const failed: RequestEvent = {
    type: 'TransferFailed',
    data: { ...link, reason: 'boom', startedAt: AT, failedAt: AT },
  };

  it('queues a new id naming the previous attempt, one retry more, with the used source ranked lower', () => {
    const active = state([queued(), submitting, submitted, failed]);
    if (active.status !== 'Active') throw new Error('not active');
    expect(retryRecord(active, AT, true)).to.deep.include({
      id: retryIdOf('r1'),
      previousAttemptId: 'r1',
      retryCount: 1,
      requestedAt: AT,
      sources: [{ rseId: 'src-id', rse: 'SRC', ranking: -1 }],
    });
  });

  it('keeps the count of a request stuck SUBMITTING, and rankings when the transfer did not fail', () => {
    const active = state([
      { type: 'RequestQueued', data: { request: { ...record, retryCount: 2 }, state: 'QUEUED' } },
      submitting,
    ]);
    if (active.status !== 'Active') throw new Error('not active');
    expect(retryRecord(active, AT, false)).to.deep.include({
      retryCount: 2,
      sources: [{ rseId: 'src-id', rse: 'SRC', ranking: 0 }],
    });
  });
});
