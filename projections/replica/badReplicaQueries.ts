import type { Filter } from '../../infra/readstore/readStore.ts';
import { badReplicasCollection, type BadReplicaDocument, type BadReplicaState } from './badReplicasProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { replicaId, replicasCollection, type ReplicaDocument } from './replicaDocuments.ts';

/** Queries over the bad-replica history: listing by state, the incident summary, suspicious files. */

const rows = (readModels: ReadModels) => readModels.collection<BadReplicaDocument>(badReplicasCollection);

const createdBetween = (
  after?: { value: string; inclusive: boolean },
  before?: { value: string; inclusive: boolean },
): Filter => {
  const range: Record<string, string> = {};
  if (after) range[after.inclusive ? '$gte' : '$gt'] = after.value;
  if (before) range[before.inclusive ? '$lte' : '$lt'] = before.value;
  return Object.keys(range).length > 0 ? { created_at: range } : {};
};

/** Rucio's `list_bad_replicas_status`: rows by state and RSE, created within the bounds, oldest first. */
export const badReplicaRows = (
  readModels: ReadModels,
  options: { state?: BadReplicaState; rseId?: string; youngerThan?: string; olderThan?: string; limit?: number },
): AsyncIterable<BadReplicaDocument> =>
  rows(readModels).find(
    {
      ...(options.state ? { state: options.state } : {}),
      ...(options.rseId ? { rse_id: options.rseId } : {}),
      ...createdBetween(
        options.youngerThan ? { value: options.youngerThan, inclusive: true } : undefined,
        options.olderThan ? { value: options.olderThan, inclusive: true } : undefined,
      ),
    },
    { sort: { created_at: 1 }, ...(options.limit ? { limit: options.limit } : {}) },
  );

export type IncidentSummary = Readonly<{
  rseId: string;
  rse: string;
  day: string;
  reason: string | null;
  counts: Partial<Record<BadReplicaState, number>>;
}>;

/**
 * Rucio's `get_bad_replicas_summary`: declarations counted per RSE, day and reason, by state.
 * `rseIds` restricts to the RSEs of an expression. The groups are few (per day and reason), so
 * they are gathered in memory while the rows stream by.
 */
export const badReplicaSummary = async (
  readModels: ReadModels,
  options: { rseIds?: ReadonlySet<string>; fromDate?: string; toDate?: string },
): Promise<IncidentSummary[]> => {
  const groups = new Map<
    string,
    { rseId: string; rse: string; day: string; reason: string | null; counts: Partial<Record<BadReplicaState, number>> }
  >();
  const filter = createdBetween(
    options.fromDate ? { value: options.fromDate, inclusive: false } : undefined,
    options.toDate ? { value: options.toDate, inclusive: false } : undefined,
  );
  for await (const row of rows(readModels).find(filter, { sort: { created_at: 1 } })) {
    if (options.rseIds && !options.rseIds.has(row.rse_id)) continue;
    const day = row.created_at.slice(0, 10);
    const key = JSON.stringify([row.rse_id, day, row.reason]);
    const group = groups.get(key) ?? { rseId: row.rse_id, rse: row.rse, day, reason: row.reason, counts: {} };
    group.counts[row.state] = (group.counts[row.state] ?? 0) + 1;
    groups.set(key, group);
  }
  return [...groups.values()];
};

export type SuspiciousReplica = Readonly<{
  scope: string;
  name: string;
  rse: string;
  rseId: string;
  count: number;
  createdAt: string;
}>;

/** Declarations that show a replica was dealt with: it is no longer merely suspicious. */
const SETTLED: ReadonlySet<BadReplicaState> = new Set(['BAD', 'RECOVERED', 'DELETED']);

/**
 * Rucio's `get_suspicious_files` as the API asks for it: replicas with more than `nattempts`
 * declarations since `youngerThan`, none of them BAD, RECOVERED or DELETED, that still exist;
 * `createdAt` is the replica's creation.
 */
export const suspiciousReplicas = async (
  readModels: ReadModels,
  options: { rseIds?: ReadonlySet<string>; youngerThan: string; nattempts: number },
): Promise<SuspiciousReplica[]> => {
  const groups = new Map<string, { row: BadReplicaDocument; count: number; settled: boolean }>();
  for await (const row of rows(readModels).find(
    { created_at: { $gte: options.youngerThan } },
    { sort: { created_at: 1 } },
  )) {
    if (options.rseIds && !options.rseIds.has(row.rse_id)) continue;
    const key = `${row.didKey} ${row.rse_id}`;
    const group = groups.get(key) ?? { row, count: 0, settled: false };
    group.count += 1;
    group.settled ||= SETTLED.has(row.state);
    groups.set(key, group);
  }
  const replicas = readModels.collection<ReplicaDocument>(replicasCollection);
  const found: SuspiciousReplica[] = [];
  for (const { row, count, settled } of groups.values()) {
    if (settled || count <= options.nattempts) continue;
    const replica = await replicas.get(replicaId(row.scope, row.name, row.rse_id));
    if (replica)
      found.push({
        scope: row.scope,
        name: row.name,
        rse: row.rse,
        rseId: row.rse_id,
        count,
        createdAt: replica.created_at,
      });
  }
  return found;
};
