import { upcaster, type Upcaster } from '../shared/upcasting.ts';
import type { DidCreated } from './did.ts';

/**
 * Shapes of DID events that changed after events had been stored with the old one.
 *
 * `DidCreated` 1 → 2 gains `replicas`, the replicas a file was registered with in the same step
 * (docs/architecture.md, "Event granularity"); before, a `ReplicaAdded` followed for each: none.
 */
export const didUpcasters: readonly Upcaster[] = [
  upcaster<DidCreated, Omit<DidCreated['data'], 'replicas'>>('DidCreated', 1, (data) => ({ ...data, replicas: [] })),
];
