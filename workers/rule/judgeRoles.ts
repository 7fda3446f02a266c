import { deleteRuleNow } from '../../commands/rule/ruleDeletion.ts';
import { evaluateAttach, evaluateDetach, rulesCovering } from '../../commands/rule/ruleEvaluation.ts';
import { injectRule } from '../../commands/rule/ruleInjection.ts';
import { reconcileRuleLocks } from '../../commands/rule/ruleLockReconciliation.ts';
import { repairRule } from '../../commands/rule/ruleRepair.ts';
import { releaseParentRule } from '../../commands/rule/ruleUpdates.ts';
import { ALL_EVENT_TYPES } from '../../domain/areas.ts';
import { SETTINGS } from '../../domain/config/settings.ts';
import {
  awaitsInjection,
  cleaner,
  evaluator,
  injector,
  injectorInputOf,
  repairableBefore,
  repairer,
  rulePlacedBy,
  type EvaluatorInput,
  type InjectorInput,
} from '../../domain/rule/judge.ts';
import { RULE_EVENT_TYPES } from '../../domain/rule/rule.ts';
import { expiredRules, parentRules, rulesInState } from '../../projections/rule/ruleQueries.ts';
import { EVENT_JOB_RETRIES, type PlannedJob } from '../eventJobs.ts';
import { asRoot, carryOut, eventRole } from '../role.ts';
import { scheduledRole } from '../scheduledRole.ts';

/**
 * Rucio's judge as roles: the injector and the evaluator react to events (a rule added in INJECT
 * or approved; an attach or detach), the repairer and the cleaner run on a schedule. Each reads its
 * facts, lets its workflow (domain/rule/judge.ts) decide, and acts through the rule commands as
 * root, with the job as the cause of what it appends.
 */

type InjectorJob = InjectorInput & { position: string };

/**
 * The injector's job for a rule the reconciler finds in INJECT, its own job lost: named after the
 * rule and the position of its last change, so finding it twice enqueues it once, and a rule that
 * changed since gets a job again.
 */
export const injectionJobOf = (ruleId: string, position: number): PlannedJob => {
  const data: InjectorJob = { type: 'RuleApproved', ruleId, position: String(position) };
  return {
    queue: injector.name,
    name: 'reconcile',
    data,
    opts: { jobId: `reconcile-inject-${ruleId}-${position}`, ...EVENT_JOB_RETRIES },
  };
};

export const injectorRole = eventRole(RULE_EVENT_TYPES, {
  name: injector.name,
  handles: { RuleAdded: true, RuleApproved: true },
  concurrency: 2,
  jobOf: (event, { position }): InjectorJob | undefined => {
    const input = injectorInputOf(event);
    return awaitsInjection(input) ? { ...input, position: position.toString() } : undefined;
  },
  // A delayed injection waits in the queue until its time (Rucio moves the rule's creation there).
  delayOf: (event, _envelope, now) => {
    const injectAfter = event.type === 'RuleAdded' ? event.data.rule.injectAfter : null;
    return injectAfter ? Math.max(0, Date.parse(injectAfter) - now) : 0;
  },
  async process(job, trigger, context) {
    await context.readModelsAt(BigInt(job.position));
    return carryOut(
      injector.decide(job, {}),
      (output) => output.data.ruleId,
      async (output) => {
        const { outcome } = await injectRule(
          context.commands,
          output.data,
          asRoot(injector.name, trigger, output.data.ruleId),
        );
        return outcome === 'not waiting for injection' || outcome === 'delayed' || outcome === 'expiring soon'
          ? outcome
          : undefined;
      },
    );
  },
});

type EvaluatorJob = EvaluatorInput & { position: string };

/**
 * The evaluator reacts to attaches and detaches (the rules covering the collection follow them),
 * and to a rule's locks placed at its creation or at the end of its injection (the rule is made
 * to match what its DID holds once the read models show it: `reconcileRuleLocks`).
 */
export const evaluatorRole = eventRole(ALL_EVENT_TYPES, {
  name: evaluator.name,
  handles: { DidsAttached: true, DidsDetached: true, RuleAdded: true, RuleStateChanged: true },
  concurrency: 2,
  jobOf: (event, { position }): EvaluatorJob | undefined => {
    if (event.type === 'RuleAdded' || event.type === 'RuleStateChanged') {
      const ruleId = rulePlacedBy(event);
      return ruleId ? { type: 'RulePlaced', ruleId, position: position.toString() } : undefined;
    }
    return {
      type: event.type,
      scope: event.data.scope,
      name: event.data.name,
      children: event.data.children.map(({ scope, name }) => ({ scope, name })),
      position: position.toString(),
    };
  },
  async process(job, trigger, context) {
    // The graph facts (ancestors, parents) must show the attach or detach itself, or the rule.
    await context.readModelsAt(BigInt(job.position));
    const coveringRules = job.type === 'RulePlaced' ? 0 : (await rulesCovering(context.commands, job)).length;
    return carryOut(
      evaluator.decide(job, { coveringRules }),
      (output) =>
        output.type === 'ReconcileRuleLocks'
          ? `rule ${output.data.ruleId}`
          : `${output.type} ${output.data.scope}:${output.data.name}`,
      async (output) => {
        if (output.type === 'ReconcileRuleLocks') {
          const metadata = asRoot(evaluator.name, trigger, output.data.ruleId);
          const { stuck } = await reconcileRuleLocks(context.commands, output.data, metadata);
          return stuck ? `rule stuck: ${output.data.ruleId}` : undefined;
        }
        const metadata = asRoot(evaluator.name, trigger, `${output.data.scope}:${output.data.name}`);
        if (output.type === 'EvaluateAttach') {
          const { stuck } = await evaluateAttach(context.commands, output.data, metadata);
          return stuck.length > 0 ? `rules stuck: ${stuck.join(', ')}` : undefined;
        }
        await evaluateDetach(context.commands, output.data, metadata);
      },
    );
  },
});

export const repairerRole = scheduledRole({
  name: repairer.name,
  interval: SETTINGS.repairerInterval,
  read: async ({ context, now, setting }) => {
    const deltaSeconds = setting(SETTINGS.repairerDelta);
    const stuck = await rulesInState(
      context.readModels,
      'STUCK',
      repairableBefore(now, deltaSeconds),
      setting(SETTINGS.repairerMaxRules),
    );
    return { deltaSeconds, stuck: stuck.map((rule) => ({ ruleId: rule.id, updatedAt: rule.updated_at })) };
  },
  work: ({ deltaSeconds, stuck }, { context, now, asRoot }) =>
    carryOut(
      repairer.decide({ now, deltaSeconds }, { stuck }),
      (output) => output.data.ruleId,
      async (output) => {
        const { outcome } = await repairRule(context.commands, output.data, asRoot(output.data.ruleId));
        return outcome === 'not stuck' ? outcome : undefined;
      },
    ),
});

export const cleanerRole = scheduledRole({
  name: cleaner.name,
  interval: SETTINGS.cleanerInterval,
  read: async ({ context, now, setting }) => {
    const limit = setting(SETTINGS.cleanerMaxRules);
    const expired = (await expiredRules(context.readModels, now, limit)).map((rule) => ({
      ruleId: rule.id,
      expiresAt: rule.expires_at!,
      locked: rule.locked,
      childRuleId: rule.child_rule_id,
    }));
    return { expired, parents: await parentRules(context.readModels, limit) };
  },
  work: (facts, { context, now, asRoot }) =>
    carryOut(
      cleaner.decide({ now }, facts),
      (output) => output.data.ruleId,
      async (output) => {
        const metadata = asRoot(output.data.ruleId);
        if (output.type === 'ReleaseParentRule') await releaseParentRule(context.commands, output.data, metadata);
        else
          await deleteRuleNow(
            context.commands,
            {
              ruleId: output.data.ruleId,
              purgeReplicas: null,
              cause: { kind: 'deletion', detail: 'expired' },
              ignoreLock: false,
              deleteParent: false,
            },
            metadata,
          );
      },
    ),
});

export const judgeRoles = [injectorRole, evaluatorRole, repairerRole, cleanerRole] as const;
