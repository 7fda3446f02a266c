import { deleteExpiredDid } from '../../commands/did/didLifecycle.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { undertaker } from '../../domain/did/undertaker.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import { expiredDids } from '../../projections/did/didQueries.ts';
import { lockedRuleCount } from '../../projections/rule/ruleQueries.ts';
import { asRoot, type CycleReport, type ScheduledRole } from '../role.ts';

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
    const outputs = undertaker.decide({ now, dryRun: settingValue(sections, SETTINGS.undertakerDryRun) }, { expired });
    const skipped: { what: string; reason: string }[] = [];
    let done = 0;
    const deletions = outputs.flatMap((output) => {
      if (output.type === 'Skipped') skipped.push({ ...output.data });
      return output.type === 'DeleteExpiredDid' ? [output.data] : [];
    });
    const chunkSize = settingValue(sections, SETTINGS.undertakerChunkSize);
    const options = {
      expireRulesLocksSize: settingValue(sections, SETTINGS.undertakerExpireRulesLocksSize),
      purgeAllReplicas: settingValue(sections, SETTINGS.undertakerPurgeAllReplicas),
    };
    for (let start = 0; start < deletions.length; start += chunkSize) {
      await Promise.all(
        deletions.slice(start, start + chunkSize).map(async (did) => {
          const item = `${did.scope}:${did.name}`;
          const metadata = asRoot('undertaker', trigger, item);
          try {
            const outcome = await deleteExpiredDid(context.commands, did, metadata, options);
            if (outcome.postponed) skipped.push({ what: item, reason: outcome.postponed });
            else done += 1;
          } catch (error) {
            if (!(error instanceof RucioError)) throw error;
            skipped.push({ what: item, reason: `${error.exceptionClass}: ${error.message}` });
          }
        }),
      );
    }
    return { done, skipped } satisfies CycleReport;
  },
};
