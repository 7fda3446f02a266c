import { didFromKey, didKey, type DidEvent } from '../../domain/did/did.ts';
import { stateAfter, transitionTime, type ReplicaEvent, type ReplicaTransition } from '../../domain/replica/replica.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { EventsOf, Projected } from '../projection.ts';
import type { ProjectionContext } from '../runtime/projectionContext.ts';
import { BY_FILE, replicasCollection, type ReplicaDocument } from './replicaDocuments.ts';

/**
 * Dataset replicas (Rucio's `collection_replicas`): one document per dataset and RSE that holds
 * at least one replica of one of the dataset's files, counting them and the AVAILABLE ones.
 * Rucio only has such rows where a rule put the dataset, refreshed later by a daemon; here they
 * follow every replica and every attachment as it happens. They are kept by the replicas
 * projection (projections/replicaProjection.ts): an attachment reads its files' replicas from
 * the same projection's collection. The dataset's own `length` and `bytes` are read from the DID
 * read model when answering, so attaching never rewrites every RSE's row.
 */
export type DatasetReplicaDocument = Projected<{
  datasetKey: string;
  scope: string;
  name: string;
  rse: string;
  rse_id: string;
  /** Replicas of the dataset's files on the RSE, in any state. */
  replicas: number;
  available_length: number;
  available_bytes: number;
  created_at: string;
  updated_at: string;
}>;

/** The datasets a file belongs to, which replica events need to know. */
export type DatasetParentsDocument = Projected<{ datasets: string[] }>;

export const datasetReplicasCollection: CollectionSpec = {
  name: 'dataset_replicas',
  indexes: [{ fields: ['datasetKey'] }, { fields: ['rse_id', 'datasetKey'] }],
};

export const datasetParentsCollection: CollectionSpec = { name: 'dataset_parents', indexes: [] };

export const datasetReplicaId = (datasetKey: string, rseId: string): string => `${datasetKey} ${rseId}`;

type Change = Readonly<{ replicas: number; available: number; bytes: number }>;

/** Adds `change` to one dataset's row on one RSE; a row without replicas left disappears. */
const adjust = async (
  context: ProjectionContext,
  datasetKey: string,
  replica: { rseId: string; rse: string },
  change: Change,
  at: string,
): Promise<void> => {
  const id = datasetReplicaId(datasetKey, replica.rseId);
  await context.collection<DatasetReplicaDocument>(datasetReplicasCollection).update(id, (current) => {
    const replicas = (current?.replicas ?? 0) + change.replicas;
    if (replicas <= 0) return current ? null : undefined;
    return {
      ...(current ?? {
        _id: id,
        datasetKey,
        ...didFromKey(datasetKey),
        rse: replica.rse,
        rse_id: replica.rseId,
        created_at: at,
      }),
      replicas,
      available_length: (current?.available_length ?? 0) + change.available,
      available_bytes: (current?.available_bytes ?? 0) + change.bytes,
      updated_at: at,
    };
  });
};

const parents = (context: ProjectionContext) => context.collection<DatasetParentsDocument>(datasetParentsCollection);

/** A new replica counts in every dataset its file belongs to. */
export const countAddedReplica = async (
  context: ProjectionContext,
  event: Extract<ReplicaEvent, { type: 'ReplicaAdded' }>,
): Promise<void> => {
  const { scope, name, rse, rseId, bytes, state, addedAt } = event.data;
  const available = state === 'AVAILABLE';
  const change = { replicas: 1, available: available ? 1 : 0, bytes: available ? bytes : 0 };
  for (const datasetKey of (await parents(context).get(didKey(scope, name)))?.datasets ?? [])
    await adjust(context, datasetKey, { rseId, rse }, change, addedAt);
};

/** A replica becoming (un)available moves its file in or out of its datasets' available counts. */
export const countTransition = async (
  context: ProjectionContext,
  event: ReplicaTransition,
  replica: ReplicaDocument,
): Promise<void> => {
  const before = event.data.previousState === 'AVAILABLE';
  const after = stateAfter(event) === 'AVAILABLE';
  if (before === after) return;
  const sign = after ? 1 : -1;
  const at = transitionTime(event);
  const { scope, name, rse, rseId } = event.data;
  for (const datasetKey of (await parents(context).get(didKey(scope, name)))?.datasets ?? []) {
    await adjust(
      context,
      datasetKey,
      { rseId, rse },
      { replicas: 0, available: sign, bytes: sign * replica.bytes },
      at,
    );
  }
};

/** A replica deleted leaves its datasets' rows (it counted as available only if it still was). */
export const countDeletedReplica = async (
  context: ProjectionContext,
  event: Extract<ReplicaEvent, { type: 'ReplicaDeleted' }>,
  replica: ReplicaDocument,
): Promise<void> => {
  const { scope, name, rse, rseId, deletedAt } = event.data;
  const available = replica.state === 'AVAILABLE';
  const change = { replicas: -1, available: available ? -1 : 0, bytes: available ? -replica.bytes : 0 };
  for (const datasetKey of (await parents(context).get(didKey(scope, name)))?.datasets ?? [])
    await adjust(context, datasetKey, { rseId, rse }, change, deletedAt);
};

const PAGE = 500;

/** The DID events that change which files a dataset holds. */
export type DatasetMembershipEvent = EventsOf<DidEvent, 'DidsAttached' | 'DidsDetached' | 'DidErased'>;

/**
 * Files attached to (or detached from, or erased with) a dataset bring their replicas into (out
 * of) its rows; their replicas are read page by page from the replicas collection.
 */
export const countMembership = async (context: ProjectionContext, event: DatasetMembershipEvent): Promise<void> => {
  if (event.data.didType !== 'DATASET') return;
  const datasetKey = didKey(event.data.scope, event.data.name);
  const sign = event.type === 'DidsAttached' ? 1 : -1;
  const at =
    event.type === 'DidsAttached'
      ? event.data.attachedAt
      : event.type === 'DidsDetached'
        ? event.data.detachedAt
        : event.data.erasedAt;
  const keys = event.data.children.map((child) => didKey(child.scope, child.name));
  const replicas = context.collection<ReplicaDocument>(replicasCollection);
  for (let start = 0; start < keys.length; start += PAGE) {
    for (const replica of await replicas.find(
      { didKey: { $in: keys.slice(start, start + PAGE) } },
      { sort: BY_FILE },
    )) {
      const available = replica.state === 'AVAILABLE';
      const change = { replicas: sign, available: available ? sign : 0, bytes: available ? sign * replica.bytes : 0 };
      await adjust(context, datasetKey, { rseId: replica.rse_id, rse: replica.rse }, change, at);
    }
  }
  for (const key of keys) {
    await parents(context).update(key, (current) => {
      const datasets = (current?.datasets ?? []).filter((dataset) => dataset !== datasetKey);
      if (sign > 0) datasets.push(datasetKey);
      if (datasets.length === 0) return current ? null : undefined;
      return { _id: key, datasets };
    });
  }
};
