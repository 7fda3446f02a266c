import { expireAtEndOfLife, extendEndOfLife } from '../../commands/lifetimeException/endOfLife.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { didKey } from '../../domain/did/did.ts';
import { atropos } from '../../domain/lifetimeException/atropos.ts';
import { approvedExceptionEnds } from '../../projections/lifetimeException/lifetimeExceptionQueries.ts';
import { rulesBeyondEndOfLife } from '../../projections/rule/ruleQueries.ts';
import { asRoot, carryOut, type ScheduledRole } from '../role.ts';

/**
 * Atropos on a schedule (`atropos.interval`): reads the rules past their end of life (at most
 * `atropos.max_rules`) and the approved exceptions of their DIDs, lets the workflow decide, and
 * acts through the rule commands as root. Its settings are read from `/config` at every cycle.
 */
export const atroposRole: ScheduledRole = {
  kind: 'scheduled',
  name: atropos.name,
  interval: SETTINGS.atroposInterval,
  settings: [
    SETTINGS.atroposDryRun,
    SETTINGS.atroposGracePeriod,
    SETTINGS.atroposSpreadPeriod,
    SETTINGS.atroposPurgeReplicas,
    SETTINGS.atroposUnlock,
    SETTINGS.atroposMaxRules,
  ],
  async run(trigger, context) {
    const sections = await context.settings();
    const now = trigger.startedAt.toISOString();
    const candidates = await rulesBeyondEndOfLife(
      context.readModels,
      now,
      settingValue(sections, SETTINGS.atroposMaxRules),
    );
    const rules = candidates.map((rule) => ({
      ruleId: rule.id,
      scope: rule.scope,
      name: rule.name,
      eolAt: rule.eol_at!,
      expiresAt: rule.expires_at,
      locked: rule.locked,
    }));
    const exceptions = await approvedExceptionEnds(
      context.readModels,
      rules.map((rule) => didKey(rule.scope, rule.name)),
    );
    return carryOut(
      atropos.decide(
        {
          now,
          dryRun: settingValue(sections, SETTINGS.atroposDryRun),
          gracePeriod: settingValue(sections, SETTINGS.atroposGracePeriod),
          spreadPeriod: settingValue(sections, SETTINGS.atroposSpreadPeriod),
          purgeReplicas: settingValue(sections, SETTINGS.atroposPurgeReplicas),
          unlock: settingValue(sections, SETTINGS.atroposUnlock),
        },
        { rules, exceptions },
      ),
      (output) => output.data.ruleId,
      async (output) => {
        const metadata = asRoot(atropos.name, trigger, output.data.ruleId);
        const { done } =
          output.type === 'ExtendEndOfLife'
            ? await extendEndOfLife(context.commands, output.data, metadata)
            : await expireAtEndOfLife(context.commands, output.data, metadata);
        return done ? undefined : 'the rule is gone';
      },
    );
  },
};
