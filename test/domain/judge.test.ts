import { expect } from 'chai';
import {
  cleaner,
  evaluator,
  injector,
  injectorInputOf,
  repairableBefore,
  repairer,
  rulePlacedBy,
} from '../../domain/rule/judge.ts';
import type { RuleCause, RuleRecord, RuleState } from '../../domain/rule/rule.ts';
import { workflowSpec } from '../support/workflowSpec.ts';

const now = '2026-11-22T10:00:00.000Z';

describe('Workflow: the judge-injector (rule 16)', () => {
  const given = workflowSpec(injector);
  it('injects a rule added in INJECT', () =>
    given({})
      .when({ type: 'RuleAdded', ruleId: 'r1', state: 'INJECT' })
      .then([{ type: 'InjectRule', data: { ruleId: 'r1' } }]));
  it('injects an approved rule', () =>
    given({})
      .when({ type: 'RuleApproved', ruleId: 'r1' })
      .then([{ type: 'InjectRule', data: { ruleId: 'r1' } }]));
  it('leaves a rule created with its locks alone', () =>
    given({}).when({ type: 'RuleAdded', ruleId: 'r1', state: 'REPLICATING' }).thenNothing());

  describe('reading the events it reacts to', () => {
    it('takes the rule and its state from RuleAdded', () =>
      expect(
        injectorInputOf({
          type: 'RuleAdded',
          data: {
            rule: { id: 'r1' } as RuleRecord,
            state: 'INJECT',
            error: null,
            targetRses: [],
            autoLocked: false,
          },
        }),
      ).to.deep.equal({ type: 'RuleAdded', ruleId: 'r1', state: 'INJECT' }));
    it('takes the rule from RuleApproved', () =>
      expect(
        injectorInputOf({
          type: 'RuleApproved',
          data: { ruleId: 'r1', scope: 's', name: 'ds', account: 'jdoe', approver: 'root', at: now },
        }),
      ).to.deep.equal({ type: 'RuleApproved', ruleId: 'r1' }));
  });
});

describe('Workflow: the judge-evaluator (rule 19)', () => {
  const given = workflowSpec(evaluator);
  const children = [{ scope: 's', name: 'f1' }];
  it('re-evaluates the rules over an attach', () =>
    given({ coveringRules: 2 })
      .when({ type: 'DidsAttached', scope: 's', name: 'ds', children })
      .then([{ type: 'EvaluateAttach', data: { scope: 's', name: 'ds', children } }]));
  it('re-evaluates the rules over a detach', () =>
    given({ coveringRules: 1 })
      .when({ type: 'DidsDetached', scope: 's', name: 'ds', children })
      .then([{ type: 'EvaluateDetach', data: { scope: 's', name: 'ds', children } }]));
  it('has nothing to do where no rule covers the collection', () =>
    given({ coveringRules: 0 }).when({ type: 'DidsAttached', scope: 's', name: 'ds', children }).thenNothing());
  it('makes a rule just placed match its DID once more: an attach decided meanwhile could not see it (issue 34)', () =>
    given({ coveringRules: 0 })
      .when({ type: 'RulePlaced', ruleId: 'r1' })
      .then([{ type: 'ReconcileRuleLocks', data: { ruleId: 'r1' } }]));

  describe('which events place a rule', () => {
    const counters = { ok: 0, replicating: 1, stuck: 0 };
    const ref = { ruleId: 'r1', scope: 's', name: 'ds', account: 'jdoe' };
    const added = (state: RuleState) =>
      rulePlacedBy({
        type: 'RuleAdded',
        data: { rule: { id: 'r1' } as RuleRecord, state, error: null, targetRses: [], autoLocked: false },
      });
    const changed = (previousState: RuleState, kind: RuleCause['kind']) =>
      rulePlacedBy({
        type: 'RuleStateChanged',
        data: {
          ...ref,
          previousState,
          state: 'REPLICATING',
          error: null,
          counters,
          stuckAt: null,
          cause: { kind },
          at: now,
        },
      });
    it('a rule added with its locks', () =>
      expect([added('OK'), added('REPLICATING'), added('STUCK')]).to.deep.equal(['r1', 'r1', 'r1']));
    it('not a rule left to the injector or waiting for approval', () =>
      expect([added('INJECT'), added('WAITING_APPROVAL')]).to.deep.equal([undefined, undefined]));
    it('the end of an injection, and no other change of state', () =>
      expect([
        changed('INJECT', 'injection'),
        changed('OK', 'attach'),
        changed('REPLICATING', 'transfer'),
      ]).to.deep.equal(['r1', undefined, undefined]));
  });
});

describe('Workflow: the judge-repairer (rule 18)', () => {
  const given = workflowSpec(repairer);
  it('repairs the STUCK rules left alone long enough, least recently updated first', () =>
    given({
      stuck: [
        { ruleId: 'recent', updatedAt: '2026-11-22T09:59:00.000Z' },
        { ruleId: 'late', updatedAt: '2026-11-22T09:00:00.000Z' },
        { ruleId: 'early', updatedAt: '2026-11-22T08:00:00.000Z' },
      ],
    })
      .when({ now, deltaSeconds: 1800 })
      .then([
        { type: 'RepairRule', data: { ruleId: 'early' } },
        { type: 'RepairRule', data: { ruleId: 'late' } },
      ]));
});

describe('Workflow: the judge-repairer at the end of its delta (rule 18)', () => {
  const given = workflowSpec(repairer);
  it('takes the rules last updated before now minus the delta', () =>
    expect(repairableBefore(now, 1800)).to.equal('2026-11-22T09:30:00.000Z'));
  it('leaves a rule updated exactly at that moment for the next cycle, as Rucio does', () =>
    given({ stuck: [{ ruleId: 'r1', updatedAt: '2026-11-22T09:30:00.000Z' }] })
      .when({ now, deltaSeconds: 1800 })
      .thenNothing());
  it('repairs a rule updated a millisecond before it', () =>
    given({ stuck: [{ ruleId: 'r1', updatedAt: '2026-11-22T09:29:59.999Z' }] })
      .when({ now, deltaSeconds: 1800 })
      .then([{ type: 'RepairRule', data: { ruleId: 'r1' } }]));
});

describe('Workflow: the judge-cleaner (rule 20)', () => {
  const given = workflowSpec(cleaner);
  const expired = (ruleId: string, extra: { locked?: boolean; childRuleId?: string | null } = {}) => ({
    ruleId,
    expiresAt: '2026-11-22T09:00:00.000Z',
    locked: false,
    childRuleId: null,
    ...extra,
  });
  it('deletes an expired rule', () =>
    given({ expired: [expired('r1')], parents: [] })
      .when({ now })
      .then([{ type: 'DeleteExpiredRule', data: { ruleId: 'r1' } }]));
  it('keeps a locked rule and a rule waiting for its child, saying why', () =>
    given({ expired: [expired('locked', { locked: true }), expired('parent', { childRuleId: 'child' })], parents: [] })
      .when({ now })
      .then([
        { type: 'Skipped', data: { what: 'locked', reason: 'the rule is locked' } },
        { type: 'Skipped', data: { what: 'parent', reason: 'its child rule child is not OK yet' } },
      ]));
  it('releases a parent whose child is OK, and one whose child is gone', () =>
    given({
      expired: [],
      parents: [
        { ruleId: 'p1', childState: 'OK' },
        { ruleId: 'p2', childState: null },
        { ruleId: 'p3', childState: 'REPLICATING' },
      ],
    })
      .when({ now })
      .then([
        { type: 'ReleaseParentRule', data: { ruleId: 'p1' } },
        { type: 'ReleaseParentRule', data: { ruleId: 'p2' } },
      ]));
});
