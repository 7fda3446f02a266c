import { deleteExpiredDid } from '../../commands/did/didLifecycleCommands.ts';
import { SETTINGS } from '../../domain/config/settings.ts';
import { undertaker } from '../../domain/did/undertaker.ts';
import { expiredDids } from '../../projections/did/didQueries.ts';
import { lockedRuleCount } from '../../projections/rule/ruleQueries.ts';
import { carryOut } from '../role.ts';
import { scheduledRole } from '../scheduledRole.ts';

/**
 * The undertaker on a schedule (`undertaker.interval`, default 30 s): reads the expired DIDs from
 * the read models (at most `undertaker.max_dids`), lets the workflow choose, and deletes them as
 * root, `undertaker.chunk_size` at a time, with their rules (purging their replicas, which the
 * reaper then deletes). A DID the command refuses (resurrected or given a new lifetime meanwhile),
 * or postpones (a rule over `undertaker.expire_rules_locks_size` locks), is reported as skipped;
 * the others go on.
 */
export const undertakerRole = scheduledRole({
  name: undertaker.name,
  interval: SETTINGS.undertakerInterval,
  settings: [
    SETTINGS.undertakerMaxDids,
    SETTINGS.undertakerChunkSize,
    SETTINGS.undertakerDryRun,
    SETTINGS.undertakerExpireRulesLocksSize,
    SETTINGS.undertakerPurgeAllReplicas,
  ],
  read: async ({ context, now, setting }) => {
    const candidates = await expiredDids(context.readModels, now, setting(SETTINGS.undertakerMaxDids));
    // The command refuses a DID with a locked rule too; asking first lets the report say why.
    return Promise.all(
      candidates.map(async (did) => ({
        ...did,
        lockedRules: await lockedRuleCount(context.readModels, did.scope, did.name),
      })),
    );
  },
  work: (expired, { context, now, setting, asRoot }) => {
    const options = {
      expireRulesLocksSize: setting(SETTINGS.undertakerExpireRulesLocksSize),
      purgeAllReplicas: setting(SETTINGS.undertakerPurgeAllReplicas),
    };
    return carryOut(
      undertaker.decide({ now, dryRun: setting(SETTINGS.undertakerDryRun) }, { expired }),
      ({ data }) => `${data.scope}:${data.name}`,
      async ({ data }) =>
        (await deleteExpiredDid(context.commands, data, asRoot(`${data.scope}:${data.name}`), options)).postponed,
      setting(SETTINGS.undertakerChunkSize),
    );
  },
});
