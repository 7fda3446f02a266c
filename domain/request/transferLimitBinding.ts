import { ALL_ACTIVITIES, type TransferLimit } from './transferLimit.ts';
import type { Topology } from './topology.ts';

/** A limit with the RSEs its expression selects now (Rucio re-syncs them every throttler cycle). */
export type BoundLimit = TransferLimit & Readonly<{ rseIds: ReadonlySet<string> }>;

export const bindLimits = (topology: Topology, limits: readonly TransferLimit[]): BoundLimit[] =>
  limits.map((limit) => ({ ...limit, rseIds: topology.selected(limit.rseExpression) }));

/**
 * The limits a transfer from `sourceRseId` to `destRseId` for `activity` is subject to (Rucio's
 * `applicable_rse_transfer_limits`): destination limits on the destination, source limits on the
 * source, each for the activity or for all activities.
 */
export const applicableLimits = (
  limits: readonly BoundLimit[],
  sourceRseId: string | null,
  destRseId: string,
  activity: string,
): BoundLimit[] =>
  limits.filter(
    (limit) =>
      (limit.activity === ALL_ACTIVITIES || limit.activity === activity) &&
      (limit.direction === 'DESTINATION'
        ? limit.rseIds.has(destRseId)
        : sourceRseId !== null && limit.rseIds.has(sourceRseId)),
  );
