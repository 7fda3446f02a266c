import {
  recordReplicaDeletions,
  startReplicaDeletions,
  stillBeingDeleted,
  type DeletionTarget,
  type RecordedDeletion,
} from '../../commands/replica/replicaDeletion.ts';
import { settingValue, SETTINGS, type ConfigSections } from '../../domain/config/settings.ts';
import { didKey } from '../../domain/did/did.ts';
import {
  reaper,
  reaperNeed,
  type DeleteReplica,
  type ReaperCandidate,
  type ReaperNeed,
} from '../../domain/replica/reaper.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import { activeRses, deletionCandidates, type CandidateMark } from '../../projections/replica/deletionQueries.ts';
import type { RseDocument } from '../../projections/rse/rses.ts';
import { skippedOf, stepOf, type JobTrigger, type ScheduledRole, type SkippedItem } from '../role.ts';
import { contentDigest } from '../stepCause.ts';
import type { WorkerContext } from '../workerContext.ts';
import { rseStorage, type RseStorage } from './rseStorage.ts';

/**
 * The reaper (Rucio's daemon, behaviour rule 21) on a schedule (`reaper.interval`, 10 s). Each
 * cycle works through every RSE that may delete (`availability_delete`, a delete protocol this
 * process can speak, not excluded after storage errors), a chunk per RSE in turn, until each has
 * no candidate left or its need is met:
 *
 * 1. the need: space below `MinFreeSpace` (from the `storage` usage, or the posix file system), a
 *    terabyte for greedy RSEs, otherwise only obsolete replicas;
 * 2. the candidates (unlocked, tombstone passed, not a source or last copy of a pending transfer),
 *    chosen by the workflow, are marked BEING_DELETED on their files' streams in one step (a lock
 *    refuses it);
 * 3. each file still BEING_DELETED is deleted from storage ("not found" counts as deleted);
 * 4. the deletions are recorded in one step with the cleanup (files left without replicas and
 *    collections emptied are deleted), which a lock taken meanwhile refuses for its replica: that
 *    replica is COPYING again and its transfer brings the file back.
 *
 * A file whose deletion failed keeps its replica, BEING_DELETED, for a later cycle; storage errors
 * of access (`reaper.auto_exclude_threshold` of them) leave the RSE alone for
 * `reaper.auto_exclude_timeout` seconds. Every deletion is an event naming the reaper and why.
 */

const DAEMON = 'reaper';

/** Files deleted on storage between two checks of their streams: a lock taken meanwhile is seen at the next batch. */
const STORAGE_BATCH = 100;

/** RSEs excluded after storage errors, by RSE id: until when and after how many errors. In this process only, as Rucio's cache. */
const excluded = new Map<string, { until: number; errors: number }>();

/** Forgets the exclusions (tests). */
export const clearReaperExclusions = (): void => excluded.clear();

type RseWork = {
  rse: RseDocument;
  storage: RseStorage;
  need: ReaperNeed;
  mark: CandidateMark | undefined;
  page: number;
  freed: number;
  done: boolean;
  handled: Set<string>;
  noAccessErrors: number;
  counts: { deleted: number; bytes: number; notFound: number; retaken: number; erased: number; failed: number };
};

/** The cause of one step: the job, the phase, the RSE and what the step is about, so a job run again with other content appends anew. */
const stepMetadata = (
  context: WorkerContext,
  trigger: JobTrigger,
  phase: string,
  rseId: string,
  keys: readonly string[],
): CommandMetadata => stepOf(DAEMON, trigger, `${phase}-${rseId}-${contentDigest(keys)}`, context.clock);

const targetKey = (target: { scope: string; name: string; rseId: string }): string =>
  `${didKey(target.scope, target.name)} ${target.rseId}`;

/** What an RSE needs, measuring a posix file system only when a `MinFreeSpace` limit asks for it and nobody reported the `storage` usage. */
const needOf = async (rse: RseDocument, storage: RseStorage, greedy: boolean): Promise<ReaperNeed> => {
  const facts = { limits: rse.limits, usage: rse.usage, attributes: rse.attributes };
  const first = reaperNeed(facts, { greedy });
  if (!first.obsoleteOnly || !rse.limits.MinFreeSpace || rse.usage.storage || !storage.storage) return first;
  return reaperNeed(facts, { greedy, measured: await storage.storage.space(storage.pfnOfPath('')) });
};

export const reaperRole: ScheduledRole = {
  kind: 'scheduled',
  name: DAEMON,
  interval: SETTINGS.reaperInterval,
  settings: [
    SETTINGS.reaperChunkSize,
    SETTINGS.reaperGreedy,
    SETTINGS.reaperDelaySeconds,
    SETTINGS.reaperDryRun,
    SETTINGS.reaperAutoExcludeThreshold,
    SETTINGS.reaperAutoExcludeTimeout,
    SETTINGS.reaperRemoveOpenDid,
  ],
  async run(trigger, context) {
    const sections = await context.settings();
    const skipped: SkippedItem[] = [];
    const work = await rsesToWork(context, sections, trigger, skipped);
    const chunk = settingValue(sections, SETTINGS.reaperChunkSize);
    // One chunk per RSE in turn (Rucio's fast re-iterations), so a big deletion does not hold the others up.
    while (work.some((rse) => !rse.done)) {
      for (const rse of work.filter((entry) => !entry.done))
        await deleteChunk(context, sections, trigger, rse, chunk, skipped);
    }
    const done = work.reduce((sum, rse) => sum + rse.counts.deleted, 0);
    const detail = work
      .filter((rse) => rse.counts.deleted + rse.counts.retaken + rse.counts.failed > 0)
      .map(({ rse, need, counts }) => {
        const parts = [
          `deleted ${counts.deleted} (${counts.bytes} bytes${counts.notFound > 0 ? `, ${counts.notFound} not found on storage` : ''})`,
        ];
        if (counts.erased > 0) parts.push(`${counts.erased} DIDs erased`);
        if (counts.retaken > 0) parts.push(`${counts.retaken} taken back by a new lock`);
        if (counts.failed > 0) parts.push(`${counts.failed} failed on storage`);
        return `${rse.rse}: ${parts.join(', ')} [${need.why}]`;
      })
      .join('; ');
    return { done, skipped, ...(detail ? { detail } : {}) };
  },
};

/** The RSEs this cycle works on, with their storage and need; those left alone are reported when they hold candidates. */
const rsesToWork = async (
  context: WorkerContext,
  sections: ConfigSections,
  trigger: JobTrigger,
  skipped: SkippedItem[],
): Promise<RseWork[]> => {
  const greedy = settingValue(sections, SETTINGS.reaperGreedy);
  const now = trigger.startedAt.toISOString();
  const work: RseWork[] = [];
  for (const rse of await activeRses(context.readModels)) {
    const hasCandidates = async () =>
      (await deletionCandidates(context.readModels, rse.id, { now, obsoleteOnly: false, limit: 1 })).candidates.length >
      0;
    const leave = async (reason: string) => {
      if (await hasCandidates()) skipped.push({ what: rse.rse, reason });
    };
    const exclusion = excluded.get(rse.id);
    if (exclusion && exclusion.until > trigger.startedAt.getTime()) {
      await leave(`excluded until ${new Date(exclusion.until).toISOString()} after ${exclusion.errors} storage errors`);
      continue;
    }
    if (!rse.properties.availability_delete) {
      await leave('deletion is blocked on it (availability_delete false)');
      continue;
    }
    const storage = rseStorage(context, rse, sections);
    if ('refusal' in storage) {
      await leave(storage.refusal);
      continue;
    }
    let need: ReaperNeed;
    try {
      need = await needOf(rse, storage, greedy);
    } catch (error) {
      context.logger.warn({ daemon: DAEMON, rse: rse.rse, err: error }, 'could not tell the space the RSE needs');
      need = { bytes: 0, obsoleteOnly: true, why: 'obsolete' };
    }
    work.push({
      rse,
      storage,
      need,
      mark: undefined,
      page: 0,
      freed: 0,
      done: false,
      handled: new Set(),
      noAccessErrors: 0,
      counts: { deleted: 0, bytes: 0, notFound: 0, retaken: 0, erased: 0, failed: 0 },
    });
  }
  return work;
};

/** One chunk of one RSE: choose, mark, delete on storage, record. */
const deleteChunk = async (
  context: WorkerContext,
  sections: ConfigSections,
  trigger: JobTrigger,
  work: RseWork,
  chunk: number,
  skipped: SkippedItem[],
): Promise<void> => {
  const now = trigger.startedAt.toISOString();
  const page = await deletionCandidates(context.readModels, work.rse.id, {
    now,
    obsoleteOnly: work.need.obsoleteOnly,
    limit: chunk,
    after: work.mark,
  });
  work.page += 1;
  if (page.candidates.length === 0) {
    work.done = true;
    return;
  }
  work.mark = page.mark;
  // A replica this cycle already took (marked again by the projection behind it) is not taken twice.
  const fresh = page.candidates.filter((candidate) => !work.handled.has(targetKey(candidate)));
  const outputs = reaper.decide(
    {
      now,
      need: work.need,
      freedSoFar: work.freed,
      delaySeconds: settingValue(sections, SETTINGS.reaperDelaySeconds),
      dryRun: settingValue(sections, SETTINGS.reaperDryRun),
    },
    { candidates: fresh },
  );
  const candidates = new Map(fresh.map((candidate) => [targetKey(candidate), candidate]));
  const deletions = outputs
    .filter((output): output is DeleteReplica => output.type === 'DeleteReplica')
    .map((output) => output.data);
  skipped.push(...skippedOf(outputs));
  for (const deletion of deletions) {
    work.handled.add(targetKey(deletion));
    if (candidates.get(targetKey(deletion))?.state !== 'UNAVAILABLE') work.freed += deletion.bytes;
  }
  if (deletions.length > 0) await deleteReplicas(context, sections, trigger, work, deletions, candidates, skipped);
  if (!work.need.obsoleteOnly && work.freed > work.need.bytes) work.done = true;
  if (page.candidates.length < chunk) work.done = true;
};

const deleteReplicas = async (
  context: WorkerContext,
  sections: ConfigSections,
  trigger: JobTrigger,
  work: RseWork,
  deletions: readonly DeleteReplica['data'][],
  candidates: ReadonlyMap<string, ReaperCandidate>,
  skipped: SkippedItem[],
): Promise<void> => {
  const keys = deletions.map(targetKey);
  // 1. BEING_DELETED on the files' streams, where a lock refuses it.
  const started = await startReplicaDeletions(
    context.commands,
    {
      replicas: deletions.map(({ scope, name, rse, rseId, reason }) => ({ scope, name, rse, rseId, reason })),
      obsoleteOnly: work.need.obsoleteOnly,
      daemon: DAEMON,
    },
    stepMetadata(context, trigger, 'mark', work.rse.id, keys),
  );
  for (const { target, reason } of started.refused)
    skipped.push({ what: `${didKey(target.scope, target.name)} on ${target.rse}`, reason });
  // 2. The files, a batch at a time, each checked on its stream just before.
  const recorded: RecordedDeletion[] = [];
  const threshold = settingValue(sections, SETTINGS.reaperAutoExcludeThreshold);
  for (let start = 0; start < started.marked.length && work.noAccessErrors < threshold; start += STORAGE_BATCH) {
    const candidatesOfBatch = started.marked.slice(start, start + STORAGE_BATCH);
    const still = await Promise.all(candidatesOfBatch.map((target) => stillBeingDeleted(context.commands, target)));
    const batch: DeletionTarget[] = [];
    candidatesOfBatch.forEach((target, index) => {
      if (still[index]) batch.push(target);
      else
        skipped.push({
          what: `${didKey(target.scope, target.name)} on ${target.rse}`,
          reason: 'a new lock took it back before its file was deleted',
        });
    });
    recorded.push(...(await deleteOnStorage(work, batch, candidates, skipped)));
    if (work.noAccessErrors >= threshold) {
      const timeout = settingValue(sections, SETTINGS.reaperAutoExcludeTimeout);
      excluded.set(work.rse.id, { until: context.clock.now() + timeout * 1000, errors: work.noAccessErrors });
      skipped.push({ what: work.rse.rse, reason: `${work.noAccessErrors} storage errors: excluded for ${timeout} s` });
      context.logger.warn(
        { daemon: DAEMON, rse: work.rse.rse, errors: work.noAccessErrors },
        'RSE temporarily excluded after storage errors',
      );
      work.done = true;
    }
  }
  if (recorded.length === 0) return;
  // 3. The catalogue, with the cleanup.
  const outcome = await recordReplicaDeletions(
    context.commands,
    { deletions: recorded, daemon: DAEMON, removeOpen: settingValue(sections, SETTINGS.reaperRemoveOpenDid) },
    stepMetadata(context, trigger, 'record', work.rse.id, recorded.map(targetKey)),
  );
  work.counts.deleted += outcome.deleted.length;
  work.counts.bytes += outcome.deleted.reduce(
    (sum, target) => sum + (candidates.get(targetKey(target))?.bytes ?? 0),
    0,
  );
  work.counts.retaken += outcome.retaken.length;
  work.counts.erased += outcome.erased.length;
  for (const target of outcome.retaken)
    skipped.push({
      what: `${didKey(target.scope, target.name)} on ${target.rse}`,
      reason: 'a new lock took it back after its file was deleted: its transfer brings the file again',
    });
};

/** Deletes the batch's files; those gone (or never there) come back for the catalogue step. */
const deleteOnStorage = async (
  work: RseWork,
  batch: readonly DeletionTarget[],
  candidates: ReadonlyMap<string, ReaperCandidate>,
  skipped: SkippedItem[],
): Promise<RecordedDeletion[]> => {
  if (batch.length === 0) return [];
  const storage = work.storage.storage;
  if (storage === null) return batch.map((target) => ({ ...target, storage: 'catalogue-only' }));
  const withPfns: { target: DeletionTarget; pfn: string }[] = [];
  for (const target of batch) {
    let pfn: string | undefined;
    try {
      pfn = work.storage.pfnOf(target.scope, target.name, candidates.get(targetKey(target))?.path ?? null);
    } catch (error) {
      if (!(error instanceof RucioError)) throw error;
    }
    if (pfn === undefined) {
      // Rucio deletes an UNAVAILABLE replica without a PFN from the catalogue alone.
      if (candidates.get(targetKey(target))?.state === 'UNAVAILABLE') withPfns.push({ target, pfn: '' });
      else
        skipped.push({ what: `${didKey(target.scope, target.name)} on ${target.rse}`, reason: 'no PFN for its file' });
      continue;
    }
    withPfns.push({ target, pfn });
  }
  const results = await storage.delete(withPfns.filter(({ pfn }) => pfn !== '').map(({ pfn }) => pfn));
  const byPfn = new Map(results.map((result) => [result.pfn, result]));
  const recorded: RecordedDeletion[] = [];
  for (const { target, pfn } of withPfns) {
    if (pfn === '') {
      recorded.push({ ...target, storage: 'catalogue-only' });
      continue;
    }
    const result = byPfn.get(pfn);
    if (result?.outcome === 'deleted' || result?.outcome === 'not-found') {
      if (result.outcome === 'not-found') work.counts.notFound += 1;
      recorded.push({ ...target, storage: result.outcome });
    } else {
      work.counts.failed += 1;
      if (result?.outcome === 'failed' && result.noAccess) work.noAccessErrors += 1;
      skipped.push({
        what: `${didKey(target.scope, target.name)} on ${target.rse}`,
        reason: `deletion failed on storage, kept BEING_DELETED: ${result?.outcome === 'failed' ? result.reason : 'no answer'}`,
      });
    }
  }
  return recorded;
};
