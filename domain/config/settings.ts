import { configValueFromText } from './configValue.ts';

/**
 * The configuration options the service itself reads (`/config`), each declared once with its
 * section, option, type and default, so every reader (a command, a query, a daemon) gets the same
 * value for the same stored text. Section and option names are Rucio's where Rucio has them.
 */
export type Setting<T> = Readonly<{
  section: string;
  option: string;
  defaultValue: T;
  /** The typed value of the stored text, or undefined when the text does not fit (the default applies). */
  parse(text: string): T | undefined;
}>;

/** Configuration sections as stored: section → option → text. */
export type ConfigSections = Readonly<Record<string, Readonly<Record<string, string>>>>;

const text = (section: string, option: string, defaultValue: string): Setting<string> => ({
  section,
  option,
  defaultValue,
  parse: (value) => (value === '' ? undefined : value),
});

/** A number within bounds (Rucio's `config_get_int` / `config_get_float` with a range check). */
const number = (section: string, option: string, defaultValue: number, min: number, max: number): Setting<number> => ({
  section,
  option,
  defaultValue,
  parse: (value) => {
    const typed = configValueFromText(value);
    return typeof typed === 'number' && typed >= min && typed <= max ? typed : undefined;
  },
});

const flag = (section: string, option: string, defaultValue: boolean): Setting<boolean> => ({
  section,
  option,
  defaultValue,
  parse: (value) => {
    const typed = configValueFromText(value);
    return typeof typed === 'boolean' ? typed : typed === 1 ? true : typed === 0 ? false : undefined;
  },
});

/** The value of a setting in stored configuration sections. */
export const settingValue = <T>(sections: ConfigSections, setting: Setting<T>): T => {
  const stored = sections[setting.section]?.[setting.option];
  return stored === undefined ? setting.defaultValue : (setting.parse(stored) ?? setting.defaultValue);
};

const DAY = 86_400;

export const SETTINGS = {
  /** The lfn2pfn algorithm of RSEs without an `lfn2pfn_algorithm` attribute (rucio.common.config). */
  lfn2pfnDefault: text('policy', 'lfn2pfn_algorithm_default', 'hash'),
  /** The policy schema named in metalink documents. */
  policySchema: text('policy', 'schema', 'generic'),
  /** Origins allowed by the CORS pre-flight, comma-separated. */
  webuiUrls: text('webui', 'urls', ''),
  /**
   * The undertaker: seconds between cycles (Rucio's daemon sleeps 60 s), DIDs per cycle (Rucio
   * selects up to 10 000), DIDs deleted per step (Rucio's chunks of 10), and a dry run that only
   * reports what it would delete.
   */
  undertakerInterval: number('undertaker', 'interval', 30, 1, DAY),
  undertakerMaxDids: number('undertaker', 'max_dids', 10_000, 1, 1_000_000),
  undertakerChunkSize: number('undertaker', 'chunk_size', 10, 1, 10_000),
  undertakerDryRun: flag('undertaker', 'dry_run', false),
  /**
   * A rule of an expired DID with more locks than this is only expired within the hour and the
   * DID given another day (Rucio's `expire_rules_locks_size`); `purge_all_replicas` gives the
   * unlocked replicas of an expired collection's files an obsolete tombstone (Rucio's, default off).
   */
  undertakerExpireRulesLocksSize: number('undertaker', 'expire_rules_locks_size', 10_000, 0, 100_000_000),
  undertakerPurgeAllReplicas: flag('undertaker', 'purge_all_replicas', false),
  /** The judge-repairer: seconds between cycles, how long a STUCK rule is left alone first (Rucio: 1800 s), rules per cycle. */
  repairerInterval: number('judge-repairer', 'interval', 60, 1, DAY),
  repairerDelta: number('judge-repairer', 'delta', 1800, 0, 30 * DAY),
  repairerMaxRules: number('judge-repairer', 'max_rules', 100, 1, 100_000),
  /** The judge-cleaner: seconds between cycles and expired rules per cycle (Rucio: 200). */
  cleanerInterval: number('judge-cleaner', 'interval', 60, 1, DAY),
  cleanerMaxRules: number('judge-cleaner', 'max_rules', 200, 1, 100_000),
  /** The activity of rules a subscription makes without naming one (Rucio's transmogrifier: `rules.default_activity`, else `default`). */
  rulesDefaultActivity: text('rules', 'default_activity', 'default'),
  /**
   * The transmogrifier's periodic pass: seconds between cycles (Rucio's daemon sleeps 60 s), in
   * which subscriptions past their lifetime become INACTIVE and retroactive ones go through the
   * DIDs that existed before them, `chunk_size` DIDs per step, at most `max_dids` per cycle.
   */
  transmogrifierRetroactiveInterval: number('transmogrifier-retroactive', 'interval', 60, 0.1, DAY),
  transmogrifierRetroactiveChunkSize: number('transmogrifier-retroactive', 'chunk_size', 500, 1, 10_000),
  transmogrifierRetroactiveMaxDids: number('transmogrifier-retroactive', 'max_dids', 10_000, 1, 1_000_000),
  /**
   * Lifetime exceptions (Rucio's `lifetime_model` section): requests are only taken while
   * `cutoff_date` (YYYY-MM-DD) is in the future; `max_extension` days (0: no bound) default and cap
   * an exception's end.
   */
  lifetimeModelCutoffDate: text('lifetime_model', 'cutoff_date', ''),
  lifetimeModelMaxExtension: number('lifetime_model', 'max_extension', 0, 0, 36_500),
  /**
   * Atropos (Rucio's command-line options, by their names): seconds between cycles (its sleep,
   * 60 s), a dry run that only reports, the grace period a condemned rule lives on (a day) plus up
   * to `spread_period` seconds (0), purging the replicas and unlocking locked rules (both off), and
   * rules per cycle.
   */
  atroposInterval: number('atropos', 'interval', 60, 1, DAY),
  atroposDryRun: flag('atropos', 'dry_run', false),
  atroposGracePeriod: number('atropos', 'grace_period', DAY, 0, 365 * DAY),
  atroposSpreadPeriod: number('atropos', 'spread_period', 0, 0, 365 * DAY),
  atroposPurgeReplicas: flag('atropos', 'purge_replicas', false),
  atroposUnlock: flag('atropos', 'unlock', false),
  atroposMaxRules: number('atropos', 'max_rules', 1000, 1, 100_000),
  /**
   * Failed logins, counted per identity and per client address over a window: the first
   * `login_free_failures` cost nothing more; then each attempt waits `login_delay_base` seconds,
   * twice as long after every further failure, up to `login_delay_max` (attempts that would wait
   * longer are refused at once). A success clears the identity's count; an address's count ends
   * `login_failure_window` seconds after its last failure.
   */
  loginFreeFailures: number('auth', 'login_free_failures', 5, 0, 1000),
  loginDelayBase: number('auth', 'login_delay_base', 1, 0, 60),
  loginDelayMax: number('auth', 'login_delay_max', 30, 0, 3600),
  loginFailureWindow: number('auth', 'login_failure_window', 900, 1, 7 * DAY),
  /** New transfer requests wait for the preparer to choose their source (PREPARING) instead of being QUEUED. */
  conveyorUsePreparer: flag('conveyor', 'use_preparer', false),
  /**
   * The tool of RSEs without a `transfertool` attribute, for copies not between `file` protocols
   * (those go to `posix`). Rucio's default is `fts3`; here `mock`, which copies nothing and suits
   * RSEs without real storage.
   */
  conveyorTransfertool: text('conveyor', 'transfertool', 'mock'),
  /** Whether MISMATCH_SCHEME requests are retried (Rucio's option, default false). */
  conveyorRetryProtocolMismatches: flag('conveyor', 'retry_protocol_mismatches', false),
  /** Comma-separated regular expressions: a failure matching one declares its source SUSPICIOUS; default none. */
  conveyorSuspiciousPattern: text('conveyor', 'suspicious_pattern', ''),
  /**
   * The conveyor's daemons: seconds between cycles and requests per batch (one atomic step each).
   * Rucio's submitter and poller sleep 600 s and take bulks of 100-1000; here the submitter, poller
   * and finisher wake every second, as nothing else tells them of new work. The throttler keeps
   * Rucio's 600 s. A SUBMITTING request older than `submitting_timeout` (Rucio: 120 minutes) is
   * retried; the poller asks after jobs `older_than` seconds old (Rucio: 60, with a receiver for
   * the rest; here polling is the only way to hear back, so 0).
   */
  preparerInterval: number('conveyor-preparer', 'interval', 1, 0.1, DAY),
  preparerChunkSize: number('conveyor-preparer', 'chunk_size', 1000, 1, 100_000),
  throttlerInterval: number('conveyor-throttler', 'interval', 600, 0.1, DAY),
  submitterInterval: number('conveyor-submitter', 'interval', 1, 0.1, DAY),
  submitterChunkSize: number('conveyor-submitter', 'chunk_size', 1000, 1, 100_000),
  pollerInterval: number('conveyor-poller', 'interval', 1, 0.1, DAY),
  pollerChunkSize: number('conveyor-poller', 'chunk_size', 1000, 1, 100_000),
  pollerOlderThan: number('conveyor-poller', 'older_than', 0, 0, DAY),
  finisherInterval: number('conveyor-finisher', 'interval', 1, 0.1, DAY),
  finisherChunkSize: number('conveyor-finisher', 'chunk_size', 1000, 1, 100_000),
  finisherSubmittingTimeout: number('conveyor-finisher', 'submitting_timeout', 7200, 1, 30 * DAY),
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
  reaperChunkSize: number('reaper', 'chunk_size', 100, 1, 100_000),
  reaperGreedy: flag('reaper', 'greedy', false),
  reaperDelaySeconds: number('reaper', 'delay_seconds', 0, 0, 30 * DAY),
  reaperDryRun: flag('reaper', 'dry_run', false),
  reaperAutoExcludeThreshold: number('reaper', 'auto_exclude_threshold', 100, 1, 1_000_000),
  reaperAutoExcludeTimeout: number('reaper', 'auto_exclude_timeout', 600, 0, 30 * DAY),
  reaperRemoveOpenDid: flag('reaper', 'remove_open_did', false),
  /** The dark reaper: seconds between cycles (Rucio: 300), quarantined files per chunk (Rucio: 100), dry run. */
  darkReaperInterval: number('dark-reaper', 'interval', 30, 0.1, DAY),
  darkReaperChunkSize: number('dark-reaper', 'chunk_size', 100, 1, 100_000),
  darkReaperDryRun: flag('dark-reaper', 'dry_run', false),
  /** The necromancer: seconds between cycles (Rucio: 60), BAD replicas per cycle (Rucio's `bulk`: 100), dry run. */
  necromancerInterval: number('necromancer', 'interval', 10, 0.1, DAY),
  necromancerBulk: number('necromancer', 'bulk', 1000, 1, 100_000),
  necromancerDryRun: flag('necromancer', 'dry_run', false),
  /** minos-temporary-expiration: seconds between cycles (Rucio: 60), expired unavailabilities per cycle (Rucio: 1000), dry run. */
  temporaryExpirationInterval: number('minos-temporary-expiration', 'interval', 60, 0.1, DAY),
  temporaryExpirationBulk: number('minos-temporary-expiration', 'bulk', 1000, 1, 100_000),
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
  recovererNattempts: number('suspicious-replica-recoverer', 'nattempts', 5, 0, 1_000_000),
  recovererLimitPerRse: number('suspicious-replica-recoverer', 'limit_suspicious_files_on_rse', 5, 0, 1_000_000),
  recovererActiveMode: flag('suspicious-replica-recoverer', 'active_mode', false),
  recovererPolicy: text('suspicious-replica-recoverer', 'policy', ''),
  /**
   * Kronos (Rucio's `tracer-kronos` section): seconds between cycles (Rucio reads its broker
   * continuously; its dataset thread sleeps 60 s) and traces per batch (Rucio's `chunksize`).
   * Each batch records one event per replica and per dataset it read, however many traces.
   */
  kronosInterval: number('tracer-kronos', 'interval', 10, 0.1, DAY),
  kronosChunkSize: number('tracer-kronos', 'chunksize', 1000, 1, 100_000),
  /**
   * Traces posted without a token (`POST /traces/`, `/nongrid_traces/`): how many one client
   * address may post per second on average, and at once (Rucio: no bound).
   */
  traceRatePerAddress: number('trace', 'rate_per_address', 100, 0.1, 1_000_000),
  traceBurstPerAddress: number('trace', 'burst_per_address', 2000, 1, 10_000_000),
} as const;
