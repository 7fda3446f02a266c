import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';

/**
 * minos-temporary-expiration (Rucio's daemon): replicas declared TEMPORARY_UNAVAILABLE whose
 * expiry has passed are AVAILABLE again. The file's stream checks the expiry it holds, so a
 * declaration made again meanwhile (a later expiry) keeps the replica unavailable.
 */

export type TemporaryUnavailability = Readonly<{
  scope: string;
  name: string;
  rse: string;
  rseId: string;
  expiresAt: string;
}>;

export type EndTemporaryUnavailability = WorkflowOutput<
  'EndTemporaryUnavailability',
  { scope: string; name: string; rse: string; rseId: string }
>;
export type TemporaryExpiryOutput = EndTemporaryUnavailability | Skipped;

export const temporaryUnavailabilityExpiry: Workflow<
  Readonly<{ now: string; dryRun: boolean }>,
  Readonly<{ unavailable: readonly TemporaryUnavailability[] }>,
  TemporaryExpiryOutput
> = {
  name: 'minos-temporary-expiration',
  decide: ({ now, dryRun }, { unavailable }) =>
    [...unavailable]
      .filter((replica) => replica.expiresAt < now)
      .sort((a, b) => (a.expiresAt < b.expiresAt ? -1 : a.expiresAt > b.expiresAt ? 1 : 0))
      .map(({ scope, name, rse, rseId }): TemporaryExpiryOutput =>
        dryRun
          ? { type: 'Skipped', data: { what: `${scope}:${name} on ${rse}`, reason: 'dry run' } }
          : { type: 'EndTemporaryUnavailability', data: { scope, name, rse, rseId } },
      ),
};
