import { expect } from 'chai';
import { setDidStatus } from '../../commands/did/didLifecycleCommands.ts';
import { addRules } from '../../commands/rule/ruleCreationCommands.ts';
import { changeReplicaStates, transferFailed, transferSucceeded } from '../../commands/rule/ruleTransfers.ts';
import { updateRule } from '../../commands/rule/ruleUpdates.ts';
import type { CommandContext } from '../../commands/commandContext.ts';
import { ReplicaNotFound } from '../../domain/shared/errors.ts';
import { as, commandSpec } from '../support/commandSpec.ts';
import type { StreamedEvent } from '../support/projectionHarness.ts';
import { aDataset, aRuleRequest, aWorld, SCOPE } from '../support/rules.ts';

const ofType = (events: readonly StreamedEvent[], type: string) =>
  events.filter((event) => event.type === type).map((event) => event.data as Record<string, unknown>);
const messagesOf = (events: readonly StreamedEvent[]) =>
  ofType(events, 'RuleNotified').flatMap((data) =>
    (data.messages as { eventType: string; payload: Record<string, unknown> }[]).map((message) => [
      message.eventType,
      message.payload,
    ]),
  );

/**
 * What the conveyor's finisher will call when a transfer ends (Rucio's update_replicas_states with
 * AVAILABLE or UNAVAILABLE): the replica's state, every lock on it, and the rules holding them.
 */
describe('Commands: a copy arrives or fails for good (rules 17 and 18)', () => {
  const spec = commandSpec();
  let ruleId = '';

  /** A dataset of `files` (replicas on SITE_A) under a rule to SITE_B, replicating; `close` closes the dataset first. */
  const replicating =
    (files: readonly string[], extra: Parameters<typeof aRuleRequest>[2] = {}, close = false) =>
    async (context: CommandContext, settle: () => Promise<void>) => {
      await aWorld(context, { SITE_A: {}, SITE_B: {} });
      await aDataset(context, 'ds', files, 'SITE_A');
      if (close) await setDidStatus(context, { scope: SCOPE, name: 'ds', open: false }, as('root'));
      await settle();
      [ruleId] = (await addRules(context, aRuleRequest('ds', 'SITE_B', extra), as('root'))).ruleIds as [string];
      await settle();
    };
  const arrives = (name: string) => (context: CommandContext) =>
    transferSucceeded(context, { scope: SCOPE, name, rse: 'SITE_B' }, as('root'));

  it('makes the replica AVAILABLE and its lock OK, keeping the rule REPLICATING while other locks replicate', () =>
    spec
      .given(replicating(['f1', 'f2']))
      .when(arrives('f1'))
      .thenAppended((events) => {
        expect(
          ofType(events, 'ReplicaStateChanged').map((data) => [data.name, data.previousState, data.state]),
        ).to.deep.equal([['f1', 'COPYING', 'AVAILABLE']]);
        // The replica's state and its lock's in one event.
        expect(ofType(events, 'ReplicaLocksChanged')).to.deep.equal([]);
        expect(ofType(events, 'ReplicaStateChanged').map((data) => data.locks)).to.deep.equal([{ [ruleId]: 'OK' }]);
        expect(ofType(events, 'RuleLocksChanged').map((data) => data.counters)).to.deep.equal([
          { ok: 1, replicating: 1, stuck: 0 },
        ]);
        expect(ofType(events, 'RuleStateChanged')).to.have.length(0);
      }));

  it('makes the rule OK when its last REPLICATING lock turns OK (rule 17)', () =>
    spec
      .given(async (context, settle) => {
        await replicating(['f1', 'f2'])(context, settle);
        await arrives('f1')(context);
      })
      .when(arrives('f2'))
      .thenAppended((events) => {
        expect(
          ofType(events, 'RuleStateChanged').map((data) => [data.previousState, data.state, data.counters]),
        ).to.deep.equal([['REPLICATING', 'OK', { ok: 2, replicating: 0, stuck: 0 }]]);
        expect(ofType(events, 'RuleNotified')).to.have.length(0);
      }));

  it('notifies RULE_OK and DATASETLOCK_OK when the rule has notify=Y (rule 17)', () =>
    spec
      .given(replicating(['f1'], { notification: 'YES' }))
      .when(arrives('f1'))
      .thenAppended((events) => {
        expect(ofType(events, 'RuleStateChanged').map((data) => data.state)).to.deep.equal(['OK']);
        const messages = messagesOf(events);
        expect(messages.map(([type]) => type)).to.deep.equal(['RULE_OK', 'DATASETLOCK_OK']);
        expect(messages[0]![1]).to.deep.equal({ scope: SCOPE, name: 'ds', rule_id: ruleId });
        expect(messages[1]![1]).to.include({ scope: SCOPE, name: 'ds', rse: 'SITE_B', rule_id: ruleId });
      }));

  it('reports RULE_PROGRESS when a notify=P rule on a closed dataset passes a tenth, still REPLICATING (rule 17)', () =>
    spec
      .given(replicating(['f1', 'f2'], { notification: 'PROGRESS' }, true))
      .when(arrives('f1'))
      .thenAppended((events) => {
        expect(ofType(events, 'RuleStateChanged')).to.have.length(0);
        expect(messagesOf(events)).to.deep.equal([
          ['RULE_PROGRESS', { scope: SCOPE, name: 'ds', rule_id: ruleId, progress: 50 }],
        ]);
      }));

  it('ends a notify=P rule on a closed dataset with RULE_OK and RULE_PROGRESS at 100 (rule 17)', () =>
    spec
      .given(async (context, settle) => {
        await replicating(['f1', 'f2'], { notification: 'PROGRESS' }, true)(context, settle);
        await arrives('f1')(context);
      })
      .when(arrives('f2'))
      .thenAppended((events) =>
        expect(messagesOf(events)).to.deep.equal([
          ['RULE_OK', { scope: SCOPE, name: 'ds', rule_id: ruleId }],
          ['RULE_PROGRESS', { scope: SCOPE, name: 'ds', rule_id: ruleId, progress: 100 }],
        ]),
      ));

  it('says nothing for a notify=P rule while its dataset is open (rule 17)', () =>
    spec
      .given(replicating(['f1', 'f2'], { notification: 'PROGRESS' }))
      .when(arrives('f1'))
      .thenAppended((events) => expect(ofType(events, 'RuleNotified')).to.have.length(0)));

  it('keeps a notify=C rule silent when it turns OK on an open dataset (rule 17)', () =>
    spec
      .given(replicating(['f1'], { notification: 'CLOSE' }))
      .when(arrives('f1'))
      .thenAppended((events) => {
        expect(ofType(events, 'RuleStateChanged').map((data) => data.state)).to.deep.equal(['OK']);
        expect(ofType(events, 'RuleNotified')).to.have.length(0);
      }));

  it('turns the locks of every rule on the replica OK', () => {
    let second = '';
    return spec
      .given(async (context, settle) => {
        await replicating(['f1'])(context, settle);
        [second] = (await addRules(context, aRuleRequest('ds', 'SITE_B|SITE_A', { copies: 2 }), as('root')))
          .ruleIds as [string];
        await settle();
      })
      .when(arrives('f1'))
      .thenAppended((events) => {
        expect(ofType(events, 'ReplicaStateChanged').map((data) => data.locks)).to.deep.equal([
          { [ruleId]: 'OK', [second]: 'OK' },
        ]);
        expect(
          ofType(events, 'RuleStateChanged')
            .map((data) => [data.ruleId, data.state])
            .sort(),
        ).to.deep.equal(
          [
            [ruleId, 'OK'],
            [second, 'OK'],
          ].sort(),
        );
      });
  });

  it('leaves a SUSPENDED rule SUSPENDED when its last lock turns OK', () =>
    spec
      .given(async (context, settle) => {
        await replicating(['f1'])(context, settle);
        await updateRule(context, { ruleId, update: { state: 'SUSPENDED' } }, as('root'));
      })
      .when(arrives('f1'))
      .thenAppended((events) => {
        expect(ofType(events, 'RuleLocksChanged').map((data) => data.counters)).to.deep.equal([
          { ok: 1, replicating: 0, stuck: 0 },
        ]);
        expect(ofType(events, 'RuleStateChanged')).to.have.length(0);
      }));

  it('makes a failed copy UNAVAILABLE, its locks STUCK and the rule STUCK with the error (rule 18)', () =>
    spec
      .given(replicating(['f1', 'f2']))
      .when((context) =>
        transferFailed(
          context,
          { scope: SCOPE, name: 'f1', rse: 'SITE_B', error: 'TRANSFER [5] checksum mismatch' },
          as('root'),
        ),
      )
      .thenAppended((events) => {
        expect(ofType(events, 'ReplicaStateChanged').map((data) => data.state)).to.deep.equal(['UNAVAILABLE']);
        expect(ofType(events, 'ReplicaStateChanged').map((data) => data.locks)).to.deep.equal([{ [ruleId]: 'STUCK' }]);
        expect(ofType(events, 'RuleStateChanged').map((data) => [data.state, data.error, data.counters])).to.deep.equal(
          [['STUCK', 'TRANSFER [5] checksum mismatch', { ok: 0, replicating: 1, stuck: 1 }]],
        );
      }));

  it('keeps a STUCK rule STUCK when its stuck lock turns OK, until the repairer runs (Rucio does so)', () =>
    spec
      .given(async (context, settle) => {
        await replicating(['f1'])(context, settle);
        await transferFailed(context, { scope: SCOPE, name: 'f1', rse: 'SITE_B', error: 'lost' }, as('root'));
      })
      .when(arrives('f1'))
      .thenAppended((events) => {
        expect(ofType(events, 'RuleLocksChanged').map((data) => data.counters)).to.deep.equal([
          { ok: 1, replicating: 0, stuck: 0 },
        ]);
        expect(ofType(events, 'RuleStateChanged')).to.have.length(0);
      }));

  it('changes several replicas in one step, counting each rule once (rule 17)', () =>
    spec
      .given(replicating(['f1', 'f2']))
      .when((context) =>
        changeReplicaStates(
          context,
          {
            rse: 'SITE_B',
            files: [
              { scope: SCOPE, name: 'f1', state: 'AVAILABLE' },
              { scope: SCOPE, name: 'f2', state: 'AVAILABLE' },
            ],
          },
          as('root'),
        ),
      )
      .thenAppended((events) => {
        expect(ofType(events, 'RuleLocksChanged').map((data) => data.counters)).to.deep.equal([
          { ok: 2, replicating: 0, stuck: 0 },
        ]);
        expect(ofType(events, 'RuleStateChanged').map((data) => data.state)).to.deep.equal(['OK']);
      }));

  it('changes nothing but the replica for other states', () =>
    spec
      .given(replicating(['f1']))
      .when((context) =>
        changeReplicaStates(
          context,
          { rse: 'SITE_A', files: [{ scope: SCOPE, name: 'f1', state: 'TEMPORARY_UNAVAILABLE' }] },
          as('root'),
        ),
      )
      .thenAppended((events) => expect(events.map((event) => event.type)).to.deep.equal(['ReplicaStateChanged'])));

  it('refuses a file without a replica on the RSE', () =>
    spec
      .given(replicating(['f1']))
      .when((context) => transferSucceeded(context, { scope: SCOPE, name: 'nope', rse: 'SITE_B' }, as('root')))
      .thenRefused(ReplicaNotFound));
});
