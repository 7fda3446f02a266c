import { parsePolicies, type SuspiciousPolicy } from './suspiciousReplicaRecoverer.ts';
import { flag, integer, number, typed, DAY } from '../config/settingKinds.ts';

/** The `/config` options of the daemons that delete and recover replicas (domain/replica/). */
export const REPLICA_SETTINGS = {
  /**
   * The reaper: seconds between cycles (Rucio sleeps 60 s; 10 s here, so a replica made obsolete
   * goes within seconds on an idle server), replicas per chunk (one atomic step to mark them, one
   * to record them deleted; Rucio: 100), every RSE greedy (its `--greedy`), BEING_DELETED replicas
   * taken again after `delay_seconds` (a deletion a crash interrupted; Rucio's daemon: 0), a dry
   * run that only reports, storage errors (no access) after which an RSE is left alone for
   * `auto_exclude_timeout` seconds (Rucio: 100 and 600), and whether emptied open collections are
   * deleted too (Rucio's `reaper.remove_open_did`).
   */
  reaperInterval: number('reaper', 'interval', 10, 0.1, DAY),
  reaperChunkSize: integer('reaper', 'chunk_size', 100, 1, 100_000),
  reaperGreedy: flag('reaper', 'greedy', false),
  reaperDelaySeconds: number('reaper', 'delay_seconds', 0, 0, 30 * DAY),
  reaperDryRun: flag('reaper', 'dry_run', false),
  reaperAutoExcludeThreshold: integer('reaper', 'auto_exclude_threshold', 100, 1, 1_000_000),
  reaperAutoExcludeTimeout: number('reaper', 'auto_exclude_timeout', 600, 0, 30 * DAY),
  reaperRemoveOpenDid: flag('reaper', 'remove_open_did', false),
  /** The necromancer: seconds between cycles (Rucio: 60), BAD replicas per cycle (Rucio's `bulk`: 100), dry run. */
  necromancerInterval: number('necromancer', 'interval', 10, 0.1, DAY),
  necromancerBulk: integer('necromancer', 'bulk', 1000, 1, 100_000),
  necromancerDryRun: flag('necromancer', 'dry_run', false),
  /** minos-temporary-expiration: seconds between cycles (Rucio: 60), expired unavailabilities per cycle (Rucio: 1000), dry run. */
  temporaryExpirationInterval: number('minos-temporary-expiration', 'interval', 60, 0.1, DAY),
  temporaryExpirationBulk: integer('minos-temporary-expiration', 'bulk', 1000, 1, 100_000),
  temporaryExpirationDryRun: flag('minos-temporary-expiration', 'dry_run', false),
  /**
   * The suspicious-replica-recoverer (its command-line options in Rucio): seconds between cycles
   * (Rucio: 3600; 60 here, the query is cheap), the window in days and the declarations a replica needs beyond `nattempts`
   * (5 and 5), the count of such replicas past which an RSE is taken for broken and its
   * replicas made TEMPORARY_UNAVAILABLE for 3 days (5), and `active_mode`: off, it only reports
   * (Rucio's default). `policy` is Rucio's JSON policy file as text: for last copies, a list of
   * `{"scope": [regex], "datatype": [regex], "action": "declare bad" | "ignore" | "dry run"}`.
   */
  recovererInterval: number('suspicious-replica-recoverer', 'interval', 60, 0.1, 30 * DAY),
  recovererYoungerThan: number('suspicious-replica-recoverer', 'younger_than', 5, 0, 365),
  recovererNattempts: integer('suspicious-replica-recoverer', 'nattempts', 5, 0, 1_000_000),
  recovererLimitPerRse: integer('suspicious-replica-recoverer', 'limit_suspicious_files_on_rse', 5, 0, 1_000_000),
  recovererActiveMode: flag('suspicious-replica-recoverer', 'active_mode', false),
  recovererPolicy: typed<readonly SuspiciousPolicy[]>(
    'suspicious-replica-recoverer',
    'policy',
    [],
    'a JSON list of {"scope": [regex], "datatype": [regex], "action": "declare bad" | "ignore" | "dry run"}',
    parsePolicies,
  ),
} as const;
