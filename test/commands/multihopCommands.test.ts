import { expect } from 'chai';
import type { CommandContext } from '../../commands/commandContext.ts';
import { loadFileReplicas } from '../../commands/did/didStreams.ts';
import { recordSubmissions, recordTransferReports } from '../../commands/request/conveyorSteps.ts';
import { finishRequests } from '../../commands/request/requestFinishing.ts';
import { markRequestsSubmitting } from '../../commands/request/submissionStep.ts';
import { loadRse } from '../../commands/rse/rseCommands.ts';
import { addRules } from '../../commands/rule/ruleCreation.ts';
import type { SubmitTransfer } from '../../domain/request/submitter.ts';
import { hopIdOf } from '../../domain/request/transferHops.ts';
import { as, commandSpec, SPEC_NOW } from '../support/commandSpec.ts';
import type { StreamedEvent } from '../support/projectionHarness.ts';
import { aDataset, aRuleRequest, aWorld, SCOPE } from '../support/rules.ts';

/**
 * The submitter's step for a multihop path over a real event store: the intermediate replica,
 * the hops and the SUBMITTING marks in one atomic step, or nothing while the intermediate RSE's
 * replica is another transfer's; and the finisher ending a hop and its request in one page.
 */

const idOf = async (context: CommandContext, rse: string): Promise<string> => {
  const state = await loadRse(context, rse);
  if (state.status !== 'Active') throw new Error(`no ${rse}`);
  return state.id;
};

describe('Commands: a multihop path’s submission and end (Rucio’s transfer_hops)', () => {
  const spec = commandSpec();
  let initial = '';
  let streams = new Map<string, string>();
  let path: SubmitTransfer;
  const file = { scope: SCOPE, name: 'f1', bytes: 100, md5: null, adler32: '0cc737eb' };

  /** A rule to SITE_B on f1 of SITE_A, and the path SITE_A → SITE_H → SITE_B the submitter would plan for it. */
  const world =
    (extra: (context: CommandContext) => Promise<void> = async () => undefined) =>
    async (context: CommandContext, settle: () => Promise<void>) => {
      await aWorld(context, { SITE_A: {}, SITE_H: {}, SITE_B: {} });
      await aDataset(context, 'ds', ['f1'], 'SITE_A');
      await settle();
      await addRules(context, aRuleRequest('ds', 'SITE_B'), as('root'));
      const pending = (await loadFileReplicas(context, SCOPE, 'f1')).replicas.get(
        await idOf(context, 'SITE_B'),
      )!.pendingRequest!;
      initial = pending.id;
      streams = new Map([[initial, pending.stream]]);
      const [a, h, b] = [await idOf(context, 'SITE_A'), await idOf(context, 'SITE_H'), await idOf(context, 'SITE_B')];
      path = {
        type: 'SubmitTransfer',
        data: {
          requestId: initial,
          sources: [{ rseId: h, rse: 'SITE_H', ranking: 0, pfn: 'root://h/f1' }],
          destUrl: 'root://b/f1',
          transfertool: 'mock',
          path: {
            rses: ['SITE_A', 'SITE_H', 'SITE_B'],
            hops: [
              {
                id: hopIdOf(initial, 0),
                destRseId: h,
                destRse: 'SITE_H',
                source: { rseId: a, rse: 'SITE_A', ranking: 0, pfn: 'root://a/f1' },
                destUrl: 'root://h/f1',
                transfertool: 'mock',
                tombstoneDelay: 7200,
              },
            ],
            submitNow: 1,
          },
        },
      };
      void b;
      await extra(context);
      await settle();
    };

  it('makes the intermediate replica, queues the hop and marks it SUBMITTING, in one step', () =>
    spec
      .given(world())
      .when(async (context) => {
        const step = await markRequestsSubmitting(context, [path], streams, as('root'), new Map([[initial, file]]));
        expect(step.submitting.map((request) => request.record.id)).to.deep.equal([hopIdOf(initial, 0)]);
      })
      .thenAppended((events: readonly StreamedEvent[]) => {
        expect(events.map((event) => [event.type, event.stream.split('-')[0]])).to.deep.equal([
          ['ReplicaAdded', 'did'],
          ['RequestHopsQueued', 'requests'],
          ['RequestSubmitting', 'requests'],
        ]);
        const replica = events[0]!.data as Readonly<Record<string, unknown>>;
        expect(replica).to.include({ rse: 'SITE_H', state: 'COPYING' });
        expect(replica.request).to.deep.equal({ id: hopIdOf(initial, 0), stream: streams.get(initial) });
        // The multihop tombstone: two hours after the step.
        expect(replica.tombstone).to.equal(new Date(SPEC_NOW.getTime() + 7200 * 1000).toISOString());
      }));

  it('leaves the path for later while another transfer brings the intermediate RSE’s replica', () =>
    spec
      .given(world((context) => addRules(context, aRuleRequest('ds', 'SITE_H'), as('root')).then(() => undefined)))
      .when(async (context) => {
        const step = await markRequestsSubmitting(context, [path], streams, as('root'), new Map([[initial, file]]));
        expect(step.submitting).to.deep.equal([]);
      })
      .thenNothingHappened());

  it('ends a hop and its request that finished in the same page, each in a step of its own', () =>
    spec
      .given(
        world(async (context) => {
          const hop = hopIdOf(initial, 0);
          await markRequestsSubmitting(context, [path], streams, as('root'), new Map([[initial, file]]));
          const all = new Map([...streams, [hop, streams.get(initial)!]]);
          await recordSubmissions(
            context,
            [{ requestId: hop, externalId: 'job-1', externalHost: 'mock' }],
            all,
            as('root'),
          );
          await recordTransferReports(
            context,
            [
              {
                type: 'RecordTransferReport',
                data: {
                  requestId: hop,
                  externalId: 'job-1',
                  outcome: 'FAILED',
                  reason: 'SOURCE [2] No such file',
                  source: null,
                  startedAt: null,
                  finishedAt: null,
                },
              },
            ],
            all,
            as('root'),
          );
          streams = all;
        }),
      )
      .when((context) =>
        finishRequests(
          context,
          [
            { type: 'GiveUpTransfer', data: { requestId: hopIdOf(initial, 0), error: 'TRANSFER_FAILED:No such file' } },
            { type: 'RetryTransfer', data: { requestId: initial, lowerRankings: true } },
          ],
          streams,
          as('root'),
        ),
      )
      .thenAppended((events: readonly StreamedEvent[]) => {
        expect(events.map((event) => [event.type, event.stream.split('-')[0]])).to.deep.equal([
          ['ReplicaStateChanged', 'did'],
          ['RequestArchived', 'requests'],
          ['ReplicaTransferRequeued', 'did'],
          ['RequestArchived', 'requests'],
          ['RequestQueued', 'requests'],
        ]);
      }));
});
