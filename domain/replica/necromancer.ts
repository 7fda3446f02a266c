import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';

/**
 * The necromancer (Rucio's daemon, behaviour rule 25): every BAD replica whose file is not LOST
 * is recovered from another copy, or declared lost when there is none. Which of the two is
 * decided on the file's stream (domain/replica/replicaRecovery.ts), which holds every copy; this
 * chooses the replicas a cycle takes, oldest declaration first.
 */

export type NecromancerTick = Readonly<{ dryRun: boolean }>;

/** A BAD replica as the read models show it. */
export type BadReplica = Readonly<{ scope: string; name: string; rse: string; rseId: string; since: string }>;

export type ResolveBadReplica = WorkflowOutput<
  'ResolveBadReplica',
  { scope: string; name: string; rse: string; rseId: string }
>;
export type NecromancerOutput = ResolveBadReplica | Skipped;

export const necromancer: Workflow<NecromancerTick, Readonly<{ bad: readonly BadReplica[] }>, NecromancerOutput> = {
  name: 'necromancer',
  decide: ({ dryRun }, { bad }) =>
    [...bad]
      .sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : 0))
      .map(({ scope, name, rse, rseId }): NecromancerOutput =>
        dryRun
          ? { type: 'Skipped', data: { what: `${scope}:${name} on ${rse}`, reason: 'dry run' } }
          : { type: 'ResolveBadReplica', data: { scope, name, rse, rseId } },
      ),
};
