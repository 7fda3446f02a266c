import { deleteRuleNow } from '../../commands/rule/ruleDeletion.ts';
import { evaluateAttach, evaluateDetach, rulesCovering } from '../../commands/rule/ruleEvaluation.ts';
import { injectRule } from '../../commands/rule/ruleInjection.ts';
import { repairRule } from '../../commands/rule/ruleRepair.ts';
import { releaseParentRule } from '../../commands/rule/ruleUpdates.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { DID_EVENT_TYPES } from '../../domain/did/did.ts';
import {
  awaitsInjection,
  cleaner,
  evaluator,
  injector,
  injectorInputOf,
  repairableBefore,
  repairer,
  type EvaluatorInput,
  type InjectorInput,
} from '../../domain/rule/judge.ts';
import { RULE_EVENT_TYPES } from '../../domain/rule/rule.ts';
import { expiredRules, parentRules, rulesInState } from '../../projections/rule/ruleQueries.ts';
import { asRoot, carryOut, eventRole, type ScheduledRole } from '../role.ts';

/**
 * Rucio's judge as roles: the injector and the evaluator react to events (a rule added in INJECT
 * or approved; an attach or detach), the repairer and the cleaner run on a schedule. Each reads its
 * facts, lets its workflow (domain/rule/judge.ts) decide, and acts through the rule commands as
 * root, with the job as the cause of what it appends.
 */

type InjectorJob = InjectorInput & { position: string };

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

export const evaluatorRole = eventRole(DID_EVENT_TYPES, {
  name: evaluator.name,
  handles: { DidsAttached: true, DidsDetached: true },
  concurrency: 2,
  jobOf: ({ type, data }, { position }): EvaluatorJob => ({
    type,
    scope: data.scope,
    name: data.name,
    children: data.children.map(({ scope, name }) => ({ scope, name })),
    position: position.toString(),
  }),
  async process(job, trigger, context) {
    // The graph facts (ancestors, parents) must show the attach or detach itself.
    await context.readModelsAt(BigInt(job.position));
    const coveringRules = (await rulesCovering(context.commands, job)).length;
    return carryOut(
      evaluator.decide(job, { coveringRules }),
      (output) => `${output.type} ${output.data.scope}:${output.data.name}`,
      async (output) => {
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

export const repairerRole: ScheduledRole = {
  kind: 'scheduled',
  name: repairer.name,
  interval: SETTINGS.repairerInterval,
  async run(trigger, context) {
    const sections = await context.settings();
    const deltaSeconds = settingValue(sections, SETTINGS.repairerDelta);
    const now = trigger.startedAt.toISOString();
    const stuck = (
      await rulesInState(
        context.readModels,
        'STUCK',
        repairableBefore(now, deltaSeconds),
        settingValue(sections, SETTINGS.repairerMaxRules),
      )
    ).map((rule) => ({ ruleId: rule.id, updatedAt: rule.updated_at }));
    return carryOut(
      repairer.decide({ now, deltaSeconds }, { stuck }),
      (output) => output.data.ruleId,
      async (output) => {
        const { outcome } = await repairRule(
          context.commands,
          output.data,
          asRoot(repairer.name, trigger, output.data.ruleId),
        );
        return outcome === 'not stuck' ? outcome : undefined;
      },
    );
  },
};

export const cleanerRole: ScheduledRole = {
  kind: 'scheduled',
  name: cleaner.name,
  interval: SETTINGS.cleanerInterval,
  async run(trigger, context) {
    const sections = await context.settings();
    const limit = settingValue(sections, SETTINGS.cleanerMaxRules);
    const now = trigger.startedAt.toISOString();
    const expired = (await expiredRules(context.readModels, now, limit)).map((rule) => ({
      ruleId: rule.id,
      expiresAt: rule.expires_at!,
      locked: rule.locked,
      childRuleId: rule.child_rule_id,
    }));
    const parents = await parentRules(context.readModels, limit);
    return carryOut(
      cleaner.decide({ now }, { expired, parents }),
      (output) => output.data.ruleId,
      async (output) => {
        const metadata = asRoot(cleaner.name, trigger, output.data.ruleId);
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
    );
  },
};
