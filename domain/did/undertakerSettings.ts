import { flag, integer, number, DAY } from '../config/settingKinds.ts';

/** The undertaker's `/config` options (domain/did/undertaker.ts). */
export const UNDERTAKER_SETTINGS = {
  /**
   * The undertaker: seconds between cycles (Rucio's daemon sleeps 60 s), DIDs per cycle (Rucio
   * selects up to 10 000), DIDs deleted per step (Rucio's chunks of 10), and a dry run that only
   * reports what it would delete.
   */
  undertakerInterval: number('undertaker', 'interval', 30, 1, DAY),
  undertakerMaxDids: integer('undertaker', 'max_dids', 10_000, 1, 1_000_000),
  undertakerChunkSize: integer('undertaker', 'chunk_size', 10, 1, 10_000),
  undertakerDryRun: flag('undertaker', 'dry_run', false),
  /**
   * A rule of an expired DID with more locks than this is only expired within the hour and the
   * DID given another day (Rucio's `expire_rules_locks_size`); `purge_all_replicas` gives the
   * unlocked replicas of an expired collection's files an obsolete tombstone (Rucio's, default off).
   */
  undertakerExpireRulesLocksSize: integer('undertaker', 'expire_rules_locks_size', 10_000, 0, 100_000_000),
  undertakerPurgeAllReplicas: flag('undertaker', 'purge_all_replicas', false),
} as const;
