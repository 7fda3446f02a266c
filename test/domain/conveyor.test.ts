import { finisher, type FinishedRequest, type FinisherSettings } from '../../domain/request/finisher.ts';
import { jobsToPoll, poller, type ToolReport } from '../../domain/request/poller.ts';
import { preparer } from '../../domain/request/preparer.ts';
import { retryIdOf } from '../../domain/request/retries.ts';
import { stager, submitter } from '../../domain/request/submitter.ts';
import { hopIdOf } from '../../domain/request/transferHops.ts';
import { throttler, type ThrottledRequest } from '../../domain/request/throttler.ts';
import type { TransferLimit } from '../../domain/request/transferLimit.ts';
import { bindLimits } from '../../domain/request/transferLimits.ts';
import { expect } from 'chai';
import { workflowSpec } from '../support/workflowSpec.ts';
import { aSelectionRequest, aTopology, replicaOn, transferRse } from '../support/topology.ts';

const now = '2026-11-22T10:00:00.000Z';
const topology = aTopology(
  [transferRse('DEST'), transferRse('SRC'), transferRse('OTHER')],
  [
    ['SRC', 'DEST', 1],
    ['SRC', 'OTHER', 1],
  ],
);
const limit = (extra: Partial<TransferLimit> = {}): TransferLimit => ({
  id: 'limit-1',
  rseExpression: 'DEST',
  activity: 'all_activities',
  direction: 'DESTINATION',
  maxTransfers: 1,
  volume: 0,
  deadline: 1,
  strategy: 'fifo',
  transfers: null,
  waitings: null,
  createdAt: now,
  updatedAt: now,
  ...extra,
});

describe('Workflow: the conveyor-preparer (rules 23 and 24)', () => {
  const given = workflowSpec(preparer);
  const request = { ...aSelectionRequest('DEST'), activity: 'User Subscriptions' };
  const replicas = new Map([['r1', [replicaOn('SRC')]]]);
  it('chooses the source and the tool, and queues the request when no limit applies', () =>
    given({ topology, limits: [], requests: [request], replicas })
      .when({ now })
      .then([
        {
          type: 'PrepareRequest',
          data: { requestId: 'r1', sourceRseId: 'src-id', sourceRse: 'SRC', transfertool: 'mock', waiting: false },
        },
      ]));
  it('makes the request wait when a transfer limit covers its destination', () =>
    given({ topology, limits: bindLimits(topology, [limit()]), requests: [request], replicas })
      .when({ now })
      .then([
        {
          type: 'PrepareRequest',
          data: { requestId: 'r1', sourceRseId: 'src-id', sourceRse: 'SRC', transfertool: 'mock', waiting: true },
        },
      ]));
  it('ignores a limit of another activity', () =>
    given({ topology, limits: bindLimits(topology, [limit({ activity: 'Express' })]), requests: [request], replicas })
      .when({ now })
      .then([
        {
          type: 'PrepareRequest',
          data: { requestId: 'r1', sourceRseId: 'src-id', sourceRse: 'SRC', transfertool: 'mock', waiting: false },
        },
      ]));
  it('records NO_SOURCES for a file held nowhere else', () =>
    given({ topology, limits: [], requests: [request], replicas: new Map() })
      .when({ now })
      .then([
        {
          type: 'RecordSourcesUnavailable',
          data: { requestId: 'r1', state: 'NO_SOURCES', reason: 'no AVAILABLE replica on another RSE' },
        },
      ]));
});

describe('Workflow: the conveyor-submitter (rules 22 and 23)', () => {
  const given = workflowSpec(submitter);
  it('submits a queued request with its sources, URL and tool', () =>
    given({
      topology,
      requests: [{ ...aSelectionRequest('DEST'), requestedAt: now }],
      replicas: new Map([['r1', [replicaOn('SRC')]]]),
    })
      .when({ now })
      .then([
        {
          type: 'SubmitTransfer',
          data: {
            requestId: 'r1',
            sources: [
              { rseId: 'src-id', rse: 'SRC', ranking: 0, pfn: 'root://src.example.org:1094/data/user/jdoe/f1' },
            ],
            destUrl: 'root://dest.example.org:1094/data/user/jdoe/f1',
            transfertool: 'mock',
          },
        },
      ]));
  it('leaves STAGEIN requests for the stager', () =>
    given({
      topology,
      requests: [{ ...aSelectionRequest('DEST', { requestType: 'STAGEIN' }), requestedAt: now }],
      replicas: new Map(),
    })
      .when({ now })
      .then([{ type: 'Skipped', data: { what: 'r1', reason: 'STAGEIN requests are the stager’s' } }]));

  describe('given a request whose path passes through a multihop RSE', () => {
    const multihop = aTopology(
      [transferRse('DEST'), transferRse('SRC'), transferRse('MID', { attributes: { available_for_multihop: true } })],
      [
        ['SRC', 'MID', 1],
        ['MID', 'DEST', 1],
      ],
    );
    const facts = (pathTools: string[]) => ({
      topology: multihop,
      requests: [{ ...aSelectionRequest('DEST'), id: 'init', requestedAt: now }],
      replicas: new Map([['init', [replicaOn('SRC')]]]),
      pathTools: new Set(pathTools),
    });
    const submission = (submitNow: number) => ({
      type: 'SubmitTransfer' as const,
      data: {
        requestId: 'init',
        sources: [{ rseId: 'mid-id', rse: 'MID', ranking: 0, pfn: 'root://mid.example.org:1094/data/user/jdoe/f1' }],
        destUrl: 'root://dest.example.org:1094/data/user/jdoe/f1',
        transfertool: 'mock',
        path: {
          rses: ['SRC', 'MID', 'DEST'],
          hops: [
            {
              id: hopIdOf('init', 0),
              destRseId: 'mid-id',
              destRse: 'MID',
              source: { rseId: 'src-id', rse: 'SRC', ranking: 0, pfn: 'root://src.example.org:1094/data/user/jdoe/f1' },
              destUrl: 'root://mid.example.org:1094/data/user/jdoe/f1',
              transfertool: 'mock',
              tombstoneDelay: 7200,
            },
          ],
          submitNow,
        },
      },
    });
    it('plans its hops and submits the first copy alone with a tool that copies one hop at a time', () =>
      given(facts([]))
        .when({ now })
        .then([submission(1)]));
    it('submits the whole path as one job with a tool that runs paths', () =>
      given(facts(['mock']))
        .when({ now })
        .then([submission(2)]));
    it('keeps an intermediate hop to a direct path', () =>
      given({ ...facts([]), requests: [{ ...facts([]).requests[0]!, intermediateHop: true }] })
        .when({ now })
        .then([
          {
            type: 'RecordSourcesUnavailable',
            data: { requestId: 'init', state: 'NO_SOURCES', reason: 'an intermediate hop takes a direct path only' },
          },
        ]));
  });
});

describe('Workflow: the conveyor-stager (Rucio’s stager)', () => {
  const given = workflowSpec(stager);
  const staging = aTopology(
    [
      transferRse('BUFFER'),
      transferRse('TAPE', { properties: { rse_type: 'TAPE' }, attributes: { staging_buffer: 'BUFFER' } }),
    ],
    [],
  );
  it('brings a STAGEIN request’s file online where it is', () =>
    given({
      topology: staging,
      requests: [{ ...aSelectionRequest('BUFFER', { requestType: 'STAGEIN' }), requestedAt: now }],
      replicas: new Map([['r1', [replicaOn('TAPE')]]]),
    })
      .when({ now })
      .then([
        {
          type: 'SubmitTransfer',
          data: {
            requestId: 'r1',
            sources: [
              { rseId: 'tape-id', rse: 'TAPE', ranking: 0, pfn: 'root://tape.example.org:1094/data/user/jdoe/f1' },
            ],
            destUrl: 'root://tape.example.org:1094/data/user/jdoe/f1',
            transfertool: 'mock',
          },
        },
      ]));
  it('leaves transfers to the submitter', () =>
    given({
      topology: staging,
      requests: [{ ...aSelectionRequest('BUFFER'), requestedAt: now }],
      replicas: new Map(),
    })
      .when({ now })
      .then([{ type: 'Skipped', data: { what: 'r1', reason: 'TRANSFER requests are not the conveyor-stager’s' } }]));
});

describe('Workflow: the conveyor-poller (rule 22)', () => {
  const given = workflowSpec(poller);
  const requests = [
    { requestId: 'r1', externalId: 'j1', transfertool: 'mock', submittedAt: now },
    { requestId: 'r2', externalId: 'j2', transfertool: 'mock', submittedAt: now },
  ];
  it('records what finished and leaves running jobs alone', () =>
    given({ requests })
      .when({
        reports: new Map([
          [
            'j1',
            { externalId: 'j1', state: 'DONE' as const, reason: null, source: null, startedAt: now, finishedAt: now },
          ],
          [
            'j2',
            {
              externalId: 'j2',
              state: 'SUBMITTED' as const,
              reason: null,
              source: null,
              startedAt: now,
              finishedAt: null,
            },
          ],
        ]),
      })
      .then([
        {
          type: 'RecordTransferReport',
          data: {
            requestId: 'r1',
            externalId: 'j1',
            outcome: 'DONE',
            reason: null,
            source: null,
            startedAt: now,
            finishedAt: now,
          },
        },
      ]));
});

describe('Workflow: the conveyor-poller on a multihop job', () => {
  const given = workflowSpec(poller);
  const report = (state: 'SUBMITTED' | 'DONE' | 'FAILED', reason: string | null = null) => ({
    externalId: 'job',
    state,
    reason,
    source: null,
    startedAt: now,
    finishedAt: state === 'SUBMITTED' ? null : now,
  });
  it('records each copy of the job by what the job says of it, staging times included', () =>
    given({
      requests: [
        { requestId: 'hop1', externalId: 'job', transfertool: 'fts3', submittedAt: now },
        { requestId: 'init', externalId: 'job', transfertool: 'fts3', submittedAt: now },
      ],
    })
      .when({
        reports: new Map([
          [
            'job',
            {
              ...report('SUBMITTED'),
              byRequest: new Map<string, ToolReport>([
                ['hop1', { ...report('DONE'), stagingStartedAt: now, stagingFinishedAt: now }],
                ['init', report('SUBMITTED')],
              ]),
            },
          ],
        ]),
      })
      .then([
        {
          type: 'RecordTransferReport',
          data: {
            requestId: 'hop1',
            externalId: 'job',
            outcome: 'DONE',
            reason: null,
            source: null,
            startedAt: now,
            finishedAt: now,
            stagingStartedAt: now,
            stagingFinishedAt: now,
          },
        },
      ]));
  it('asks for a job its copies share once', () =>
    expect(
      jobsToPoll(
        [
          { requestId: 'hop1', externalId: 'job', transfertool: 'fts3', submittedAt: now },
          { requestId: 'init', externalId: 'job', transfertool: 'fts3', submittedAt: now },
        ],
        now,
        0,
      ),
    ).to.deep.equal(new Map([['fts3', ['job']]])));
});

describe('Workflow: the conveyor-finisher (rules 17, 18 and 22)', () => {
  const given = workflowSpec(finisher);
  const settings: FinisherSettings = {
    retryProtocolMismatches: false,
    suspiciousPatterns: ['.*checksum mismatch.*'],
    submittingTimeoutSeconds: 7200,
  };
  const finished = (extra: Partial<FinishedRequest>): FinishedRequest => ({
    requestId: 'r1',
    state: 'FAILED',
    retryCount: null,
    error: 'boom',
    changedAt: now,
    hasSource: true,
    ...extra,
  });

  it('makes the replica of a DONE transfer available', () =>
    given({ requests: [finished({ state: 'DONE', error: null })], settings })
      .when({ now })
      .then([{ type: 'MarkReplicaAvailable', data: { requestId: 'r1' } }]));
  describe('given a FAILED transfer', () => {
    it('retries it with its sources ranked lower', () =>
      given({ requests: [finished({ retryCount: 2 })], settings })
        .when({ now })
        .then([{ type: 'RetryTransfer', data: { requestId: 'r1', lowerRankings: true } }]));
    it('gives it up after three retries', () =>
      given({ requests: [finished({ retryCount: 3 })], settings })
        .when({ now })
        .then([{ type: 'GiveUpTransfer', data: { requestId: 'r1', error: 'TRANSFER_FAILED:boom' } }]));
  });
  it('never retries NO_SOURCES and ONLY_TAPE_SOURCES', () =>
    given({
      requests: [finished({ state: 'NO_SOURCES' }), finished({ requestId: 'r2', state: 'ONLY_TAPE_SOURCES' })],
      settings,
    })
      .when({ now })
      .then([
        { type: 'GiveUpTransfer', data: { requestId: 'r1', error: 'NO_SOURCES:NO_SOURCES' } },
        { type: 'GiveUpTransfer', data: { requestId: 'r2', error: 'NO_SOURCES:ONLY_TAPE_SOURCES' } },
      ]));
  describe('given a MISMATCH_SCHEME request', () => {
    it('gives it up by default', () =>
      given({ requests: [finished({ state: 'MISMATCH_SCHEME' })], settings })
        .when({ now })
        .then([{ type: 'GiveUpTransfer', data: { requestId: 'r1', error: 'MISMATCH_SCHEME:MISMATCH_SCHEME' } }]));
    it('retries it when configured to, without touching rankings', () =>
      given({
        requests: [finished({ state: 'MISMATCH_SCHEME' })],
        settings: { ...settings, retryProtocolMismatches: true },
      })
        .when({ now })
        .then([{ type: 'RetryTransfer', data: { requestId: 'r1', lowerRankings: false } }]));
  });
  it('retries a LOST transfer without touching rankings', () =>
    given({ requests: [finished({ state: 'LOST' })], settings })
      .when({ now })
      .then([{ type: 'RetryTransfer', data: { requestId: 'r1', lowerRankings: false } }]));
  describe('given a request SUBMITTING', () => {
    it('retries it when stuck past the bound, whatever its count', () =>
      given({
        requests: [finished({ state: 'SUBMITTING', retryCount: 3, changedAt: '2026-11-22T07:00:00.000Z' })],
        settings,
      })
        .when({ now })
        .then([{ type: 'RetryTransfer', data: { requestId: 'r1', lowerRankings: false } }]));
    it('leaves a recent one to its submitter', () =>
      given({ requests: [finished({ state: 'SUBMITTING', changedAt: '2026-11-22T09:59:00.000Z' })], settings })
        .when({ now })
        .thenNothing());
  });
  it('declares the source of a failure matching a suspicious pattern SUSPICIOUS first (§2.4)', () =>
    given({ requests: [finished({ error: 'source checksum mismatch detected' })], settings })
      .when({ now })
      .then([
        { type: 'DeclareSourceSuspicious', data: { requestId: 'r1', reason: 'source checksum mismatch detected' } },
        { type: 'RetryTransfer', data: { requestId: 'r1', lowerRankings: true } },
      ]));
  it('never retries an intermediate hop of a multihop path: its replica is given up', () =>
    given({ requests: [finished({ intermediateHop: true })], settings })
      .when({ now })
      .then([{ type: 'GiveUpTransfer', data: { requestId: 'r1', error: 'TRANSFER_FAILED:boom' } }]));
  it('derives the retry id from the failed request, so a finisher run twice queues one retry', () =>
    expect(retryIdOf('r1')).to.equal(retryIdOf('r1')).and.not.equal(retryIdOf('r2')));
});

describe('Workflow: the conveyor-throttler (rule 24)', () => {
  const given = workflowSpec(throttler);
  const request = (
    id: string,
    state: ThrottledRequest['state'],
    extra: Partial<ThrottledRequest> = {},
  ): ThrottledRequest => ({
    id,
    state,
    sourceRseId: 'src-id',
    destRseId: 'dest-id',
    activity: 'User Subscriptions',
    account: 'jdoe',
    bytes: 100,
    requestedAt: `2026-11-22T09:0${id.slice(1)}:00.000Z`,
    changedAt: now,
    dataset: null,
    scope: 'user.jdoe',
    name: id,
    ...extra,
  });
  const stats = (transfers: number, waitings: number) => ({
    type: 'RecordTransferLimitStats' as const,
    data: { id: 'limit-1', transfers, waitings },
  });
  const release = (requestId: string) => ({ type: 'ReleaseRequest' as const, data: { requestId } });

  it('releases the oldest waiting requests up to the limit minus what is active', () =>
    given({
      topology,
      limits: bindLimits(topology, [limit({ maxTransfers: 3 })]),
      requests: [
        request('r3', 'WAITING'),
        request('r1', 'WAITING'),
        request('r2', 'WAITING'),
        request('r9', 'SUBMITTED'),
      ],
    })
      .when({ now })
      .then([release('r1'), release('r2'), stats(1, 3)]));
  it('releases nothing while 80 % of the limit is in use', () =>
    given({
      topology,
      limits: bindLimits(topology, [limit({ maxTransfers: 5 })]),
      requests: [request('r1', 'WAITING'), ...['r5', 'r6', 'r7', 'r8'].map((id) => request(id, 'QUEUED'))],
    })
      .when({ now })
      .then([stats(4, 1)]));
  it('never releases under a limit of 0 transfers', () =>
    given({
      topology,
      limits: bindLimits(topology, [limit({ maxTransfers: 0 })]),
      requests: [request('r1', 'WAITING')],
    })
      .when({ now })
      .then([stats(0, 1)]));
  it('shares the capacity between accounts, fewest waiting first', () =>
    given({
      topology,
      limits: bindLimits(topology, [limit({ maxTransfers: 2 })]),
      requests: [
        request('r1', 'WAITING', { account: 'busy' }),
        request('r2', 'WAITING', { account: 'busy' }),
        request('r3', 'WAITING', { account: 'busy' }),
        request('r4', 'WAITING', { account: 'quiet' }),
      ],
    })
      .when({ now })
      .then([release('r1'), release('r4'), stats(0, 4)]));
  it('releases whole datasets for grouped_fifo, oldest first, a dataset overshooting the count', () =>
    given({
      topology,
      limits: bindLimits(topology, [limit({ maxTransfers: 2, strategy: 'grouped_fifo', deadline: null })]),
      requests: [
        request('r1', 'WAITING', { dataset: 'ds1' }),
        request('r2', 'WAITING', { dataset: 'ds1' }),
        request('r3', 'WAITING', { dataset: 'ds1' }),
        request('r4', 'WAITING', { dataset: 'ds2' }),
      ],
    })
      .when({ now })
      .then([release('r1'), release('r2'), release('r3'), stats(0, 4)]));
  it('releases everything of a group no limit covers any more', () =>
    given({ topology, limits: [], requests: [request('r1', 'WAITING'), request('r2', 'WAITING')] })
      .when({ now })
      .then([release('r1'), release('r2')]));
  it('sends requests waiting for more than a day back to PREPARING', () =>
    given({
      topology,
      limits: bindLimits(topology, [limit({ maxTransfers: 0, transfers: 0, waitings: 1 })]),
      requests: [request('r1', 'WAITING', { changedAt: '2026-11-21T09:00:00.000Z' })],
    })
      .when({ now })
      .then([{ type: 'ReturnRequestToPreparing', data: { requestId: 'r1' } }]));
});
