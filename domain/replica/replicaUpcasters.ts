import { requestStreamName } from '../request/request.ts';
import type { Event } from '../shared/event.ts';
import { upcaster, type Upcaster } from '../shared/upcasting.ts';
import type { ReplicaAdded, ReplicaLocked, ReplicaLocksChanged, ReplicaStateChanged } from './replica.ts';

/**
 * Shapes of replica events that changed after events had been stored with the old one.
 *
 * `ReplicaLocksChanged` 1 → 2: `requestId`, the transfer queued for the changed locks, came with
 * the repairer's retries in place (commit 9771694, "Rule updates, approval, API deletion and the
 * repairer's command"). Events written before name none; the current shape says so with null.
 * Events of version 1 written after that change carry it already and keep it.
 *
 * `ReplicaLocked` 1 → 2 and `ReplicaLocksChanged` 2 → 3: `requestStream`, the stream of the
 * request the replica waits for, came with batches of requests (docs/architecture.md, "Event
 * granularity"); before them each request had its own stream, `request-<id>`.
 *
 * One event per replica and step (the same page): `ReplicaAdded` 1 → 2 gains `lock`, the lock of
 * a replica a rule creates (before, a `ReplicaLocked` followed: null); `ReplicaLocked` 2 → 3
 * gains `previousState`, the state a lock moved to COPYING (before, a `ReplicaStateChanged`
 * preceded it: null); `ReplicaStateChanged` 1 → 2 gains `locks` and `requestId`/`requestStream`,
 * the locks that changed with the state and the transfer queued for them (before, a
 * `ReplicaLocksChanged` followed: none).
 */
export const replicaUpcasters: readonly Upcaster[] = [
  upcaster<Event<'ReplicaLocksChanged', ReplicaLocksChangedV2>, ReplicaLocksChangedV1>(
    'ReplicaLocksChanged',
    1,
    (data) => ({ ...data, requestId: data.requestId ?? null }),
  ),
  upcaster<ReplicaLocksChanged, ReplicaLocksChangedV2>('ReplicaLocksChanged', 2, (data) => ({
    ...data,
    requestStream: streamOf(data.requestId),
  })),
  upcaster<Event<'ReplicaLocked', ReplicaLockedV2>, Omit<ReplicaLockedV2, 'requestStream'>>(
    'ReplicaLocked',
    1,
    (data) => ({ ...data, requestStream: streamOf(data.requestId) }),
  ),
  upcaster<ReplicaLocked, ReplicaLockedV2>('ReplicaLocked', 2, (data) => ({ ...data, previousState: null })),
  upcaster<ReplicaAdded, Omit<ReplicaAdded['data'], 'lock'>>('ReplicaAdded', 1, (data) => ({ ...data, lock: null })),
  upcaster<ReplicaStateChanged, Omit<ReplicaStateChanged['data'], 'locks' | 'requestId' | 'requestStream'>>(
    'ReplicaStateChanged',
    1,
    (data) => ({ ...data, locks: {}, requestId: null, requestStream: null }),
  ),
];

/** `ReplicaLocked` at version 2: no `previousState`. */
type ReplicaLockedV2 = Omit<ReplicaLocked['data'], 'previousState'>;

const streamOf = (requestId: string | null): string | null =>
  requestId === null ? null : requestStreamName(requestId);

/** `ReplicaLocksChanged` at version 2: no `requestStream`. */
type ReplicaLocksChangedV2 = Omit<ReplicaLocksChanged['data'], 'requestStream'>;

/** `ReplicaLocksChanged` at version 1: `requestId` may be missing. */
type ReplicaLocksChangedV1 = Omit<ReplicaLocksChangedV2, 'requestId'> & Readonly<{ requestId?: string | null }>;
