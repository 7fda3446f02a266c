import { didKey, type DidRef } from '../../domain/did/did.ts';
import { OBSOLETE_TOMBSTONE } from '../../domain/replica/replica.ts';
import type { BadReplica } from '../../domain/replica/necromancer.ts';
import type { ReaperCandidate } from '../../domain/replica/reaper.ts';
import type { SuspiciousReplica } from '../../domain/replica/suspiciousReplicaRecoverer.ts';
import type { TemporaryUnavailability } from '../../domain/replica/temporaryUnavailabilityExpiry.ts';
import type { Filter } from '../../infra/readstore/readStore.ts';
import { didsNamed } from '../did/didQueries.ts';
import { rsesCollection, type RseDocument } from '../rse/rsesProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { badReplicasCollection, type BadReplicaDocument } from './badReplicasProjection.ts';
import { quarantinedReplicasCollection, type QuarantinedReplicaDocument } from './quarantinedReplicasProjection.ts';
import { BY_FILE, replicasCollection, type ReplicaDocument } from './replicaDocuments.ts';

/**
 * What the deletion and recovery daemons read (the reaper, the necromancer,
 * minos-temporary-expiration, the suspicious-replica-recoverer, the dark reaper), in the shapes
 * their workflows take. The files' streams decide again on what they hold: these only choose.
 */

const replicas = (readModels: ReadModels) => readModels.collection<ReplicaDocument>(replicasCollection);

/** The RSEs that are not deleted, by name. */
export const activeRses = (readModels: ReadModels): Promise<RseDocument[]> =>
  readModels
    .collection<RseDocument>(rsesCollection)
    .find({ deleted: false }, { sort: { deleted: 1, rse: 1 } })
    .toArray();

/** Where a page of candidates ended: the next page starts after it. */
export type CandidateMark = Readonly<{ tombstone: string; updatedAt: string; id: string }>;

const afterMark = (mark: CandidateMark | undefined): Filter =>
  mark
    ? {
        $or: [
          { tombstone: { $gt: mark.tombstone } },
          { tombstone: mark.tombstone, updated_at: { $gt: mark.updatedAt } },
          { tombstone: mark.tombstone, updated_at: mark.updatedAt, _id: { $gt: mark.id } },
        ],
      }
    : {};

/**
 * Rucio's candidate query of `list_and_mark_unlocked_replicas`, a page at a time: the RSE's
 * unlocked replicas whose tombstone has passed (only obsolete ones in `obsoleteOnly`), oldest
 * tombstone first, each with what the file's other replicas show (an AVAILABLE copy, a copy
 * waiting for its transfer).
 */
export const deletionCandidates = async (
  readModels: ReadModels,
  rseId: string,
  options: Readonly<{ now: string; obsoleteOnly: boolean; limit: number; after?: CandidateMark | undefined }>,
): Promise<{ candidates: ReaperCandidate[]; mark: CandidateMark | undefined }> => {
  const tombstone = options.obsoleteOnly ? { $eq: OBSOLETE_TOMBSTONE } : { $lt: options.now };
  const page = await replicas(readModels)
    .find(
      { rse_id: rseId, lock_cnt: 0, tombstone, ...afterMark(options.after) },
      { sort: { rse_id: 1, lock_cnt: 1, tombstone: 1, updated_at: 1, _id: 1 }, limit: options.limit },
    )
    .toArray();
  const last = page[page.length - 1];
  if (!last) return { candidates: [], mark: undefined };
  const others = new Map<string, ReplicaDocument[]>();
  for (const replica of await replicas(readModels)
    .find({ didKey: { $in: page.map((document) => document.didKey) } }, { sort: BY_FILE })
    .toArray()) {
    if (replica.rse_id !== rseId) others.set(replica.didKey, [...(others.get(replica.didKey) ?? []), replica]);
  }
  const candidates = page.map((document): ReaperCandidate => {
    const elsewhere = others.get(document.didKey) ?? [];
    return {
      scope: document.scope,
      name: document.name,
      rse: document.rse,
      rseId: document.rse_id,
      bytes: document.bytes,
      path: document.path,
      state: document.state,
      tombstone: document.tombstone,
      updatedAt: document.updated_at,
      lockCount: document.lock_cnt,
      availableElsewhere: elsewhere.some((replica) => replica.state === 'AVAILABLE'),
      transferPending: elsewhere.some((replica) => replica.state === 'COPYING'),
    };
  });
  return { candidates, mark: { tombstone: last.tombstone!, updatedAt: last.updated_at, id: last._id } };
};

/** Replicas in state BAD, oldest change first (Rucio's `list_bad_replicas`). */
export const badReplicas = async (readModels: ReadModels, limit: number): Promise<BadReplica[]> =>
  (
    await replicas(readModels)
      .find({ bad_since: { $gte: '' } }, { sort: { bad_since: 1 }, limit })
      .toArray()
  ).map((document) => ({
    scope: document.scope,
    name: document.name,
    rse: document.rse,
    rseId: document.rse_id,
    since: document.updated_at,
  }));

const badRows = (readModels: ReadModels) => readModels.collection<BadReplicaDocument>(badReplicasCollection);

/** Temporary unavailabilities whose expiry has passed (Rucio's `list_expired_temporary_unavailable_replicas`). */
export const expiredTemporaryUnavailabilities = async (
  readModels: ReadModels,
  now: string,
  limit: number,
): Promise<TemporaryUnavailability[]> =>
  (
    await badRows(readModels)
      .find({ state: 'TEMPORARY_UNAVAILABLE', expires_at: { $lt: now } }, { sort: { state: 1, created_at: 1 }, limit })
      .toArray()
  ).map((row) => ({
    scope: row.scope,
    name: row.name,
    rse: row.rse,
    rseId: row.rse_id,
    expiresAt: row.expires_at!,
  }));

/** States that show a replica was dealt with in the window (Rucio's `exclude_states` B, R, D, L, T). */
const SETTLED = new Set(['BAD', 'RECOVERED', 'DELETED', 'LOST', 'TEMPORARY_UNAVAILABLE']);

/**
 * Rucio's `get_suspicious_files(is_suspicious=True)`: replicas of the given RSEs declared
 * SUSPICIOUS more than `nattempts` times since `youngerThan`, without a BAD, RECOVERED, DELETED,
 * LOST or TEMPORARY_UNAVAILABLE row in that window, that still exist; with whether another
 * AVAILABLE copy exists, the reasons given, and the file's datatype.
 */
export const suspiciousForRecovery = async (
  readModels: ReadModels,
  options: Readonly<{ rseIds: ReadonlySet<string>; youngerThan: string; nattempts: number }>,
): Promise<SuspiciousReplica[]> => {
  if (options.rseIds.size === 0) return [];
  const groups = new Map<string, { row: BadReplicaDocument; count: number; settled: boolean; reasons: Set<string> }>();
  for await (const row of badRows(readModels).find(
    { created_at: { $gte: options.youngerThan } },
    { sort: { created_at: 1 } },
  )) {
    if (!options.rseIds.has(row.rse_id)) continue;
    const key = `${row.didKey} ${row.rse_id}`;
    const group = groups.get(key) ?? { row, count: 0, settled: false, reasons: new Set<string>() };
    if (row.state === 'SUSPICIOUS') {
      group.count += 1;
      if (row.reason) group.reasons.add(row.reason);
    }
    group.settled ||= SETTLED.has(row.state);
    groups.set(key, group);
  }
  const chosen = [...groups.values()].filter((group) => !group.settled && group.count > options.nattempts);
  if (chosen.length === 0) return [];
  const files: DidRef[] = chosen.map(({ row }) => ({ scope: row.scope, name: row.name }));
  const copies = await replicas(readModels)
    .find({ didKey: { $in: files.map((file) => didKey(file.scope, file.name)) } }, { sort: BY_FILE })
    .toArray();
  const datatypes = new Map(
    (await didsNamed(readModels, files)).map((did) => [
      did._id,
      typeof did.datatype === 'string' ? did.datatype : null,
    ]),
  );
  return chosen.flatMap(({ row, count, reasons }): SuspiciousReplica[] => {
    const ofFile = copies.filter((copy) => copy.didKey === row.didKey);
    if (!ofFile.some((copy) => copy.rse_id === row.rse_id)) return [];
    return [
      {
        scope: row.scope,
        name: row.name,
        rse: row.rse,
        rseId: row.rse_id,
        count,
        availableElsewhere: ofFile.some((copy) => copy.rse_id !== row.rse_id && copy.state === 'AVAILABLE'),
        reasons: [...reasons],
        datatype: datatypes.get(row.didKey) ?? null,
      },
    ];
  });
};

/** The quarantined entries of an RSE, a page at a time by path. */
export const quarantinedReplicasOf = (
  readModels: ReadModels,
  rseId: string,
  limit: number,
): Promise<QuarantinedReplicaDocument[]> =>
  readModels
    .collection<QuarantinedReplicaDocument>(quarantinedReplicasCollection)
    .find({ rse_id: rseId }, { sort: { rse_id: 1, path: 1 }, limit })
    .toArray();
