import { deleteRuleNow } from '../../commands/rule/ruleDeletion.ts';
import { evaluateAttach, evaluateDetach, rulesCovering } from '../../commands/rule/ruleEvaluation.ts';
import { injectRule } from '../../commands/rule/ruleInjection.ts';
import { repairRule } from '../../commands/rule/ruleRepair.ts';
import { releaseParentRule } from '../../commands/rule/ruleUpdates.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import type { DidRef } from '../../domain/did/did.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import { cleaner, evaluator, injector, repairer, type InjectorInput } from '../../domain/rule/judge.ts';
import type { RuleRecord, RuleState } from '../../domain/rule/rule.ts';
import { expiredRules, parentRules, rulesInState } from '../../projections/rule/ruleQueries.ts';
import { asRoot, type CycleReport, type EventRole, type ScheduledRole } from '../role.ts';

/**
 * Rucio's judge as roles: the injector and the evaluator react to events (a rule added in INJECT
 * or approved; an attach or detach), the repairer and the cleaner run on a schedule. Each reads its
 * facts, lets its workflow (domain/rule/judge.ts) decide, and acts through the rule commands as
 * root, with the job as the cause of what it appends.
 */

/** Runs each output, reporting what was done and what was refused (a rule gone meanwhile, say). */
const carryOut = async <T>(
  outputs: readonly T[],
  act: (output: T) => Promise<string | undefined>,
  what: (output: T) => string,
): Promise<CycleReport> => {
  let done = 0;
  const skipped: { what: string; reason: string }[] = [];
  for (const output of outputs) {
    try {
      const refused = await act(output);
      if (refused) skipped.push({ what: what(output), reason: refused });
      else done += 1;
    } catch (error) {
      if (!(error instanceof RucioError)) throw error;
      skipped.push({ what: what(output), reason: `${error.exceptionClass}: ${error.message}` });
    }
  }
  return { done, skipped };
};

type InjectorJob = InjectorInput & { position: string };

export const injectorRole: EventRole<InjectorJob> = {
  kind: 'event',
  name: injector.name,
  eventTypes: ['RuleAdded', 'RuleApproved'],
  concurrency: 2,
  jobOf: (event) => {
    const data = event.data as { rule?: RuleRecord; state?: RuleState; ruleId?: string };
    if (event.type === 'RuleAdded' && data.rule && data.state === 'INJECT')
      return { type: 'RuleAdded', ruleId: data.rule.id, state: data.state, position: event.position.toString() };
    if (event.type === 'RuleApproved' && data.ruleId)
      return { type: 'RuleApproved', ruleId: data.ruleId, position: event.position.toString() };
    return undefined;
  },
  // A delayed injection waits in the queue until its time (Rucio moves the rule's creation there).
  delayOf: (event) => {
    const injectAfter = (event.data as { rule?: RuleRecord }).rule?.injectAfter;
    return injectAfter ? Math.max(0, Date.parse(injectAfter) - Date.now()) : 0;
  },
  async process(job, trigger, context) {
    await context.readModelsAt(BigInt(job.position));
    return carryOut(
      injector.decide(job, {}),
      async (output) => {
        const outcome = await injectRule(
          context.commands,
          output.data,
          asRoot(injector.name, trigger, output.data.ruleId),
        );
        return ['not waiting for injection', 'delayed', 'expiring soon'].includes(outcome.outcome)
          ? outcome.outcome
          : undefined;
      },
      (output) => output.data.ruleId,
    );
  },
};

type EvaluatorJob = Readonly<{
  type: 'DidsAttached' | 'DidsDetached';
  scope: string;
  name: string;
  children: readonly DidRef[];
  position: string;
}>;

export const evaluatorRole: EventRole<EvaluatorJob> = {
  kind: 'event',
  name: evaluator.name,
  eventTypes: ['DidsAttached', 'DidsDetached'],
  concurrency: 2,
  jobOf: (event) => {
    const data = event.data as { scope: string; name: string; children: readonly DidRef[] };
    return {
      type: event.type as EvaluatorJob['type'],
      scope: data.scope,
      name: data.name,
      children: data.children.map(({ scope, name }) => ({ scope, name })),
      position: event.position.toString(),
    };
  },
  async process(job, trigger, context) {
    // The graph facts (ancestors, parents) must show the attach or detach itself.
    await context.readModelsAt(BigInt(job.position));
    const coveringRules = (await rulesCovering(context.commands, job)).length;
    return carryOut(
      evaluator.decide(job, { coveringRules }),
      async (output) => {
        const metadata = asRoot(evaluator.name, trigger, `${output.data.scope}:${output.data.name}`);
        if (output.type === 'EvaluateAttach') {
          const outcome = await evaluateAttach(context.commands, output.data, metadata);
          return outcome.stuck.length > 0 ? `rules stuck: ${outcome.stuck.join(', ')}` : undefined;
        }
        if (output.type === 'EvaluateDetach') await evaluateDetach(context.commands, output.data, metadata);
        return undefined;
      },
      (output) => `${output.type} ${output.data.scope}:${output.data.name}`,
    );
  },
};

export const repairerRole: ScheduledRole = {
  kind: 'scheduled',
  name: repairer.name,
  interval: SETTINGS.repairerInterval,
  async run(trigger, context) {
    const sections = await context.settings();
    const deltaSeconds = settingValue(sections, SETTINGS.repairerDelta);
    const now = trigger.startedAt.toISOString();
    const updatedBefore = new Date(trigger.startedAt.getTime() - deltaSeconds * 1000 + 1).toISOString();
    const stuck = (
      await rulesInState(context.readModels, 'STUCK', updatedBefore, settingValue(sections, SETTINGS.repairerMaxRules))
    ).map((rule) => ({
      ruleId: rule.id,
      updatedAt: rule.updated_at,
    }));
    return carryOut(
      repairer.decide({ now, deltaSeconds }, { stuck }),
      async (output) => {
        const outcome = await repairRule(
          context.commands,
          output.data,
          asRoot(repairer.name, trigger, output.data.ruleId),
        );
        return outcome.outcome === 'not stuck' ? outcome.outcome : undefined;
      },
      (output) => output.data.ruleId,
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
      async (output) => {
        if (output.type === 'Skipped') return output.data.reason;
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
        return undefined;
      },
      (output) => ('ruleId' in output.data ? output.data.ruleId : output.data.what),
    );
  },
};
