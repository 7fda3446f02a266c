import type { QuarantineEvent } from '../../domain/quarantine/quarantine.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';

/** Dark files in quarantine, one document per RSE and path (what the dark reaper will work through). */
export type QuarantinedReplicaDocument = Projected<{
  rse: string;
  rse_id: string;
  path: string;
  scope: string | null;
  name: string | null;
  bytes: number | null;
  created_at: string;
}>;

export const quarantinedReplicasCollection: CollectionSpec = { name: 'quarantined_replicas', indexes: [{ fields: ['rse_id', 'path'] }] };

export const quarantinedReplicasProjection: Projection<QuarantineEvent> = {
  name: 'quarantined_replicas',
  version: 1,
  collections: [quarantinedReplicasCollection],
  handles: { ReplicasQuarantined: true },
  async apply(event, context) {
    const { rse, rseId, replicas, quarantinedAt } = event.data;
    for (const replica of replicas) {
      const id = `${rseId} ${replica.path}`;
      await context
        .collection<QuarantinedReplicaDocument>(quarantinedReplicasCollection)
        .update(id, () => ({ _id: id, rse, rse_id: rseId, ...replica, created_at: quarantinedAt }));
    }
  },
};
