import { replicaClimbReason } from '../shared/names.ts';
import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';
import { OBSOLETE_TOMBSTONE, type ReplicaState } from './replica.ts';

/**
 * The reaper (Rucio's daemon, behaviour rule 21), per RSE: how much space the RSE needs, and which
 * unlocked replicas whose tombstone has passed to delete for it, oldest tombstone first. The
 * worker then marks them BEING_DELETED on their files' streams (where a lock refuses it), deletes
 * their files from storage, and records them deleted (replicaDeletion.ts).
 */

/** What an RSE needs freed: bytes, or only obsolete (epoch) replicas; `why` becomes each deletion's reason. */
export type ReaperNeed = Readonly<{ bytes: number; obsoleteOnly: boolean; why: string }>;

/** Rucio's greedy mode asks for a terabyte: every eligible replica goes, a chunk at a time. */
export const GREEDY_BYTES = 1_000_000_000_000;

/** An RSE as its need is computed: limits (`MinFreeSpace`), usage per source, attributes. */
export type ReaperRseFacts = Readonly<{
  limits: Readonly<Record<string, number>>;
  usage: Readonly<Record<string, Readonly<{ used: number | null; free: number | null }>>>;
  attributes: Readonly<Record<string, unknown>>;
}>;

const truthy = (value: unknown): boolean =>
  value === true || (typeof value === 'string' && ['true', '1', 'yes'].includes(value.toLowerCase()));

/**
 * Rucio's `__check_rse_usage`: with `greedyDeletion` (or the daemon's greedy flag) a terabyte;
 * otherwise `MinFreeSpace` minus the free space, free being total (`source_for_total_space`,
 * default `storage`) minus used (`source_for_used_space`). Without those sources, or with
 * enough free space, only obsolete replicas go. `measured` stands in for a `storage` source
 * nobody reported: what the storage itself says (a posix RSE's file system).
 */
export const reaperNeed = (
  rse: ReaperRseFacts,
  options: Readonly<{ greedy: boolean; measured?: Readonly<{ total: number; used: number }> | undefined }>,
): ReaperNeed => {
  if (options.greedy || truthy(rse.attributes.greedyDeletion))
    return { bytes: GREEDY_BYTES, obsoleteOnly: false, why: 'greedy deletion' };
  const totalSource = String(rse.attributes.source_for_total_space ?? 'storage');
  const usedSource = String(rse.attributes.source_for_used_space ?? 'storage');
  const reported = (source: string) => rse.usage[source];
  const measured = (source: string) => (source === 'storage' && !reported(source) ? options.measured : undefined);
  const totalOf = (source: string): number | undefined => {
    const usage = reported(source);
    if (usage) return (usage.used ?? 0) + (usage.free ?? 0);
    return measured(source)?.total;
  };
  const usedOf = (source: string): number | undefined => {
    const usage = reported(source);
    if (usage) return usage.used ?? 0;
    return measured(source)?.used;
  };
  const total = totalOf(totalSource);
  const used = usedOf(usedSource);
  if (total === undefined || used === undefined) return { bytes: 0, obsoleteOnly: true, why: 'obsolete' };
  const minFree = rse.limits.MinFreeSpace ?? 0;
  const needed = minFree ? minFree - (total - used) : 0;
  return needed > 0
    ? { bytes: needed, obsoleteOnly: false, why: `space needed: ${needed} bytes below MinFreeSpace` }
    : { bytes: 0, obsoleteOnly: true, why: 'obsolete' };
};

/** A replica the read models show as a candidate, with what they show of the file's other replicas. */
export type ReaperCandidate = Readonly<{
  scope: string;
  name: string;
  rse: string;
  rseId: string;
  bytes: number;
  /** The stored path (non-deterministic RSEs). */
  path: string | null;
  state: ReplicaState;
  tombstone: string | null;
  updatedAt: string;
  lockCount: number;
  /** Another replica of the file is AVAILABLE. */
  availableElsewhere: boolean;
  /** Another replica of the file waits for a transfer (COPYING). */
  transferPending: boolean;
}>;

export type ReaperTick = Readonly<{
  now: string;
  need: ReaperNeed;
  /** Bytes this cycle already freed on the RSE (UNAVAILABLE replicas count nothing, as in Rucio). */
  freedSoFar: number;
  /** BEING_DELETED replicas younger than this are another deletion's, still under way. */
  delaySeconds: number;
  dryRun: boolean;
}>;

export type DeleteReplica = WorkflowOutput<
  'DeleteReplica',
  { scope: string; name: string; rse: string; rseId: string; bytes: number; reason: string }
>;
export type ReaperOutput = DeleteReplica | Skipped;

/** Why a candidate may not go now, or undefined when it may (the file's stream decides again). */
export const candidateRefusal = (
  candidate: ReaperCandidate,
  tick: Pick<ReaperTick, 'now' | 'need' | 'delaySeconds'>,
): string | undefined => {
  // Stored before names were checked: its file would be looked for outside the RSE's prefix.
  const climb = replicaClimbReason(candidate.scope, candidate.name, candidate.path);
  if (climb) return climb;
  if (candidate.lockCount > 0) return 'a replication rule locks it';
  if (candidate.tombstone === null) return 'it has no tombstone';
  if (tick.need.obsoleteOnly ? candidate.tombstone !== OBSOLETE_TOMBSTONE : candidate.tombstone >= tick.now)
    return `its tombstone ${candidate.tombstone} has not passed`;
  if (candidate.state === 'BEING_DELETED') {
    const since = Date.parse(tick.now) - Date.parse(candidate.updatedAt);
    if (since < tick.delaySeconds * 1000) return `another deletion started ${Math.round(since / 1000)} s ago`;
  } else if (candidate.state !== 'AVAILABLE' && candidate.state !== 'UNAVAILABLE' && candidate.state !== 'BAD')
    return `it is ${candidate.state}`;
  if (candidate.transferPending && candidate.state === 'AVAILABLE') return 'it may be the source of a pending transfer';
  if (candidate.transferPending && !candidate.availableElsewhere)
    return 'it is the last copy of a file whose transfer is pending';
  return undefined;
};

const byTombstone = (a: ReaperCandidate, b: ReaperCandidate): number =>
  (a.tombstone ?? '') < (b.tombstone ?? '')
    ? -1
    : (a.tombstone ?? '') > (b.tombstone ?? '')
      ? 1
      : a.updatedAt < b.updatedAt
        ? -1
        : a.updatedAt > b.updatedAt
          ? 1
          : 0;

/**
 * Rucio's `list_and_mark_unlocked_replicas` over one page of candidates: oldest tombstone first,
 * until the freed bytes exceed the need (obsolete-only mode takes every obsolete replica). A dry
 * run reports each replica it would have deleted.
 */
export const reaper: Workflow<ReaperTick, Readonly<{ candidates: readonly ReaperCandidate[] }>, ReaperOutput> = {
  name: 'reaper',
  decide: (tick, { candidates }) => {
    const outputs: ReaperOutput[] = [];
    let freed = tick.freedSoFar;
    for (const candidate of [...candidates].sort(byTombstone)) {
      if (!tick.need.obsoleteOnly && freed > tick.need.bytes) break;
      const what = `${candidate.scope}:${candidate.name} on ${candidate.rse}`;
      const refusal = candidateRefusal(candidate, tick);
      if (refusal) {
        outputs.push({ type: 'Skipped', data: { what, reason: refusal } });
        continue;
      }
      if (candidate.state !== 'UNAVAILABLE') freed += candidate.bytes;
      if (tick.dryRun) outputs.push({ type: 'Skipped', data: { what, reason: `dry run (${tick.need.why})` } });
      else {
        const { scope, name, rse, rseId, bytes } = candidate;
        outputs.push({ type: 'DeleteReplica', data: { scope, name, rse, rseId, bytes, reason: tick.need.why } });
      }
    }
    return outputs;
  },
};
