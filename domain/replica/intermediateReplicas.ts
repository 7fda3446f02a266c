import type { Command } from '../shared/event.ts';
import type { FileReplicas, PendingRequest, ReplicaEvent } from './replica.ts';
import type { ReplicaTarget } from './replicaStates.ts';

/**
 * The replica a multihop path copies a file into on its way (Rucio's
 * `__create_missing_replicas_and_requests`): COPYING, waiting for the intermediate hop that
 * brings it, with the tombstone of `multihop_tombstone_delay` so the reaper removes it once the
 * path is done. A replica already there that nothing waits for and no copy of which is under way
 * (UNAVAILABLE or BAD, say a path that failed before) becomes COPYING for the hop. Any other
 * replica is left as it is, and the submitter leaves the path for a later cycle: an AVAILABLE one
 * is a source by then, a COPYING one is another transfer's. Never refused: a path that cannot be
 * made now is no error.
 */
export type AddIntermediateReplica = Command<
  'AddIntermediateReplica',
  ReplicaTarget & {
    bytes: number;
    md5: string | null;
    adler32: string | null;
    tombstone: string | null;
    request: PendingRequest;
  }
>;

export const addIntermediateReplica = (
  { data, metadata }: AddIntermediateReplica,
  state: FileReplicas,
): ReplicaEvent[] => {
  if (state.did.status !== 'Live' || state.did.record.didType !== 'FILE') return [];
  const { scope, name, rse, rseId, bytes, md5, adler32, tombstone, request } = data;
  const at = metadata.now.toISOString();
  const replica = state.replicas.get(rseId);
  if (!replica)
    return [
      {
        type: 'ReplicaAdded',
        data: {
          scope,
          name,
          rse,
          rseId,
          bytes,
          md5,
          adler32,
          path: null,
          state: 'COPYING',
          tombstone,
          lock: null,
          request,
          addedAt: at,
        },
      },
    ];
  if ((replica.state !== 'UNAVAILABLE' && replica.state !== 'BAD') || replica.pendingRequest !== null) return [];
  return [
    {
      type: 'ReplicaStateChanged',
      data: {
        scope,
        name,
        rse,
        rseId,
        previousState: replica.state,
        state: 'COPYING',
        // A replica some rule holds keeps its protection; one nothing holds goes with the path.
        tombstone: replica.locks.size > 0 ? replica.tombstone : tombstone,
        recovered: false,
        locks: {},
        requestId: request.id,
        requestStream: request.stream,
        changedAt: at,
      },
    },
  ];
};
