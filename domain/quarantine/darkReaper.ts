import { pathSegmentProblem } from '../shared/names.ts';
import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';

/**
 * The dark reaper (Rucio's daemon, §2.7): quarantined files of an RSE are deleted from storage and
 * leave the quarantine; an entry that is a registered replica after all only leaves the
 * quarantine, its file kept.
 */

/** A quarantined entry with what the catalogue says of its path. */
export type QuarantinedEntry = Readonly<{
  path: string;
  scope: string | null;
  name: string | null;
  bytes: number | null;
  registered: boolean;
}>;

export type DeleteDarkFile = WorkflowOutput<'DeleteDarkFile', { path: string }>;
export type ForgetRegisteredFile = WorkflowOutput<'ForgetRegisteredFile', { path: string }>;
export type DarkReaperOutput = DeleteDarkFile | ForgetRegisteredFile | Skipped;

export const darkReaper: Workflow<
  Readonly<{ rse: string; dryRun: boolean }>,
  Readonly<{ entries: readonly QuarantinedEntry[] }>,
  DarkReaperOutput
> = {
  name: 'dark-reaper',
  decide: ({ rse, dryRun }, { entries }) =>
    entries.map((entry): DarkReaperOutput => {
      // Quarantined before paths were checked: the storage would refuse it anyway, so it is not asked.
      const climb = pathSegmentProblem(entry.path);
      if (climb)
        return {
          type: 'Skipped',
          data: {
            what: `${entry.path} on ${rse}`,
            reason: `the path ${climb}: it would not stay below the RSE's prefix, so it is left alone`,
          },
        };
      if (dryRun)
        return {
          type: 'Skipped',
          data: {
            what: `${entry.path} on ${rse}`,
            reason: entry.registered ? 'dry run (a registered replica: kept)' : 'dry run',
          },
        };
      return entry.registered
        ? { type: 'ForgetRegisteredFile', data: { path: entry.path } }
        : { type: 'DeleteDarkFile', data: { path: entry.path } };
    }),
};
