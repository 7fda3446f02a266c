import { expect } from 'chai';
import { DEFAULT_RSE_PROPERTIES } from '../../domain/rse/rse.ts';
import type { RseFacts } from '../../domain/rse/rseExpression.ts';
import { RULE_REQUEST_DEFAULTS, type RuleRequest } from '../../domain/rule/ruleCreation.ts';
import type { SubscriptionRecord, SubscriptionState } from '../../domain/subscription/subscription.ts';
import type { DidFacts } from '../../domain/subscription/subscriptionFilter.ts';
import { indexedSubscription, type IndexedSubscription } from '../../domain/subscription/subscriptionIndex.ts';
import { subscriptionRuleId } from '../../domain/subscription/subscriptionRules.ts';
import { retroactivePass, subscriptionCycle, transmogrifier } from '../../domain/subscription/transmogrifier.ts';
import { chooseSplitRses } from '../../domain/subscription/splitRule.ts';
import { workflowSpec } from '../support/workflowSpec.ts';

const now = '2026-11-22T10:00:00.000Z';
const rse = (name: string, writable = true): RseFacts => ({
  id: `id-${name}`,
  rse: name,
  properties: { ...DEFAULT_RSE_PROPERTIES, availability_write: writable },
  attributes: { [name]: true },
});
const rses = [rse('CERN_DISK'), rse('BNL_DISK'), rse('CLOSED_DISK', false)];
const did = (name = 'ds1', extra: Partial<DidFacts> = {}, columns: DidFacts['columns'] = {}): DidFacts => ({
  scope: 'mc16_13TeV',
  name,
  didType: 'DATASET',
  account: 'prod',
  ...extra,
  columns: { hidden: false, is_new: true, datatype: 'AOD', ...columns },
});
const subscription = (
  id: string,
  extra: Partial<SubscriptionRecord> = {},
  state: SubscriptionState = 'ACTIVE',
): IndexedSubscription =>
  indexedSubscription(
    {
      id,
      name: `${id}-name`,
      account: 'root',
      filter: { scope: ['mc16_.*'] },
      replicationRules: [{ copies: 1, rse_expression: 'CERN_DISK' }],
      comments: 'from the subscription',
      lifetime: null,
      retroactive: false,
      dryRun: false,
      priority: 3,
      createdAt: '2026-01-01T00:00:00.000Z',
      ...extra,
    },
    state,
  )!;
const ruleRequest = (subscriptionId: string, extra: Partial<RuleRequest> = {}): RuleRequest => ({
  ...RULE_REQUEST_DEFAULTS,
  dids: [{ scope: 'mc16_13TeV', name: 'ds1' }],
  account: 'root',
  rseExpression: 'CERN_DISK',
  subscriptionId,
  activity: 'default',
  comment: 'from the subscription',
  ...extra,
});
const didRef = { scope: 'mc16_13TeV', name: 'ds1', didType: 'DATASET' as const };
const facts = (subscriptions: IndexedSubscription[]) => ({ subscriptions, rses, defaultActivity: 'default' });
const given = workflowSpec(transmogrifier);

describe('Workflow: the transmogrifier (§7)', () => {
  it('gives a new dataset the rules of each matching subscription, by priority, with the subscription on each rule, and clears its flag', () =>
    given(
      facts([
        subscription('first', { priority: 1 }),
        subscription('second', {
          replicationRules: [
            {
              copies: '2',
              rse_expression: 'CERN_DISK|BNL_DISK',
              lifetime: 3600,
              locked: 'True',
              activity: 'T0 Export',
              comments: 'own',
              account: 'prod',
            },
          ],
        }),
      ]),
    )
      .when({ did: did(), now })
      .then([
        {
          type: 'CreateSubscriptionRules' as const,
          data: {
            subscriptionId: 'first',
            subscriptionName: 'first-name',
            did: didRef,
            rules: [
              { index: 0, split: false, request: ruleRequest('first'), ruleId: subscriptionRuleId('first', didRef, 0) },
            ],
          },
        },
        {
          type: 'CreateSubscriptionRules' as const,
          data: {
            subscriptionId: 'second',
            subscriptionName: 'second-name',
            did: didRef,
            rules: [
              {
                index: 0,
                split: false,
                request: ruleRequest('second', {
                  copies: 2,
                  rseExpression: 'CERN_DISK|BNL_DISK',
                  lifetime: 3600,
                  locked: true,
                  activity: 'T0 Export',
                  comment: 'own',
                  account: 'prod',
                }),
                ruleId: subscriptionRuleId('second', didRef, 0),
              },
            ],
          },
        },
        { type: 'MarkDidProcessed' as const, data: { scope: 'mc16_13TeV', name: 'ds1' } },
      ]));

  it('gives nothing to a DID no subscription matches, and only clears its flag', () =>
    given(facts([subscription('other', { filter: { datatype: ['ESD'] } })]))
      .when({ did: did(), now })
      .then([{ type: 'MarkDidProcessed' as const, data: { scope: 'mc16_13TeV', name: 'ds1' } }]));

  it('never matches files', () =>
    given(facts([subscription('all', { filter: {} })]))
      .when({ did: did('f1', { didType: 'FILE' }), now })
      .thenNothing());

  it('skips a subscription past its lifetime, and one that is INACTIVE', () =>
    given(
      facts([
        subscription('expired', { lifetime: '2026-11-22T09:59:59.000Z' }),
        subscription('stopped', {}, 'INACTIVE'),
      ]),
    )
      .when({ did: did('ds1', {}, { is_new: null }), now })
      .thenNothing());

  it('skips, saying why, a subscription one of whose expressions selects no RSE (as Rucio drops it from the cycle)', () =>
    given(
      facts([
        subscription('broken', {
          replicationRules: [
            { copies: 1, rse_expression: 'CERN_DISK' },
            { copies: 1, rse_expression: 'tier=9' },
          ],
        }),
      ]),
    )
      .when({ did: did('ds1', {}, { is_new: false }), now })
      .then([
        {
          type: 'Skipped' as const,
          data: {
            what: 'root/broken-name on mc16_13TeV:ds1',
            reason: 'rule 2: InvalidRSEExpression: RSE Expression resulted in an empty set.',
          },
        },
      ]));

  it('counts the RSEs of the expression for copies "*", and leaves out a single RSE closed for writing', () => {
    const outputs = transmogrifier.decide(
      { did: did('ds1', {}, { is_new: false }), now },
      facts([
        subscription('wild', {
          replicationRules: [
            { copies: '*', rse_expression: 'CERN_DISK|BNL_DISK|CLOSED_DISK' },
            { copies: '*', rse_expression: 'CLOSED_DISK' },
          ],
        }),
      ]),
    );
    expect(outputs).to.have.length(1);
    const rules = (outputs[0]!.data as unknown as { rules: { request: { copies: number; rseExpression: string } }[] })
      .rules;
    expect(rules.map((rule) => [rule.request.rseExpression, rule.request.copies])).to.deep.equal([
      ['CERN_DISK|BNL_DISK|CLOSED_DISK', 3],
    ]);
  });

  it('records instead of making the rules of a dry-run subscription', () =>
    given(facts([subscription('dry', { dryRun: true })]))
      .when({ did: did('ds1', {}, { is_new: false }), now })
      .then([
        {
          type: 'RecordDryRun' as const,
          data: {
            subscriptionId: 'dry',
            subscriptionName: 'dry-name',
            account: 'root',
            did: didRef,
            rules: [
              {
                ruleId: subscriptionRuleId('dry', didRef, 0),
                account: 'root',
                copies: 1,
                rseExpression: 'CERN_DISK',
                grouping: 'DATASET',
                lifetime: null,
                activity: 'default',
                split: false,
              },
            ],
          },
        },
      ]));

  it('marks split rules, whose RSEs are chosen when they are made', () => {
    const [output] = transmogrifier.decide(
      { did: did('ds1', {}, { is_new: false }), now },
      facts([
        subscription('split', {
          filter: { split_rule: true },
          replicationRules: [{ copies: 2, rse_expression: 'CERN_DISK|BNL_DISK' }],
        }),
      ]),
    );
    expect((output!.data as unknown as { rules: { split: boolean }[] }).rules[0]!.split).to.equal(true);
  });

  it('derives rule ids from the subscription, the DID and the rule, the same every time', () => {
    expect(subscriptionRuleId('s', didRef, 0)).to.match(/^[0-9a-f]{32}$/);
    expect(subscriptionRuleId('s', didRef, 0)).to.equal(subscriptionRuleId('s', didRef, 0));
    expect(subscriptionRuleId('s', didRef, 0)).not.to.equal(subscriptionRuleId('s', didRef, 1));
    expect(subscriptionRuleId('s', didRef, 0, 'CERN_DISK')).not.to.equal(
      subscriptionRuleId('s', didRef, 0, 'BNL_DISK'),
    );
  });
});

describe('Workflow: the retroactive pass (§7, retroactive subscriptions)', () => {
  const givenPage = workflowSpec(retroactivePass);
  const retro = subscription('retro', { retroactive: true }, 'NEW');
  it('matches each existing DID of the page, then records how far it got', () =>
    givenPage({ rses, defaultActivity: 'default' })
      .when({ subscription: retro, dids: [did('ds1'), did('other', { scope: 'data18' })], last: false, now })
      .then([
        {
          type: 'CreateSubscriptionRules' as const,
          data: {
            subscriptionId: 'retro',
            subscriptionName: 'retro-name',
            did: didRef,
            rules: [
              { index: 0, split: false, request: ruleRequest('retro'), ruleId: subscriptionRuleId('retro', didRef, 0) },
            ],
          },
        },
        {
          type: 'RecordRetroactiveProgress' as const,
          data: { subscriptionId: 'retro', after: { scope: 'data18', didType: 'DATASET', name: 'other' }, dids: 2 },
        },
      ]));
  it('completes on the last page', () =>
    givenPage({ rses, defaultActivity: 'default' })
      .when({ subscription: retro, dids: [], last: true, now })
      .then([{ type: 'CompleteRetroactivePass' as const, data: { subscriptionId: 'retro' } }]));
});

describe('Workflow: the periodic check of subscriptions (§7: lifetime → INACTIVE)', () => {
  const givenCycle = workflowSpec(subscriptionCycle);
  it('expires subscriptions past their lifetime and continues pending retroactive passes', () =>
    givenCycle({
      subscriptions: [
        { id: 'over', state: 'ACTIVE', lifetime: '2026-11-22T09:00:00.000Z', retroactivePending: false },
        { id: 'running', state: 'UPDATED', lifetime: '2026-11-23T09:00:00.000Z', retroactivePending: false },
        { id: 'retro', state: 'NEW', lifetime: null, retroactivePending: true },
        { id: 'stopped', state: 'INACTIVE', lifetime: '2026-11-22T09:00:00.000Z', retroactivePending: true },
      ],
    })
      .when({ now })
      .then([
        { type: 'ExpireSubscription' as const, data: { subscriptionId: 'over' } },
        { type: 'ContinueRetroactivePass' as const, data: { subscriptionId: 'retro' } },
      ]));
});

describe('split_rule: choosing single RSEs', () => {
  const quota = { unlimited: true, localLimits: {}, globalLimits: [], usage: {}, space: {} };
  it('chooses as many RSEs as copies, open ones first', () => {
    const choice = chooseSplitRses(
      { rseExpression: 'CERN_DISK|BNL_DISK|CLOSED_DISK', copies: 2, weight: null, seed: 7 },
      { rses, quota, usedRses: [] },
    );
    expect(choice.kind).to.equal('chosen');
    expect([...(choice as unknown as { rses: string[] }).rses].sort()).to.deep.equal(['BNL_DISK', 'CERN_DISK']);
  });
  it('adds only what the RSEs used already lack, and nothing when they are enough', () => {
    expect(
      chooseSplitRses(
        { rseExpression: 'CERN_DISK|BNL_DISK', copies: 2, weight: null, seed: 1 },
        { rses, quota, usedRses: ['CERN_DISK'] },
      ),
    ).to.deep.equal({ kind: 'chosen', rses: ['BNL_DISK'] });
    expect(
      chooseSplitRses(
        { rseExpression: 'CERN_DISK|BNL_DISK', copies: 1, weight: null, seed: 1 },
        { rses, quota, usedRses: ['BNL_DISK'] },
      ),
    ).to.deep.equal({ kind: 'covered' });
  });
  it('falls back on RSEs closed for writing, and says when even that is not enough', () => {
    expect(
      chooseSplitRses(
        { rseExpression: 'CERN_DISK|CLOSED_DISK', copies: 2, weight: null, seed: 1 },
        { rses, quota, usedRses: [] },
      ).kind,
    ).to.equal('chosen');
    expect(
      chooseSplitRses({ rseExpression: 'CERN_DISK', copies: 2, weight: null, seed: 1 }, { rses, quota, usedRses: [] }),
    ).to.include({ kind: 'impossible' });
  });
});
