import type { DidEvent } from '../../domain/did/did.ts';
import type { ReplicaEvent } from '../../domain/replica/replica.ts';
import { countAddedReplica, countMembership, countTransition, datasetParentsCollection, datasetReplicasCollection } from './datasetReplicas.ts';
import type { Projection } from '../projection.ts';
import { evolveReplica, replicaId, replicasCollection, type ReplicaDocument } from './replicaDocuments.ts';

/**
 * The replica projection: one document per replica, and the dataset replicas counted from them.
 * Both live in one projection because an attachment counts its files' replicas by reading them:
 * a projection may read only what it writes itself (a rebuilt projection runs ahead of or behind
 * the others).
 */
export const replicasProjection: Projection = {
  name: 'replicas',
  version: 1,
  collections: [replicasCollection, datasetReplicasCollection, datasetParentsCollection],
  handles: [
    'ReplicaAdded',
    'ReplicaStateChanged',
    'ReplicaDeclaredBad',
    'ReplicaDeclaredTemporarilyUnavailable',
    'ReplicaTombstoneSet',
    'ReplicaLocked',
    'ReplicaUnlocked',
    'DidsAttached',
    'DidsDetached',
    'DidErased',
  ],
  async apply(recorded, context) {
    const event = { type: recorded.type, data: recorded.data } as ReplicaEvent | DidEvent;
    if (event.type === 'DidsAttached' || event.type === 'DidsDetached' || event.type === 'DidErased') {
      await countMembership(context, event);
      return;
    }
    const replicaEvent = event as ReplicaEvent;
    const { scope, name, rseId } = replicaEvent.data;
    const replicas = context.collection<ReplicaDocument>(replicasCollection);
    const id = replicaId(scope, name, rseId);
    if (replicaEvent.type === 'ReplicaAdded') {
      // The decider adds a replica only where the file has none: its document is new.
      await replicas.create(id, evolveReplica(null, replicaEvent)!);
      await countAddedReplica(context, replicaEvent);
      return;
    }
    let before: ReplicaDocument | null = null;
    await replicas.update(id, (current) => {
      before = current;
      return evolveReplica(current, replicaEvent);
    });
    if (
      before &&
      (replicaEvent.type === 'ReplicaStateChanged' || replicaEvent.type === 'ReplicaDeclaredBad' || replicaEvent.type === 'ReplicaDeclaredTemporarilyUnavailable')
    ) {
      await countTransition(context, replicaEvent, before);
    }
  },
};
