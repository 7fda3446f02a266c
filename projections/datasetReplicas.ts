import { didKey, type DidEvent } from '../domain/did/did.ts';
import { stateAfter, type ReplicaEvent } from '../domain/replica/replica.ts';
import type { CollectionSpec } from '../infra/readstore/readStore.ts';
import type { Projected, Projection } from './projection.ts';
import type { ProjectionContext } from './projectionContext.ts';

/**
 * Dataset replicas (Rucio's `collection_replicas`): one document per dataset and RSE that holds
 * at least one replica of one of the dataset's files, counting them and the AVAILABLE ones.
 * Rucio only has such rows where a rule put the dataset, refreshed later by a daemon; here they
 * follow every replica and every attachment as it happens. The dataset's own `length` and
 * `bytes` are read from the DID read model when answering, so attaching never rewrites every
 * RSE's row.
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

/** What the projection remembers of a file: its datasets and its replicas' availability per RSE. */
export type DatasetReplicaFileDocument = Projected<{
  datasets: string[];
  replicas: Record<string, { rse: string; bytes: number; available: boolean }>;
}>;

export const datasetReplicasCollection: CollectionSpec = {
  name: 'dataset_replicas',
  indexes: [{ fields: ['datasetKey'] }, { fields: ['rse_id', 'datasetKey'] }],
};

export const datasetReplicaFilesCollection: CollectionSpec = { name: 'dataset_replica_files', indexes: [] };

export const datasetReplicaId = (datasetKey: string, rseId: string): string => `${datasetKey} ${rseId}`;

type Change = Readonly<{ replicas: number; available: number; bytes: number }>;

const splitKey = (key: string): { scope: string; name: string } => {
  const colon = key.indexOf(':');
  return { scope: key.slice(0, colon), name: key.slice(colon + 1) };
};

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
      ...(current ?? { _id: id, datasetKey, ...splitKey(datasetKey), rse: replica.rse, rse_id: replica.rseId, created_at: at }),
      replicas,
      available_length: (current?.available_length ?? 0) + change.available,
      available_bytes: (current?.available_bytes ?? 0) + change.bytes,
      updated_at: at,
    } as DatasetReplicaDocument;
  });
};

const files = (context: ProjectionContext) => context.collection<DatasetReplicaFileDocument>(datasetReplicaFilesCollection);

/** Adds (sign 1) or removes (sign -1) every replica of a file from one dataset's rows. */
const countFileIn = async (context: ProjectionContext, file: DatasetReplicaFileDocument | null, datasetKey: string, sign: 1 | -1, at: string) => {
  for (const [rseId, replica] of Object.entries(file?.replicas ?? {})) {
    const change = { replicas: sign, available: replica.available ? sign : 0, bytes: replica.available ? sign * replica.bytes : 0 };
    await adjust(context, datasetKey, { rseId, rse: replica.rse }, change, at);
  }
};

const membership = async (context: ProjectionContext, event: DidEvent): Promise<void> => {
  if (event.type !== 'DidsAttached' && event.type !== 'DidsDetached' && event.type !== 'DidErased') return;
  if (event.data.didType !== 'DATASET') return;
  const datasetKey = didKey(event.data.scope, event.data.name);
  const attach = event.type === 'DidsAttached';
  const at = event.type === 'DidsAttached' ? event.data.attachedAt : event.type === 'DidsDetached' ? event.data.detachedAt : event.data.erasedAt;
  for (const child of event.data.children) {
    const id = didKey(child.scope, child.name);
    const file = await files(context).get(id);
    await countFileIn(context, file, datasetKey, attach ? 1 : -1, at);
    await files(context).update(id, (current) => {
      const datasets = (current?.datasets ?? []).filter((key) => key !== datasetKey);
      if (attach) datasets.push(datasetKey);
      if (datasets.length === 0 && Object.keys(current?.replicas ?? {}).length === 0) return current ? null : undefined;
      return { _id: id, datasets, replicas: current?.replicas ?? {} };
    });
  }
};

const replicaChange = async (context: ProjectionContext, event: ReplicaEvent): Promise<void> => {
  if (event.type === 'ReplicaDeclaredSuspicious' || event.type === 'ReplicaTombstoneSet') return;
  const { scope, name, rse, rseId } = event.data;
  const id = didKey(scope, name);
  const file = await files(context).get(id);
  const before = file?.replicas[rseId];
  if (event.type !== 'ReplicaAdded' && !before) return;
  const after = event.type === 'ReplicaAdded' ? { rse, bytes: event.data.bytes, available: event.data.state === 'AVAILABLE' } : { ...before!, available: stateAfter(event) === 'AVAILABLE' };
  if (before && before.available === after.available) return;
  const at = event.type === 'ReplicaAdded' ? event.data.addedAt : event.type === 'ReplicaStateChanged' ? event.data.changedAt : event.data.declaredAt;
  const change = {
    replicas: before ? 0 : 1,
    available: (after.available ? 1 : 0) - (before?.available ? 1 : 0),
    bytes: (after.available ? after.bytes : 0) - (before?.available ? before.bytes : 0),
  };
  for (const datasetKey of file?.datasets ?? []) await adjust(context, datasetKey, { rseId, rse }, change, at);
  await files(context).update(id, (current) => ({ _id: id, datasets: current?.datasets ?? [], replicas: { ...(current?.replicas ?? {}), [rseId]: after } }));
};

export const datasetReplicasProjection: Projection = {
  name: 'dataset_replicas',
  version: 1,
  collections: [datasetReplicasCollection, datasetReplicaFilesCollection],
  handles: [
    'DidsAttached',
    'DidsDetached',
    'DidErased',
    'ReplicaAdded',
    'ReplicaStateChanged',
    'ReplicaDeclaredBad',
    'ReplicaDeclaredTemporarilyUnavailable',
  ],
  async apply(recorded, context) {
    const event = { type: recorded.type, data: recorded.data } as DidEvent | ReplicaEvent;
    if (event.type.startsWith('Replica')) await replicaChange(context, event as ReplicaEvent);
    else await membership(context, event as DidEvent);
  },
};
