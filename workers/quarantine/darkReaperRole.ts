import { isRegisteredReplica, removeQuarantinedReplicas } from '../../commands/replica/darkFiles.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { darkReaper, type QuarantinedEntry } from '../../domain/quarantine/darkReaper.ts';
import type { DarkFileOutcome, QuarantinedReplica } from '../../domain/quarantine/quarantine.ts';
import { activeRses, quarantinedReplicasOf } from '../../projections/replica/deletionQueries.ts';
import { skippedOf, stepOf, type ScheduledRole, type SkippedItem } from '../role.ts';
import { rseStorage } from '../replica/rseStorage.ts';
import { contentDigest } from '../stepCause.ts';

/**
 * The dark reaper (Rucio's daemon, §2.7) on a schedule (`dark-reaper.interval`, 30 s): per RSE
 * with quarantined files, a chunk at a time, each dark file is deleted from storage through the
 * RSE's delete protocol ("not found" counts as deleted) and leaves the quarantine; an entry that
 * is a registered replica after all leaves it with its file kept. A file that could not be deleted
 * stays in quarantine for a later cycle.
 */
export const darkReaperRole: ScheduledRole = {
  kind: 'scheduled',
  name: darkReaper.name,
  interval: SETTINGS.darkReaperInterval,
  settings: [SETTINGS.darkReaperChunkSize, SETTINGS.darkReaperDryRun],
  async run(trigger, context) {
    const sections = await context.settings();
    const chunk = settingValue(sections, SETTINGS.darkReaperChunkSize);
    const dryRun = settingValue(sections, SETTINGS.darkReaperDryRun);
    const skipped: SkippedItem[] = [];
    let done = 0;
    const detail: string[] = [];
    for (const rse of await activeRses(context.readModels)) {
      const entries = await quarantinedReplicasOf(context.readModels, rse.id, chunk);
      if (entries.length === 0) continue;
      const storage = rseStorage(context, rse, sections);
      if ('refusal' in storage) {
        skipped.push({ what: rse.rse, reason: storage.refusal });
        continue;
      }
      const algorithm =
        typeof rse.attributes.lfn2pfn_algorithm === 'string' && rse.attributes.lfn2pfn_algorithm
          ? rse.attributes.lfn2pfn_algorithm
          : settingValue(sections, SETTINGS.lfn2pfnDefault);
      const catalogueRse = {
        id: rse.id,
        rse: rse.rse,
        stagingArea: rse.properties.staging_area,
        deterministic: rse.properties.deterministic,
        lfn2pfnAlgorithm: algorithm,
        protocols: rse.protocols,
      };
      const known: (QuarantinedEntry & { pfn: string; replica: QuarantinedReplica })[] = [];
      for (const entry of entries) {
        const replica: QuarantinedReplica = {
          path: entry.path,
          scope: entry.scope,
          name: entry.name,
          bytes: entry.bytes,
        };
        const pfn = storage.pfnOfPath(entry.path);
        known.push({
          ...replica,
          pfn,
          replica,
          registered: await isRegisteredReplica(context.commands, catalogueRse, replica, pfn),
        });
      }
      const outputs = darkReaper.decide({ rse: rse.rse, dryRun }, { entries: known });
      skipped.push(...skippedOf(outputs));
      const byPath = new Map(known.map((entry) => [entry.path, entry]));
      const removals: (QuarantinedReplica & { outcome: DarkFileOutcome })[] = [];
      const toDelete = outputs.flatMap((output) =>
        output.type === 'DeleteDarkFile' ? [byPath.get(output.data.path)!] : [],
      );
      for (const output of outputs)
        if (output.type === 'ForgetRegisteredFile')
          removals.push({ ...byPath.get(output.data.path)!.replica, outcome: 'registered' });
      if (storage.storage === null)
        removals.push(...toDelete.map((entry) => ({ ...entry.replica, outcome: 'deleted' as const })));
      else if (toDelete.length > 0) {
        const results = await storage.storage.delete(toDelete.map((entry) => entry.pfn));
        results.forEach((result, index) => {
          const entry = toDelete[index]!;
          if (result.outcome === 'failed')
            skipped.push({
              what: `${entry.path} on ${rse.rse}`,
              reason: `deletion failed on storage, kept in quarantine: ${result.reason}`,
            });
          else removals.push({ ...entry.replica, outcome: result.outcome });
        });
      }
      if (removals.length === 0) continue;
      const metadata = stepOf(
        darkReaper.name,
        trigger,
        `${rse.id}-${contentDigest(removals.map((entry) => entry.path))}`,
        context.clock,
      );
      const { removed } = await removeQuarantinedReplicas(
        context.commands,
        { rse: rse.rse, rseId: rse.id, replicas: removals, daemon: darkReaper.name },
        metadata,
      );
      done += removed;
      const deleted = removals.filter((entry) => entry.outcome !== 'registered').length;
      detail.push(
        `${rse.rse}: ${deleted} dark files deleted, ${removals.length - deleted} registered replicas left in place`,
      );
    }
    return { done, skipped, ...(detail.length > 0 ? { detail: detail.join('; ') } : {}) };
  },
};
