import type { DidRef } from '../did/did.ts';
import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';
import type { RuleAdded, RuleApproved, RuleState, RuleStateChanged } from './rule.ts';

/**
 * Rucio's judge daemons as workflows: which rules to inject, re-evaluate, repair and clean, given
 * what set them off and the facts read for them. What each of those does to a rule is decided by
 * the rule and file deciders, through the commands the worker issues for each output.
 */

export type InjectRule = WorkflowOutput<'InjectRule', { ruleId: string }>;

/** The injector reacts to rules added in INJECT and to approved rules (which go to INJECT). */
export type InjectorInput =
  | Readonly<{ type: 'RuleAdded'; ruleId: string; state: RuleState }>
  | Readonly<{ type: 'RuleApproved'; ruleId: string }>;

/** What the injector reads of the events it reacts to. */
export const injectorInputOf = (event: RuleAdded | RuleApproved): InjectorInput =>
  event.type === 'RuleAdded'
    ? { type: 'RuleAdded', ruleId: event.data.rule.id, state: event.data.state }
    : { type: 'RuleApproved', ruleId: event.data.ruleId };

/**
 * Whether the injector has a rule to inject: one added in INJECT (asynchronous, delayed, or too
 * large to place at once), or one approved. A rule added in another state has its locks already.
 */
export const awaitsInjection = (input: InjectorInput): boolean =>
  input.type === 'RuleApproved' || input.state === 'INJECT';

export const injector: Workflow<InjectorInput, Readonly<Record<string, never>>, InjectRule> = {
  name: 'judge-injector',
  decide: (input) => (awaitsInjection(input) ? [{ type: 'InjectRule', data: { ruleId: input.ruleId } }] : []),
};

export type EvaluateAttach = WorkflowOutput<'EvaluateAttach', DidRef & { children: readonly DidRef[] }>;
export type EvaluateDetach = WorkflowOutput<'EvaluateDetach', DidRef & { children: readonly DidRef[] }>;
export type ReconcileRuleLocks = WorkflowOutput<'ReconcileRuleLocks', { ruleId: string }>;

export type EvaluatorInput =
  | Readonly<{
      type: 'DidsAttached' | 'DidsDetached';
      scope: string;
      name: string;
      children: readonly DidRef[];
    }>
  /** A rule whose locks were just placed on its DID's content as the command read it. */
  | Readonly<{ type: 'RulePlaced'; ruleId: string }>;

/** The rules on the collection and above it; the evaluator has nothing to do without any. */
export type EvaluatorFacts = Readonly<{ coveringRules: number }>;

/**
 * Whether an event says a rule's locks were placed on its content as read then: a rule added with
 * its locks (not one waiting for the injector or for approval), or the end of an injection. An
 * attach or detach decided between that read and the rule's append is evaluated for the rules
 * that attach could see, and this one was not among them; the evaluator looks again once the read
 * models show the rule (issue 34).
 */
export const rulePlacedBy = (event: RuleAdded | RuleStateChanged): string | undefined => {
  if (event.type === 'RuleAdded') return PLACED_AT_CREATION.has(event.data.state) ? event.data.rule.id : undefined;
  return event.data.previousState === 'INJECT' && event.data.cause.kind === 'injection' ? event.data.ruleId : undefined;
};

const PLACED_AT_CREATION: ReadonlySet<RuleState> = new Set(['OK', 'REPLICATING', 'STUCK']);

export const evaluator: Workflow<EvaluatorInput, EvaluatorFacts, EvaluateAttach | EvaluateDetach | ReconcileRuleLocks> =
  {
    name: 'judge-evaluator',
    decide: (input, facts) => {
      if (input.type === 'RulePlaced') return [{ type: 'ReconcileRuleLocks', data: { ruleId: input.ruleId } }];
      if (facts.coveringRules === 0) return [];
      const data = { scope: input.scope, name: input.name, children: input.children };
      return [input.type === 'DidsAttached' ? { type: 'EvaluateAttach', data } : { type: 'EvaluateDetach', data }];
    },
  };

export type RepairRule = WorkflowOutput<'RepairRule', { ruleId: string }>;

/** STUCK rules as the read models show them, with when each last changed. */
export type RepairerFacts = Readonly<{ stuck: readonly Readonly<{ ruleId: string; updatedAt: string }>[] }>;

/**
 * The repairer takes the STUCK rules left alone for `deltaSeconds` (`judge-repairer.delta`, Rucio:
 * 1800 s): those last updated before this moment (as Rucio's `get_stuck_rules`).
 */
export const repairableBefore = (now: string, deltaSeconds: number): string =>
  new Date(Date.parse(now) - deltaSeconds * 1000).toISOString();

/** The repairer takes STUCK rules left alone long enough (`repairableBefore`), least recently updated first. */
export const repairer: Workflow<Readonly<{ now: string; deltaSeconds: number }>, RepairerFacts, RepairRule> = {
  name: 'judge-repairer',
  decide: ({ now, deltaSeconds }, { stuck }) => {
    const before = Date.parse(repairableBefore(now, deltaSeconds));
    return [...stuck]
      .filter((rule) => Date.parse(rule.updatedAt) < before)
      .sort((a, b) => (a.updatedAt < b.updatedAt ? -1 : 1))
      .map((rule) => ({ type: 'RepairRule', data: { ruleId: rule.ruleId } }));
  },
};

export type DeleteExpiredRule = WorkflowOutput<'DeleteExpiredRule', { ruleId: string }>;
export type ReleaseParentRule = WorkflowOutput<'ReleaseParentRule', { ruleId: string }>;

export type CleanerFacts = Readonly<{
  /** Rules past their expiry. */
  expired: readonly Readonly<{ ruleId: string; expiresAt: string; locked: boolean; childRuleId: string | null }>[];
  /** Rules with a child, with the child's state (absent: the child is gone). */
  parents: readonly Readonly<{ ruleId: string; childState: RuleState | null }>[];
}>;

/**
 * The cleaner deletes expired rules that are neither locked nor waiting for a child, soonest
 * expired first; a parent whose child is OK (or gone) is released from the link, so that it
 * expires in its turn (Rucio's `release_parent_rule`).
 */
export const cleaner: Workflow<
  Readonly<{ now: string }>,
  CleanerFacts,
  DeleteExpiredRule | ReleaseParentRule | Skipped
> = {
  name: 'judge-cleaner',
  decide: ({ now }, { expired, parents }) => [
    ...parents
      .filter((parent) => parent.childState === 'OK' || parent.childState === null)
      .map((parent): ReleaseParentRule => ({ type: 'ReleaseParentRule', data: { ruleId: parent.ruleId } })),
    ...[...expired]
      .filter((rule) => rule.expiresAt < now)
      .sort((a, b) => (a.expiresAt < b.expiresAt ? -1 : 1))
      .map((rule): DeleteExpiredRule | Skipped => {
        if (rule.locked) return { type: 'Skipped', data: { what: rule.ruleId, reason: 'the rule is locked' } };
        if (rule.childRuleId !== null)
          return {
            type: 'Skipped',
            data: { what: rule.ruleId, reason: `its child rule ${rule.childRuleId} is not OK yet` },
          };
        return { type: 'DeleteExpiredRule', data: { ruleId: rule.ruleId } };
      }),
  ],
};
