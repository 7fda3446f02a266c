import type { DidCreated } from '../../domain/did/did.ts';
import {
  isTransition,
  replicasAddedWith,
  replicasDeletedWith,
  type ReplicaEvent,
} from '../../domain/replica/replica.ts';
import {
  countAddedReplica,
  countDeletedReplica,
  countMembership,
  countTransition,
  datasetParentsCollection,
  datasetReplicasCollection,
  type DatasetMembershipEvent,
} from './datasetReplicas.ts';
import type { EventsOf, Projection } from '../projection.ts';
import type { ProjectionContext } from '../runtime/projectionContext.ts';
import { evolveReplica, replicaId, replicasCollection, type ReplicaDocument } from './replicaDocuments.ts';

/**
 * The replica projection: one document per replica, and the dataset replicas counted from them.
 * Both live in one projection because an attachment counts its files' replicas by reading them:
 * a projection may read only what it writes itself (a rebuilt projection runs ahead of or behind
 * the others).
 */
type ReplicaProjectionEvent =
  | EventsOf<
      ReplicaEvent,
      | 'ReplicaAdded'
      | 'ReplicaStateChanged'
      | 'ReplicaDeclaredBad'
      | 'ReplicaDeclaredTemporarilyUnavailable'
      | 'ReplicaTombstoneSet'
      | 'ReplicaLocked'
      | 'ReplicaUnlocked'
      | 'ReplicaDeletionStarted'
      | 'ReplicaDeleted'
      | 'ReplicaLost'
      | 'ReplicaAccessed'
    >
  | DatasetMembershipEvent
  | DidCreated;

export const replicasProjection: Projection<ReplicaProjectionEvent> = {
  name: 'replicas',
  version: 2,
  collections: [replicasCollection, datasetReplicasCollection, datasetParentsCollection],
  handles: {
    ReplicaAdded: true,
    ReplicaStateChanged: true,
    ReplicaDeclaredBad: true,
    ReplicaDeclaredTemporarilyUnavailable: true,
    ReplicaTombstoneSet: true,
    ReplicaLocked: true,
    ReplicaUnlocked: true,
    ReplicaDeletionStarted: true,
    ReplicaDeleted: true,
    ReplicaLost: true,
    ReplicaAccessed: true,
    DidsAttached: true,
    DidsDetached: true,
    DidErased: true,
    // A file registered with replicas carries them in its DidCreated.
    DidCreated: true,
  },
  async apply(event, context) {
    if (event.type === 'DidsAttached' || event.type === 'DidsDetached' || event.type === 'DidErased') {
      // A file the reaper erased carries its last replicas' deletions, which come first.
      if (event.type === 'DidErased')
        for (const deleted of replicasDeletedWith(event)) await applyToReplica(deleted, context);
      await countMembership(context, event);
      return;
    }
    if (event.type === 'DidCreated' || event.type === 'ReplicaAdded') {
      const replicas = context.collection<ReplicaDocument>(replicasCollection);
      for (const added of event.type === 'DidCreated' ? replicasAddedWith(event) : [event]) {
        // The decider adds a replica only where the file has none: its document is new.
        const { scope, name, rseId } = added.data;
        await replicas.create(replicaId(scope, name, rseId), evolveReplica(null, added)!);
        await countAddedReplica(context, added);
      }
      return;
    }
    await applyToReplica(event, context);
  },
};

/** A change of one existing replica: its document, and the dataset rows it counts in. */
const applyToReplica = async (
  event: Exclude<ReplicaEvent, { type: 'ReplicaAdded' }>,
  context: ProjectionContext,
): Promise<void> => {
  const { scope, name, rseId } = event.data;
  let before: ReplicaDocument | null = null;
  await context.collection<ReplicaDocument>(replicasCollection).update(replicaId(scope, name, rseId), (current) => {
    before = current;
    return evolveReplica(current, event);
  });
  if (!before) return;
  if (event.type === 'ReplicaDeleted') await countDeletedReplica(context, event, before);
  else if (isTransition(event)) await countTransition(context, event, before);
};
