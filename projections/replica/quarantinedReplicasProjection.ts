import type { QuarantineEvent } from '../../domain/quarantine/quarantine.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';

/** Dark files in quarantine, one document per RSE and path (what the dark reaper works through). */
export type QuarantinedReplicaDocument = Projected<{
  rse: string;
  rse_id: string;
  path: string;
  scope: string | null;
  name: string | null;
  bytes: number | null;
  created_at: string;
}>;

/** Entries the dark reaper is done with (Rucio's `quarantined_replicas_history`), with what it did. */
export type QuarantinedReplicaHistoryDocument = QuarantinedReplicaDocument & { outcome: string; deleted_at: string };

export const quarantinedReplicasCollection: CollectionSpec = {
  name: 'quarantined_replicas',
  indexes: [{ fields: ['rse_id', 'path'] }],
};
export const quarantinedReplicasHistoryCollection: CollectionSpec = {
  name: 'quarantined_replicas_history',
  // Kept for operators; nothing queries it yet.
  indexes: [],
};

export const quarantinedReplicasProjection: Projection<QuarantineEvent> = {
  name: 'quarantined_replicas',
  version: 1,
  collections: [quarantinedReplicasCollection, quarantinedReplicasHistoryCollection],
  handles: { ReplicasQuarantined: true, QuarantinedReplicasRemoved: true },
  async apply(event, context) {
    const current = context.collection<QuarantinedReplicaDocument>(quarantinedReplicasCollection);
    if (event.type === 'ReplicasQuarantined') {
      const { rse, rseId, replicas, quarantinedAt } = event.data;
      for (const replica of replicas) {
        const id = `${rseId} ${replica.path}`;
        await current.update(id, () => ({ _id: id, rse, rse_id: rseId, ...replica, created_at: quarantinedAt }));
      }
      return;
    }
    const { rse, rseId, replicas, removedAt } = event.data;
    const history = context.collection<QuarantinedReplicaHistoryDocument>(quarantinedReplicasHistoryCollection);
    for (const { outcome, ...replica } of replicas) {
      const id = `${rseId} ${replica.path}`;
      let createdAt = removedAt;
      await current.update(id, (document) => {
        if (document) createdAt = document.created_at;
        return document ? null : undefined;
      });
      const historyId = `${id} ${String(context.position).padStart(20, '0')}`;
      await history.update(historyId, () => ({
        _id: historyId,
        rse,
        rse_id: rseId,
        ...replica,
        created_at: createdAt,
        outcome,
        deleted_at: removedAt,
      }));
    }
  },
};
