import { deleteExpiredDid } from '../../commands/did/didLifecycleCommands.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { undertaker } from '../../domain/did/undertaker.ts';
import { expiredDids } from '../../projections/did/didQueries.ts';
import { lockedRuleCount } from '../../projections/rule/ruleQueries.ts';
import { asRoot, carryOut, type ScheduledRole } from '../role.ts';

/**
 * The undertaker on a schedule (`undertaker.interval`, default 30 s): reads the expired DIDs from
 * the read models (at most `undertaker.max_dids`), lets the workflow choose, and deletes them as
 * root, `undertaker.chunk_size` at a time, with their rules (purging their replicas, which the
 * reaper then deletes). A DID the command refuses (resurrected or given a new lifetime meanwhile),
 * or postpones (a rule over `undertaker.expire_rules_locks_size` locks), is reported as skipped;
 * the others go on.
 */
export const undertakerRole: ScheduledRole = {
  kind: 'scheduled',
  name: undertaker.name,
  interval: SETTINGS.undertakerInterval,
  settings: [
    SETTINGS.undertakerMaxDids,
    SETTINGS.undertakerChunkSize,
    SETTINGS.undertakerDryRun,
    SETTINGS.undertakerExpireRulesLocksSize,
    SETTINGS.undertakerPurgeAllReplicas,
  ],
  async run(trigger, context) {
    const sections = await context.settings();
    const now = trigger.startedAt.toISOString();
    const candidates = await expiredDids(context.readModels, now, settingValue(sections, SETTINGS.undertakerMaxDids));
    // The command refuses a DID with a locked rule too; asking first lets the report say why.
    const expired = await Promise.all(
      candidates.map(async (did) => ({
        ...did,
        lockedRules: await lockedRuleCount(context.readModels, did.scope, did.name),
      })),
    );
    const options = {
      expireRulesLocksSize: settingValue(sections, SETTINGS.undertakerExpireRulesLocksSize),
      purgeAllReplicas: settingValue(sections, SETTINGS.undertakerPurgeAllReplicas),
    };
    return carryOut(
      undertaker.decide({ now, dryRun: settingValue(sections, SETTINGS.undertakerDryRun) }, { expired }),
      ({ data }) => `${data.scope}:${data.name}`,
      async ({ data }) => {
        const metadata = asRoot(undertaker.name, trigger, `${data.scope}:${data.name}`);
        return (await deleteExpiredDid(context.commands, data, metadata, options)).postponed;
      },
      settingValue(sections, SETTINGS.undertakerChunkSize),
    );
  },
};
