import { expireAtEndOfLife, extendEndOfLife } from '../../commands/lifetimeException/endOfLife.ts';
import { SETTINGS } from '../../domain/config/settings.ts';
import { didKey } from '../../domain/did/did.ts';
import { atropos } from '../../domain/lifetimeException/atropos.ts';
import { approvedExceptionEnds } from '../../projections/lifetimeException/lifetimeExceptionQueries.ts';
import { rulesBeyondEndOfLife } from '../../projections/rule/ruleQueries.ts';
import { carryOut } from '../role.ts';
import { scheduledRole } from '../scheduledRole.ts';

/**
 * Atropos on a schedule (`atropos.interval`): reads the rules past their end of life (at most
 * `atropos.max_rules`) and the approved exceptions of their DIDs, lets the workflow decide, and
 * acts through the rule commands as root. Its settings are read from `/config` at every cycle.
 */
export const atroposRole = scheduledRole({
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
  read: async ({ context, now, setting }) => {
    const candidates = await rulesBeyondEndOfLife(context.readModels, now, setting(SETTINGS.atroposMaxRules));
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
    return { rules, exceptions };
  },
  work: (facts, { context, now, setting, asRoot }) =>
    carryOut(
      atropos.decide(
        {
          now,
          dryRun: setting(SETTINGS.atroposDryRun),
          gracePeriod: setting(SETTINGS.atroposGracePeriod),
          spreadPeriod: setting(SETTINGS.atroposSpreadPeriod),
          purgeReplicas: setting(SETTINGS.atroposPurgeReplicas),
          unlock: setting(SETTINGS.atroposUnlock),
        },
        facts,
      ),
      (output) => output.data.ruleId,
      async (output) => {
        const metadata = asRoot(output.data.ruleId);
        const { done } =
          output.type === 'ExtendEndOfLife'
            ? await extendEndOfLife(context.commands, output.data, metadata)
            : await expireAtEndOfLife(context.commands, output.data, metadata);
        return done ? undefined : 'the rule is gone';
      },
    ),
});
