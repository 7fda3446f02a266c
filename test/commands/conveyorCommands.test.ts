import { markRequestsSubmitting } from '../../commands/request/submissionStep.ts';
import { expect } from 'chai';
import type { CommandContext } from '../../commands/commandContext.ts';
import { recordSubmissions, recordTransferReports } from '../../commands/request/conveyorSteps.ts';
import { finishRequests } from '../../commands/request/requestFinishing.ts';
import { loadFileReplicas } from '../../commands/did/didStreams.ts';
import { addRules } from '../../commands/rule/ruleCreationCommands.ts';
import { loadRse } from '../../commands/rse/rseCommands.ts';
import type { PendingRequest } from '../../domain/replica/replica.ts';
import { retryIdOf } from '../../domain/request/retries.ts';
import type { FinisherOutput } from '../../domain/request/finisher.ts';
import { as, commandSpec, SPEC_NOW } from '../support/commandSpec.ts';
import { created } from '../support/didEvents.ts';
import { transferLink, transferRequest } from '../support/requestSpec.ts';
import type { StreamedEvent } from '../support/projectionHarness.ts';
import { aDataset, aRuleRequest, aWorld, SCOPE } from '../support/rules.ts';

const ofType = (events: readonly StreamedEvent[], type: string) =>
  events.filter((event) => event.type === type).map((event) => event.data as Readonly<Record<string, unknown>>);
/** The items of the batch events of a type (requests), in order. */
const itemsOf = (events: readonly StreamedEvent[], type: string) =>
  ofType(events, type).flatMap((data) => data.requests as Readonly<Record<string, unknown>>[]);
/** SITE_B's id, as the events name it. */
const siteB = (events: readonly StreamedEvent[]) => ofType(events, 'ReplicaStateChanged')[0]!.rseId;

/**
 * The conveyor's commands over a real event store: each daemon's batch is one step, every request
 * decides on its own stream whether the step still applies, and the finisher changes replicas,
 * locks, rules and requests together.
 */
describe('Commands: the conveyor moves requests (rules 17, 18 and 22)', () => {
  const spec = commandSpec();
  let ruleId = '';
  let requestId = '';
  /** The batch stream of the rule's request (its retry joins it). */
  let streams = new Map<string, string>();

  const pendingOf = async (context: CommandContext, name: string): Promise<PendingRequest> => {
    const rse = await loadRse(context, 'SITE_B');
    if (rse.status !== 'Active') throw new Error('no SITE_B');
    return (await loadFileReplicas(context, SCOPE, name)).replicas.get(rse.id)!.pendingRequest!;
  };
  let source = { rseId: '', rse: 'SITE_A', ranking: 0, pfn: 'root://a/f1' };
  /** A rule to SITE_B on one file of SITE_A; its request submitted as job-1 when `submitted`. */
  const world =
    (submitted: 'queued' | 'submitting' | 'submitted' | 'DONE' | 'FAILED' = 'queued') =>
    async (context: CommandContext, settle: () => Promise<void>) => {
      await aWorld(context, { SITE_A: {}, SITE_B: {} });
      await aDataset(context, 'ds', ['f1'], 'SITE_A');
      await settle();
      [ruleId] = (await addRules(context, aRuleRequest('ds', 'SITE_B'), as('root'))).ruleIds as [string];
      const pending = await pendingOf(context, 'f1');
      requestId = pending.id;
      streams = new Map([[pending.id, pending.stream]]);
      const siteA = await loadRse(context, 'SITE_A');
      source = { ...source, rseId: siteA.status === 'Active' ? siteA.id : '' };
      if (submitted === 'queued') return;
      await markRequestsSubmitting(
        context,
        [
          {
            type: 'SubmitTransfer',
            data: { requestId, sources: [source], destUrl: 'root://b/f1', transfertool: 'mock' },
          },
        ],
        streams,
        as('root'),
      );
      if (submitted === 'submitting') return;
      await recordSubmissions(context, [{ requestId, externalId: 'job-1', externalHost: 'mock' }], streams, as('root'));
      if (submitted === 'submitted') return;
      await recordTransferReports(
        context,
        [
          {
            type: 'RecordTransferReport',
            data: {
              requestId,
              externalId: 'job-1',
              outcome: submitted,
              reason: submitted === 'FAILED' ? 'checksum mismatch' : null,
              source: null,
              startedAt: null,
              finishedAt: null,
            },
          },
        ],
        streams,
        as('root'),
      );
      await settle();
    };
  const finish = (output: (id: string) => FinisherOutput[]) => (context: CommandContext) =>
    finishRequests(context, output(requestId), streams, as('root'));

  it('marks a QUEUED request SUBMITTING once: a second submitter finds it taken', () =>
    spec
      .given(world('submitting'))
      .when(async (context) => {
        const second = await markRequestsSubmitting(
          context,
          [
            {
              type: 'SubmitTransfer',
              data: { requestId, sources: [source], destUrl: 'root://b/f1', transfertool: 'mock' },
            },
          ],
          streams,
          as('root'),
        );
        expect(second.submitting).to.have.length(0);
      })
      .thenNothingHappened());

  it('ignores a report of another job than the request’s current one', () =>
    spec
      .given(world('submitted'))
      .when((context) =>
        recordTransferReports(
          context,
          [
            {
              type: 'RecordTransferReport',
              data: {
                requestId,
                externalId: 'job-0',
                outcome: 'DONE',
                reason: null,
                source: null,
                startedAt: null,
                finishedAt: null,
              },
            },
          ],
          streams,
          as('root'),
        ),
      )
      .thenNothingHappened());

  it('finishes a DONE transfer: replica AVAILABLE, lock OK, rule OK and the request archived in one step (rule 17)', () =>
    spec
      .given(world('DONE'))
      .when(finish((id) => [{ type: 'MarkReplicaAvailable', data: { requestId: id } }]))
      .thenAppended((events) => {
        expect(events.map((event) => event.type)).to.deep.equal([
          'ReplicaStateChanged',
          'RequestArchived',
          'RuleLocksChanged',
          'RuleStateChanged',
        ]);
        expect(ofType(events, 'ReplicaStateChanged')[0]).to.include({ state: 'AVAILABLE' });
        expect(ofType(events, 'ReplicaStateChanged')[0]!.locks).to.deep.equal({ [ruleId]: 'OK' });
        expect(ofType(events, 'RuleStateChanged')[0]).to.include({ state: 'OK' });
        expect(ofType(events, 'RequestArchived')[0]!.requests).to.deep.equal([
          {
            requestId,
            scope: SCOPE,
            name: 'f1',
            destRseId: siteB(events),
            state: 'DONE',
            retriedAs: null,
            error: null,
          },
        ]);
      }));

  it('retries a FAILED transfer as a new request naming the previous attempt, the replica waiting for it (rule 22)', () =>
    spec
      .given(world('FAILED'))
      .when(finish((id) => [{ type: 'RetryTransfer', data: { requestId: id, lowerRankings: true } }]))
      .thenAppended((events) => {
        const retry = retryIdOf(requestId);
        // The retry joins the batch of the request it retries.
        const batch = streams.get(requestId)!;
        expect(events.map((event) => [event.type, event.stream.split('-')[0]])).to.deep.equal([
          ['ReplicaTransferRequeued', 'did'],
          ['RequestArchived', 'requests'],
          ['RequestQueued', 'requests'],
        ]);
        expect(events.slice(1).map((event) => event.stream)).to.deep.equal([batch, batch]);
        expect(itemsOf(events, 'RequestArchived')[0]).to.include({ state: 'FAILED', retriedAs: retry });
        expect(itemsOf(events, 'RequestQueued')[0]!.request).to.deep.include({
          id: retry,
          previousAttemptId: requestId,
          retryCount: 1,
          sources: [{ rseId: source.rseId, rse: 'SITE_A', ranking: -1 }],
        });
      }));

  it('gives up: replica UNAVAILABLE, lock STUCK, rule STUCK with the error, the source declared suspicious (rules 18, §2.4)', () =>
    spec
      .given(world('FAILED'))
      .when(
        finish((id) => [
          { type: 'DeclareSourceSuspicious', data: { requestId: id, reason: 'checksum mismatch' } },
          { type: 'GiveUpTransfer', data: { requestId: id, error: 'TRANSFER_FAILED:checksum mismatch' } },
        ]),
      )
      .thenAppended((events) => {
        expect(ofType(events, 'ReplicaDeclaredSuspicious')[0]).to.deep.include({
          rse: 'SITE_A',
          reason: 'checksum mismatch',
          // The failed transfer it comes from: the audit shows the declaration in the rule's history.
          transfer: { requestId, ruleId },
        });
        expect(ofType(events, 'ReplicaStateChanged')[0]).to.include({ state: 'UNAVAILABLE' });
        expect(ofType(events, 'ReplicaStateChanged')[0]!.locks).to.deep.equal({ [ruleId]: 'STUCK' });
        expect(ofType(events, 'RuleStateChanged')[0]).to.include({
          state: 'STUCK',
          error: 'TRANSFER_FAILED:checksum mismatch',
        });
        expect(itemsOf(events, 'RequestArchived')[0]).to.include({
          state: 'FAILED',
          error: 'TRANSFER_FAILED:checksum mismatch',
        });
      }));

  it('leaves an archived request alone when a second finisher comes to it', () =>
    spec
      .given(async (context, settle) => {
        await world('DONE')(context, settle);
        await finishRequests(context, [{ type: 'MarkReplicaAvailable', data: { requestId } }], streams, as('root'));
      })
      .when(async (context) => {
        const outcome = await finishRequests(
          context,
          [{ type: 'MarkReplicaAvailable', data: { requestId } }],
          streams,
          as('root'),
        );
        expect(outcome.skipped).to.deep.equal([{ what: requestId, reason: 'the request is archived already' }]);
      })
      .thenNothingHappened());
  it('registers a copy that arrived for a replica deleted meanwhile with a tombstone of now, so no dark data is left (a request stream written before batches: a batch of one)', () => {
    const where = { destRseId: 'b'.repeat(32), destRse: 'SITE_B' };
    const record = transferRequest({
      id: 'dark1',
      ...where,
      ruleId: 'r1',
      account: 'root',
      requestedAt: SPEC_NOW.toISOString(),
    });
    const link = transferLink({ requestId: 'dark1', ...where, sourceRseId: null, sourceRse: null });
    return spec
      .given([
        { stream: 'did-user.jdoe:f1', ...created('f1', 'FILE') },
        {
          stream: 'request-dark1',
          type: 'RequestQueued',
          data: { request: record, state: 'QUEUED' },
          schemaVersion: 1,
        },
        {
          stream: 'request-dark1',
          schemaVersion: 1,
          type: 'RequestSubmitting',
          data: {
            requestId: 'dark1',
            sources: [],
            destUrl: 'root://b/f1',
            transfertool: 'mock',
            submittingAt: SPEC_NOW.toISOString(),
          },
        },
        {
          stream: 'request-dark1',
          schemaVersion: 1,
          type: 'RequestSubmitted',
          data: { requestId: 'dark1', externalId: 'job-1', externalHost: 'mock', submittedAt: SPEC_NOW.toISOString() },
        },
        {
          stream: 'request-dark1',
          schemaVersion: 1,
          type: 'TransferSucceeded',
          data: { ...link, startedAt: null, transferredAt: SPEC_NOW.toISOString() },
        },
      ])
      .when((context) =>
        finishRequests(
          context,
          [{ type: 'MarkReplicaAvailable', data: { requestId: 'dark1' } }],
          new Map([['dark1', 'request-dark1']]),
          as('root'),
        ),
      )
      .then([
        {
          stream: 'request-dark1',
          type: 'RequestArchived',
          data: {
            requests: [
              {
                requestId: 'dark1',
                scope: 'user.jdoe',
                name: 'f1',
                destRseId: 'b'.repeat(32),
                state: 'DONE',
                retriedAs: null,
                error: null,
              },
            ],
            archivedAt: SPEC_NOW.toISOString(),
          },
        },
        {
          stream: 'did-user.jdoe:f1',
          type: 'ReplicaAdded',
          data: {
            scope: 'user.jdoe',
            name: 'f1',
            rse: 'SITE_B',
            rseId: 'b'.repeat(32),
            bytes: 100,
            md5: null,
            adler32: '0cc737eb',
            path: null,
            state: 'AVAILABLE',
            tombstone: SPEC_NOW.toISOString(),
            lock: null,
            addedAt: SPEC_NOW.toISOString(),
          },
        },
      ]);
  });
});
