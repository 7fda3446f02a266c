import type { RequestEvent, RequestRecord } from '../../domain/request/request.ts';
import { requestIn } from '../../domain/request/requestBatch.ts';
import { upcastEvent } from '../../domain/shared/upcasting.ts';
import { eventUpcasters } from '../../domain/areas.ts';
import { requestDecider, type RequestCommand } from '../../domain/request/requestDecider.ts';
import { retryIdOf, retryRecord } from '../../domain/request/retries.ts';
import { expect } from 'chai';
import { AT } from '../support/deciderSpec.ts';
import {
  givenRequests as given,
  requestCommand as command,
  requestsQueued,
  transferLink,
  transferRequest,
} from '../support/requestSpec.ts';

const record = transferRequest();
/** A command on the batch's request r1 alone (or the requests given). */
const on = <T extends RequestCommand['type']>(type: T, item: object = {}, requestIds = ['r1']) =>
  command(type, { requests: requestIds.map((requestId) => ({ requestId, ...item })) });

const record2: RequestRecord = { ...record, id: 'r2', name: 'f2' };
const queued = (state: 'QUEUED' | 'PREPARING' = 'QUEUED', records = [record]) => requestsQueued(records, state);
const source = { rseId: 'src-id', rse: 'SRC', ranking: 0, pfn: 'root://src:1094/data/f1' };
const submittingItem = { sources: [source], destUrl: 'root://dest:1094/data/f1', transfertool: 'mock' };
const submitting: RequestEvent = {
  type: 'RequestSubmitting',
  data: { requests: [{ requestId: 'r1', ...submittingItem }], submittingAt: AT },
};
const submitted: RequestEvent = {
  type: 'RequestSubmitted',
  data: { requests: [{ requestId: 'r1', externalId: 'job-1', externalHost: 'mock' }], submittedAt: AT },
};
const link = transferLink();
const reportOf = (outcome: 'DONE' | 'FAILED' | 'LOST', externalId = 'job-1', requestId = 'r1') => ({
  requestId,
  externalId,
  outcome,
  reason: outcome === 'DONE' ? null : 'boom',
  source: null,
  startedAt: AT,
  finishedAt: AT,
});
const report = (outcome: 'DONE' | 'FAILED' | 'LOST', externalId = 'job-1') =>
  command('RecordTransferReports', { requests: [reportOf(outcome, externalId)] });

describe('Request decider: the states of a request (behaviour rule 22)', () => {
  describe('when a request is queued', () => {
    it('queues it', () =>
      given([])
        .when(command('QueueRequests', { requests: [{ request: record, state: 'QUEUED' }] }))
        .then([queued()]));
    it('queues it only once', () =>
      given([queued()])
        .when(command('QueueRequests', { requests: [{ request: record, state: 'QUEUED' }] }))
        .thenNothingHappened());
  });

  describe('when a PREPARING request is prepared', () => {
    const prepare = (waiting: boolean) =>
      on('PrepareRequests', { sourceRseId: 'src-id', sourceRse: 'SRC', transfertool: 'mock', waiting });
    const prepared = (state: 'QUEUED' | 'WAITING'): RequestEvent => ({
      type: 'RequestPrepared',
      data: {
        requests: [{ requestId: 'r1', state, sourceRseId: 'src-id', sourceRse: 'SRC', transfertool: 'mock' }],
        preparedAt: AT,
      },
    });
    it('makes it WAIT under a transfer limit (rule 24)', () =>
      given([queued('PREPARING')])
        .when(prepare(true))
        .then([prepared('WAITING')]));
    it('queues it otherwise', () =>
      given([queued('PREPARING')])
        .when(prepare(false))
        .then([prepared('QUEUED')]));
    it('prepares nothing that is not PREPARING', () =>
      given([queued('QUEUED')])
        .when(prepare(false))
        .thenNothingHappened());
  });

  describe('records that no source could be chosen, from PREPARING or QUEUED only', () => {
    it('from QUEUED', () =>
      given([queued()])
        .when(on('RecordSourcesUnavailable', { state: 'NO_SOURCES', reason: 'none' }))
        .then([
          {
            type: 'RequestSourcesUnavailable',
            data: {
              requests: [{ requestId: 'r1', previousState: 'QUEUED', state: 'NO_SOURCES', reason: 'none' }],
              at: AT,
            },
          },
        ]));
    it('not from SUBMITTING', () =>
      given([queued(), submitting])
        .when(on('RecordSourcesUnavailable', { state: 'NO_SOURCES', reason: 'none' }))
        .thenNothingHappened());
  });

  describe('given a WAITING request', () => {
    const waiting: RequestEvent = {
      type: 'RequestPrepared',
      data: {
        requests: [
          { requestId: 'r1', state: 'WAITING', sourceRseId: 'src-id', sourceRse: 'SRC', transfertool: 'mock' },
        ],
        preparedAt: AT,
      },
    };
    it('releases it', () =>
      given([queued('PREPARING'), waiting])
        .when(on('ReleaseRequests'))
        .then([{ type: 'RequestReleased', data: { requests: [{ requestId: 'r1' }], releasedAt: AT } }]));
    it('returns it to PREPARING', () =>
      given([queued('PREPARING'), waiting])
        .when(on('ReturnRequestsToPreparing'))
        .then([{ type: 'RequestReturnedToPreparing', data: { requests: [{ requestId: 'r1' }], at: AT } }]));
    it('releases nothing that is not WAITING', () =>
      given([queued()]).when(on('ReleaseRequests')).thenNothingHappened());
  });

  describe('goes QUEUED → SUBMITTING → SUBMITTED, each only from the state before', () => {
    const mark = on('MarkRequestsSubmitting', submittingItem);
    it('marks a QUEUED request SUBMITTING', () => given([queued()]).when(mark).then([submitting]));
    it('marks it only once', () => given([queued(), submitting]).when(mark).thenNothingHappened());
    it('records the submission of a SUBMITTING request', () =>
      given([queued(), submitting])
        .when(on('RecordSubmissions', { externalId: 'job-1', externalHost: 'mock' }))
        .then([submitted]));
    it('records no submission of a QUEUED one', () =>
      given([queued()])
        .when(on('RecordSubmissions', { externalId: 'job-1', externalHost: 'mock' }))
        .thenNothingHappened());
    it('records the submission’s failure', () =>
      given([queued(), submitting])
        .when(on('RecordSubmissionFailures', { reason: 'refused' }))
        .then([
          {
            type: 'RequestSubmissionFailed',
            data: { requests: [{ requestId: 'r1', reason: 'refused' }], failedAt: AT },
          },
        ]));
  });

  describe('records the reports of its current job only', () => {
    it('DONE', () =>
      given([queued(), submitting, submitted])
        .when(report('DONE'))
        .then([{ type: 'TransferSucceeded', data: { requests: [{ ...link, startedAt: AT, transferredAt: AT }] } }]));
    it('FAILED', () =>
      given([queued(), submitting, submitted])
        .when(report('FAILED'))
        .then([
          {
            type: 'TransferFailed',
            data: { requests: [{ ...link, reason: 'boom', startedAt: AT, failedAt: AT }] },
          },
        ]));
    it('LOST', () =>
      given([queued(), submitting, submitted])
        .when(report('LOST'))
        .then([{ type: 'TransferLost', data: { requests: [{ ...link, reason: 'boom', lostAt: AT }] } }]));
    it('none of an earlier job', () =>
      given([queued(), submitting, submitted]).when(report('DONE', 'an-earlier-job')).thenNothingHappened());
  });

  it('takes a second report of the same outcome as a no-op', () =>
    given([
      queued(),
      submitting,
      submitted,
      { type: 'TransferSucceeded', data: { requests: [{ ...link, startedAt: AT, transferredAt: AT }] } },
    ])
      .when(report('DONE'))
      .thenNothingHappened());

  describe('archives finished requests and SUBMITTING ones, and nothing else', () => {
    const failed: RequestEvent = {
      type: 'TransferFailed',
      data: { requests: [{ ...link, reason: 'boom', startedAt: AT, failedAt: AT }] },
    };
    const archived = (state: string, retriedAs: string | null, error: string | null): RequestEvent =>
      ({
        type: 'RequestArchived',
        data: {
          requests: [
            { requestId: 'r1', scope: 'user.jdoe', name: 'f1', destRseId: 'dest-id', state, retriedAs, error },
          ],
          archivedAt: AT,
        },
      }) as RequestEvent;
    it('a FAILED request, naming its retry', () =>
      given([queued(), submitting, submitted, failed])
        .when(on('ArchiveRequests', { retriedAs: 'r2', error: null }))
        .then([archived('FAILED', 'r2', null)]));
    it('a SUBMITTING request, with the error', () =>
      given([queued(), submitting])
        .when(on('ArchiveRequests', { retriedAs: null, error: 'stuck' }))
        .then([archived('SUBMITTING', null, 'stuck')]));
    it('nothing of a request still SUBMITTED', () =>
      given([queued(), submitting, submitted])
        .when(on('ArchiveRequests', { retriedAs: null, error: null }))
        .thenNothingHappened());
  });

  it('cancels an unfinished request with the job the tool must stop', () =>
    given([queued(), submitting, submitted])
      .when(on('CancelRequests', { reason: 'rule deleted' }))
      .then([
        {
          type: 'RequestCancelled',
          data: {
            requests: [
              {
                requestId: 'r1',
                scope: 'user.jdoe',
                name: 'f1',
                destRseId: 'dest-id',
                previousState: 'SUBMITTED',
                reason: 'rule deleted',
                externalId: 'job-1',
                transfertool: 'mock',
              },
            ],
            cancelledAt: AT,
          },
        },
      ]));
});

describe('Request decider: a batch of requests in one stream (docs/architecture.md, "Event granularity")', () => {
  it('queues a step’s requests as one event', () =>
    given([])
      .when(
        command('QueueRequests', {
          requests: [
            { request: record, state: 'QUEUED' },
            { request: record2, state: 'QUEUED' },
          ],
        }),
      )
      .then([queued('QUEUED', [record, record2])]));

  it('moves, in one event, only the requests still in the state the command moves them from', () =>
    given([queued('QUEUED', [record, record2]), submitting])
      .when(on('MarkRequestsSubmitting', submittingItem, ['r1', 'r2', 'r3']))
      .then([
        {
          type: 'RequestSubmitting',
          data: { requests: [{ requestId: 'r2', ...submittingItem }], submittingAt: AT },
        },
      ]));

  it('moves a request named twice by the first item only', () =>
    given([queued('PREPARING')])
      .when(
        command('PrepareRequests', {
          requests: [
            { requestId: 'r1', sourceRseId: 'src-id', sourceRse: 'SRC', transfertool: 'mock', waiting: true },
            { requestId: 'r1', sourceRseId: 'src-id', sourceRse: 'SRC', transfertool: 'mock', waiting: false },
          ],
        }),
      )
      .then([
        {
          type: 'RequestPrepared',
          data: {
            requests: [
              { requestId: 'r1', state: 'WAITING', sourceRseId: 'src-id', sourceRse: 'SRC', transfertool: 'mock' },
            ],
            preparedAt: AT,
          },
        },
      ]));

  it('records a page of reports as one event per outcome', () =>
    given([
      queued('QUEUED', [record, record2]),
      {
        type: 'RequestSubmitting',
        data: {
          requests: [
            { requestId: 'r1', ...submittingItem },
            { requestId: 'r2', ...submittingItem },
          ],
          submittingAt: AT,
        },
      },
      {
        type: 'RequestSubmitted',
        data: {
          requests: [
            { requestId: 'r1', externalId: 'job-1', externalHost: 'mock' },
            { requestId: 'r2', externalId: 'job-2', externalHost: 'mock' },
          ],
          submittedAt: AT,
        },
      },
    ])
      .when(command('RecordTransferReports', { requests: [reportOf('DONE'), reportOf('FAILED', 'job-2', 'r2')] }))
      .then([
        { type: 'TransferSucceeded', data: { requests: [{ ...link, startedAt: AT, transferredAt: AT }] } },
        {
          type: 'TransferFailed',
          data: {
            requests: [
              {
                ...link,
                requestId: 'r2',
                name: 'f2',
                externalId: 'job-2',
                reason: 'boom',
                startedAt: AT,
                failedAt: AT,
              },
            ],
          },
        },
      ]));

  it('folds a stream written before batches (one request, events of version 1) as a batch of one', () => {
    const stored = [
      { type: 'RequestQueued', data: { request: record, state: 'QUEUED' } },
      {
        type: 'RequestSubmitting',
        data: { requestId: 'r1', ...submittingItem, submittingAt: AT },
      },
      {
        type: 'RequestSubmitted',
        data: { requestId: 'r1', externalId: 'job-1', externalHost: 'mock', submittedAt: AT },
      },
      { type: 'TransferSucceeded', data: { ...link, startedAt: AT, transferredAt: AT } },
    ];
    const batch = stored
      .map((event) =>
        upcastEvent<RequestEvent>(eventUpcasters, { type: event.type, data: event.data, schemaVersion: undefined }),
      )
      .reduce(requestDecider.evolve, requestDecider.initialState());
    expect([...batch.requests.keys()]).to.deep.equal(['r1']);
    expect(batch.requests.get('r1')).to.deep.include({ status: 'Active', state: 'DONE', externalId: 'job-1' });
  });
});

describe('Request retries (behaviour rule 22)', () => {
  const state = (events: RequestEvent[]) =>
    requestIn(events.reduce(requestDecider.evolve, requestDecider.initialState()), 'r1');
  const failed: RequestEvent = {
    type: 'TransferFailed',
    data: { requests: [{ ...link, reason: 'boom', startedAt: AT, failedAt: AT }] },
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
    const active = state([queued('QUEUED', [{ ...record, retryCount: 2 }]), submitting]);
    if (active.status !== 'Active') throw new Error('not active');
    expect(retryRecord(active, AT, false)).to.deep.include({
      retryCount: 2,
      sources: [{ rseId: 'src-id', rse: 'SRC', ranking: 0 }],
    });
  });
});
