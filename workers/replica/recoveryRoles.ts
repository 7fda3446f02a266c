import {
  declareRecoveries,
  endTemporaryUnavailabilities,
  resolveBadReplica,
} from '../../commands/replica/replicaRecovery.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { didKey } from '../../domain/did/did.ts';
import { necromancer } from '../../domain/replica/necromancer.ts';
import { suspiciousReplicaRecoverer } from '../../domain/replica/suspiciousReplicaRecoverer.ts';
import {
  temporaryUnavailabilityExpiry,
  type EndTemporaryUnavailability,
} from '../../domain/replica/temporaryUnavailabilityExpiry.ts';
import {
  activeRses,
  badReplicas,
  expiredTemporaryUnavailabilities,
  suspiciousForRecovery,
} from '../../projections/replica/deletionQueries.ts';
import { carryOut, skippedOf, stepOf, withoutSkipped, type ScheduledRole } from '../role.ts';
import { contentDigest } from '../stepCause.ts';

/**
 * The recovery daemons on schedules: the necromancer (BAD replicas recovered from another copy or
 * lost), minos-temporary-expiration (temporary unavailabilities that ended), and the
 * suspicious-replica-recoverer (replicas declared suspicious often enough turn BAD). Each reads
 * the read models, lets its workflow choose, and issues commands as root with the job as cause.
 */

/** The necromancer (`necromancer.interval`, 10 s): each BAD replica in its own step, oldest first. */
export const necromancerRole: ScheduledRole = {
  kind: 'scheduled',
  name: necromancer.name,
  interval: SETTINGS.necromancerInterval,
  settings: [SETTINGS.necromancerBulk, SETTINGS.necromancerDryRun],
  async run(trigger, context) {
    const sections = await context.settings();
    const bad = await badReplicas(context.readModels, settingValue(sections, SETTINGS.necromancerBulk));
    const outputs = necromancer.decide({ dryRun: settingValue(sections, SETTINGS.necromancerDryRun) }, { bad });
    const counts = { recover: 0, obsolete: 0, lost: 0 };
    const { skipped } = await carryOut(
      outputs,
      ({ data }) => `${didKey(data.scope, data.name)} on ${data.rse}`,
      async ({ data: { scope, name, rse, rseId } }) => {
        // Each step is timed when it is made: replicas are declared bad meanwhile.
        const { outcome } = await resolveBadReplica(
          context.commands,
          { scope, name, rse, rseId, reason: 'no other copy can be read' },
          stepOf(necromancer.name, trigger, `${rseId}/${didKey(scope, name)}`, context.clock),
        );
        if (outcome === 'nothing') return 'no longer BAD, or its file is LOST already';
        counts[outcome] += 1;
      },
    );
    const done = counts.recover + counts.obsolete + counts.lost;
    const detail =
      done > 0
        ? `${counts.recover} being copied again, ${counts.obsolete} left to the reaper (no lock), ${counts.lost} lost`
        : undefined;
    return { done, skipped, ...(detail ? { detail } : {}) };
  },
};

/** minos-temporary-expiration (`minos-temporary-expiration.interval`, 60 s): expired unavailabilities end, in one step. */
export const temporaryExpirationRole: ScheduledRole = {
  kind: 'scheduled',
  name: temporaryUnavailabilityExpiry.name,
  interval: SETTINGS.temporaryExpirationInterval,
  settings: [SETTINGS.temporaryExpirationBulk, SETTINGS.temporaryExpirationDryRun],
  async run(trigger, context) {
    const sections = await context.settings();
    const now = trigger.startedAt.toISOString();
    const unavailable = await expiredTemporaryUnavailabilities(
      context.readModels,
      now,
      settingValue(sections, SETTINGS.temporaryExpirationBulk),
    );
    const outputs = temporaryUnavailabilityExpiry.decide(
      { now, dryRun: settingValue(sections, SETTINGS.temporaryExpirationDryRun) },
      { unavailable },
    );
    const skipped = skippedOf(outputs);
    const ending = outputs
      .filter((output): output is EndTemporaryUnavailability => output.type === 'EndTemporaryUnavailability')
      .map((output) => output.data);
    if (ending.length === 0) return { done: 0, skipped };
    const keys = ending.map((replica) => `${didKey(replica.scope, replica.name)} ${replica.rseId}`);
    const { restored } = await endTemporaryUnavailabilities(
      context.commands,
      { replicas: ending },
      stepOf(temporaryUnavailabilityExpiry.name, trigger, `end-${contentDigest(keys)}`, context.clock),
    );
    const back = new Set(restored.map((replica) => `${didKey(replica.scope, replica.name)} ${replica.rseId}`));
    for (const replica of ending) {
      if (!back.has(`${didKey(replica.scope, replica.name)} ${replica.rseId}`))
        skipped.push({
          what: `${didKey(replica.scope, replica.name)} on ${replica.rse}`,
          reason: 'declared again, or no longer TEMPORARY_UNAVAILABLE',
        });
    }
    return { done: restored.length, skipped };
  },
};

/** A day: the recoverer's window is in days, as Rucio's `younger_than`. */
const DAY_MS = 86_400_000;

/**
 * The suspicious-replica-recoverer (`suspicious-replica-recoverer.interval`, 60 s) over the RSEs
 * with `enable_suspicious_file_recovery` that can be read; declarations as root, in one step.
 */
export const suspiciousRecovererRole: ScheduledRole = {
  kind: 'scheduled',
  name: suspiciousReplicaRecoverer.name,
  interval: SETTINGS.recovererInterval,
  settings: [
    SETTINGS.recovererYoungerThan,
    SETTINGS.recovererNattempts,
    SETTINGS.recovererLimitPerRse,
    SETTINGS.recovererActiveMode,
  ],
  async run(trigger, context) {
    const sections = await context.settings();
    const enabled = (value: unknown) => value === true || (typeof value === 'string' && value.toLowerCase() === 'true');
    const rses = (await activeRses(context.readModels)).filter(
      (rse) => enabled(rse.attributes.enable_suspicious_file_recovery) && rse.properties.availability_read,
    );
    if (rses.length === 0) return { done: 0, skipped: [] };
    const youngerThan = new Date(
      trigger.startedAt.getTime() - settingValue(sections, SETTINGS.recovererYoungerThan) * DAY_MS,
    ).toISOString();
    const suspicious = await suspiciousForRecovery(context.readModels, {
      rseIds: new Set(rses.map((rse) => rse.id)),
      youngerThan,
      nattempts: settingValue(sections, SETTINGS.recovererNattempts),
    });
    const outputs = suspiciousReplicaRecoverer.decide(
      {
        activeMode: settingValue(sections, SETTINGS.recovererActiveMode),
        limitPerRse: settingValue(sections, SETTINGS.recovererLimitPerRse),
        policies: settingValue(sections, SETTINGS.recovererPolicy),
      },
      { suspicious },
    );
    const skipped = skippedOf(outputs);
    const declarations = withoutSkipped(outputs);
    if (declarations.length === 0) return { done: 0, skipped };
    const metadata = stepOf(
      suspiciousReplicaRecoverer.name,
      trigger,
      `declare-${contentDigest(declarations.map((output) => `${output.data.rseId}/${didKey(output.data.scope, output.data.name)}`))}`,
      context.clock,
    );
    const { declared } = await declareRecoveries(
      context.commands,
      {
        bad: declarations.flatMap((output) => (output.type === 'DeclareReplicaBad' ? [output.data] : [])),
        unavailable: declarations.flatMap((output) =>
          output.type === 'DeclareReplicaTemporarilyUnavailable'
            ? [{ ...output.data, reason: 'Suspicious replicas on a problematic RSE' }]
            : [],
        ),
      },
      metadata,
    );
    const bad = declarations.filter((output) => output.type === 'DeclareReplicaBad').length;
    return {
      done: declared,
      skipped,
      detail: `${bad} declared BAD, ${declarations.length - bad} made TEMPORARY_UNAVAILABLE`,
    };
  },
};

export const recoveryRoles = [necromancerRole, temporaryExpirationRole, suspiciousRecovererRole] as const;
