import { didKey } from '../../domain/did/did.ts';
import { datasetReplicasCollection, type DatasetReplicaDocument } from './datasetReplicas.ts';
import { didContentsCollection, edgesOf, type ContentDocument } from '../did/didContentsProjection.ts';
import { didsCollection, type DidDocument } from '../did/didsProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { BY_FILE, replicasCollection, type ReplicaDocument } from './replicaDocuments.ts';
import { rsesCollection, type RseDocument } from '../rse/rsesProjection.ts';

/**
 * Dataset replicas as Rucio lists them: the stored rows per dataset and RSE (`deep=false`), or
 * computed from the AVAILABLE file replicas at request time (`deep=true`). Only datasets have
 * dataset replicas; RSEs that are deleted are left out.
 */

export type DatasetReplica = Readonly<{
  scope: string;
  name: string;
  rse: string;
  rse_id: string;
  bytes: number;
  length: number;
  available_bytes: number;
  available_length: number;
  createdAt: string;
  updatedAt: string;
  accessedAt: string | null;
}>;

const PAGE = 500;

const liveRseIds = async (readModels: ReadModels): Promise<Set<string>> =>
  new Set(
    (await readModels.collection<RseDocument>(rsesCollection).find({ deleted: false }).toArray()).map((rse) => rse.id),
  );

/** A stored row with the dataset's own length and bytes. */
const withTotals = (row: DatasetReplicaDocument, dataset: DidDocument): DatasetReplica => ({
  scope: row.scope,
  name: row.name,
  rse: row.rse,
  rse_id: row.rse_id,
  bytes: Number(dataset.bytes ?? 0),
  length: Number(dataset.length ?? 0),
  available_bytes: row.available_bytes,
  available_length: row.available_length,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  accessedAt: null,
});

/** The stored rows of some datasets (a container or file among them has none). */
export async function* storedDatasetReplicas(
  readModels: ReadModels,
  datasets: readonly DidDocument[],
): AsyncGenerator<DatasetReplica> {
  const live = await liveRseIds(readModels);
  const rows = readModels.collection<DatasetReplicaDocument>(datasetReplicasCollection);
  for (const dataset of datasets) {
    if (dataset.did_type !== 'DATASET') continue;
    for await (const row of rows.find({ datasetKey: dataset._id }, { sort: { datasetKey: 1, _id: 1 } })) {
      if (live.has(row.rse_id)) yield withTotals(row, dataset);
    }
  }
}

/** The stored rows on one RSE (Rucio's `list_datasets_per_rse`), in dataset order. */
export async function* datasetReplicasOnRse(readModels: ReadModels, rseId: string): AsyncGenerator<DatasetReplica> {
  const dids = readModels.collection<DidDocument>(didsCollection);
  let page: DatasetReplicaDocument[] = [];
  const flush = async function* () {
    const datasets = new Map(
      (await dids.find({ _id: { $in: page.map((row) => row.datasetKey) } }).toArray()).map((did) => [did._id, did]),
    );
    for (const row of page) {
      const dataset = datasets.get(row.datasetKey);
      if (dataset) yield withTotals(row, dataset);
    }
    page = [];
  };
  for await (const row of readModels
    .collection<DatasetReplicaDocument>(datasetReplicasCollection)
    .find({ rse_id: rseId }, { sort: { rse_id: 1, datasetKey: 1 } })) {
    page.push(row);
    if (page.length === PAGE) yield* flush();
  }
  if (page.length > 0) yield* flush();
}

/**
 * `deep=true`: per RSE, the AVAILABLE replicas of the dataset's files, against the dataset's
 * content now (its count and summed file sizes). Memory holds one page and one entry per RSE.
 */
export const deepDatasetReplicas = async (readModels: ReadModels, dataset: DidDocument): Promise<DatasetReplica[]> => {
  if (dataset.did_type !== 'DATASET') return [];
  const live = await liveRseIds(readModels);
  const replicas = readModels.collection<ReplicaDocument>(replicasCollection);
  const perRse = new Map<
    string,
    { rse: string; count: number; bytes: number; createdAt: string; updatedAt: string; accessedAt: string | null }
  >();
  let length = 0;
  let bytes = 0;
  const count = async (keys: string[]) => {
    for await (const replica of replicas.find({ didKey: { $in: keys } }, { sort: BY_FILE })) {
      if (replica.state !== 'AVAILABLE' || !live.has(replica.rse_id)) continue;
      const entry = perRse.get(replica.rse_id) ?? {
        rse: replica.rse,
        count: 0,
        bytes: 0,
        createdAt: replica.created_at,
        updatedAt: replica.updated_at,
        accessedAt: null,
      };
      entry.count += 1;
      entry.bytes += replica.bytes;
      if (replica.created_at < entry.createdAt) entry.createdAt = replica.created_at;
      if (replica.updated_at > entry.updatedAt) entry.updatedAt = replica.updated_at;
      perRse.set(replica.rse_id, entry);
    }
  };
  let page: string[] = [];
  for await (const edge of readModels
    .collection<ContentDocument>(didContentsCollection)
    .find(edgesOf(didKey(dataset.scope, dataset.name)))) {
    length += 1;
    bytes += edge.bytes ?? 0;
    page.push(edge.childKey);
    if (page.length === PAGE) {
      await count(page);
      page = [];
    }
  }
  if (page.length > 0) await count(page);
  return [...perRse].map(([rseId, entry]) => ({
    scope: dataset.scope,
    name: dataset.name,
    rse: entry.rse,
    rse_id: rseId,
    bytes,
    length,
    available_bytes: entry.bytes,
    available_length: entry.count,
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
    accessedAt: entry.accessedAt,
  }));
};
