import { expect } from 'chai';
import type { RequestEvent, RequestRecord } from '../../domain/request/request.ts';
import { requestIn } from '../../domain/request/requestBatch.ts';
import { requestDecider } from '../../domain/request/requestDecider.ts';
import { INTERMEDIATE_HOP_RULE_ID, type PlannedPath } from '../../domain/request/transferHops.ts';
import { AT } from '../support/deciderSpec.ts';
import {
  givenRequests as given,
  requestCommand as command,
  requestsQueued,
  transferLink,
  transferRequest,
} from '../support/requestSpec.ts';

/** The request decider on multihop paths (Rucio's transfer_hops, `handle_failed_intermediate_hop`). */

const initial = transferRequest({ id: 'init' });
const path = ['SRC', 'H1', 'H2', 'DEST'];
const hop = (
  id: string,
  dest: string,
  source: string,
  previousHopId: string | null,
  nextHopId: string,
): RequestRecord => ({
  ...initial,
  id,
  destRseId: `${dest.toLowerCase()}-id`,
  destRse: dest,
  ruleId: INTERMEDIATE_HOP_RULE_ID,
  retryCount: 0,
  requestedAt: AT,
  attributes: { ...initial.attributes, sourceReplicaExpression: source, priority: 3, isIntermediateHop: true },
  transferHop: { initialRequestId: 'init', previousHopId, nextHopId, path },
});
const hop1 = hop('hop1', 'H1', 'SRC', null, 'hop2');
const hop2 = hop('hop2', 'H2', 'H1', 'hop1', 'init');
const planned: PlannedPath = { initialRequestId: 'init', path, hops: [hop1, hop2] };

const queueHops = command('QueueRequestHops', {
  paths: [
    {
      initialRequestId: 'init',
      path,
      hops: [
        { id: 'hop1', destRseId: 'h1-id', destRse: 'H1', sourceRse: 'SRC' },
        { id: 'hop2', destRseId: 'h2-id', destRse: 'H2', sourceRse: 'H1' },
      ],
    },
  ],
});
const queued = requestsQueued([initial]);
const hopsQueued: RequestEvent = { type: 'RequestHopsQueued', data: { paths: [planned], queuedAt: AT } };
const source = { rseId: 'src-id', rse: 'SRC', ranking: 0, pfn: 'root://src/f1' };
const submitting = (requestIds: string[]): RequestEvent => ({
  type: 'RequestSubmitting',
  data: {
    requests: requestIds.map((requestId) => ({
      requestId,
      sources: [source],
      destUrl: 'root://x/f1',
      transfertool: 'fts3',
    })),
    submittingAt: AT,
  },
});
const submitted = (requestIds: string[]): RequestEvent => ({
  type: 'RequestSubmitted',
  data: {
    requests: requestIds.map((requestId) => ({ requestId, externalId: 'job-1', externalHost: 'fts' })),
    submittedAt: AT,
  },
});
const failedReport = (requestId: string) => ({
  requestId,
  externalId: 'job-1',
  outcome: 'FAILED',
  reason: 'SOURCE [2] No such file',
  source: null,
  startedAt: AT,
  finishedAt: AT,
});

const hop1Failed: RequestEvent = {
  type: 'TransferFailed',
  data: {
    requests: [
      {
        ...transferLink({ requestId: 'hop1', destRseId: 'h1-id', destRse: 'H1' }),
        reason: 'SOURCE [2] No such file',
        startedAt: AT,
        failedAt: AT,
      },
    ],
  },
};
const unusedHops = (previousState: 'QUEUED' | 'SUBMITTED'): RequestEvent => ({
  type: 'RequestHopsFailed',
  data: {
    requests: ['hop2', 'init'].map((requestId) => ({
      requestId,
      previousState,
      failedHopId: 'hop1',
      reason: 'Unused hop in multi-hop',
    })),
    failedAt: AT,
  },
});

// Behaviour rule 22 on a multihop path: a failed hop fails the copies after it.
describe('Request decider: multihop paths (Rucio’s transfer_hops)', () => {
  it('queues the intermediate hops of a QUEUED request, which learns its path', () => {
    given([queued]).when(queueHops).then([hopsQueued]);
    const batch = [queued, hopsQueued].reduce(requestDecider.evolve, requestDecider.initialState());
    const state = requestIn(batch, 'init');
    expect(state.status === 'Active' && state.transferHop).to.deep.equal({
      initialRequestId: 'init',
      previousHopId: 'hop2',
      nextHopId: null,
      path,
    });
    const first = requestIn(batch, 'hop1');
    expect(first.status === 'Active' && [first.state, first.transferHop?.nextHopId]).to.deep.equal(['QUEUED', 'hop2']);
  });

  it('queues no second path for a request already on one', () =>
    given([queued, hopsQueued]).when(queueHops).thenNothingHappened());

  it('queues no path for a request another submitter took meanwhile', () =>
    given([queued, submitting(['init'])])
      .when(queueHops)
      .thenNothingHappened());

  it('fails the copies after an intermediate hop that failed, in the same decision', () =>
    given([queued, hopsQueued, submitting(['hop1']), submitted(['hop1'])])
      .when(command('RecordTransferReports', { requests: [failedReport('hop1')] }))
      .then([hop1Failed, unusedHops('QUEUED')]));

  it('fails the copies submitted with the hop in one job too (a multihop FTS job)', () => {
    const all = ['hop1', 'hop2', 'init'];
    given([queued, hopsQueued, submitting(all), submitted(all)])
      .when(command('RecordTransferReports', { requests: [failedReport('hop1')] }))
      .then([hop1Failed, unusedHops('SUBMITTED')]);
  });

  it('leaves copies still SUBMITTING with the hop to the submission’s own outcome', () =>
    given([queued, hopsQueued, submitting(['hop1', 'hop2', 'init'])])
      .when(command('RecordSubmissionFailures', { requests: [{ requestId: 'hop1', reason: 'refused' }] }))
      .then([
        {
          type: 'RequestSubmissionFailed',
          data: { requests: [{ requestId: 'hop1', reason: 'refused' }], failedAt: AT },
        },
      ]));

  it('leaves the path alone when the initial request itself fails', () => {
    const events = requestDecider.decide(
      command('RecordTransferReports', { requests: [failedReport('init')] }),
      [queued, hopsQueued, submitting(['hop1', 'hop2', 'init']), submitted(['hop1', 'hop2', 'init'])].reduce(
        requestDecider.evolve,
        requestDecider.initialState(),
      ),
    );
    expect(events.map((event) => event.type)).to.deep.equal(['TransferFailed']);
  });
});
