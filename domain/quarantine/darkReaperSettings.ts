import { flag, integer, number, DAY } from '../config/settingKinds.ts';

/** The dark reaper's `/config` options (domain/quarantine/darkReaper.ts). */
export const DARK_REAPER_SETTINGS = {
  /** The dark reaper: seconds between cycles (Rucio: 300), quarantined files per chunk (Rucio: 100), dry run. */
  darkReaperInterval: number('dark-reaper', 'interval', 30, 0.1, DAY),
  darkReaperChunkSize: integer('dark-reaper', 'chunk_size', 100, 1, 100_000),
  darkReaperDryRun: flag('dark-reaper', 'dry_run', false),
} as const;
