import { upcaster, type Upcaster } from '../shared/upcasting.ts';
import type { ReplicaLocksChanged } from './replica.ts';

/**
 * Shapes of replica events that changed after events had been stored with the old one.
 *
 * `ReplicaLocksChanged` 1 → 2: `requestId`, the transfer queued for the changed locks, came with
 * the repairer's retries in place (commit 9771694, "Rule updates, approval, API deletion and the
 * repairer's command"). Events written before name none; the current shape says so with null.
 * Events of version 1 written after that change carry it already and keep it.
 */
export const replicaUpcasters: readonly Upcaster[] = [
  upcaster<ReplicaLocksChanged, ReplicaLocksChangedV1>('ReplicaLocksChanged', 1, (data) => ({
    ...data,
    requestId: data.requestId ?? null,
  })),
];

/** `ReplicaLocksChanged` at version 1: `requestId` may be missing. */
type ReplicaLocksChangedV1 = Omit<ReplicaLocksChanged['data'], 'requestId'> & Readonly<{ requestId?: string | null }>;
