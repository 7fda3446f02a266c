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
  undertakerInterval: number('undertaker', 'interval', 60, 1, DAY),
  undertakerMaxDids: number('undertaker', 'max_dids', 10_000, 1, 1_000_000),
  undertakerChunkSize: number('undertaker', 'chunk_size', 10, 1, 10_000),
  undertakerDryRun: flag('undertaker', 'dry_run', false),
  /** The judge-repairer: seconds between cycles, how long a STUCK rule is left alone first (Rucio: 1800 s), rules per cycle. */
  repairerInterval: number('judge-repairer', 'interval', 60, 1, DAY),
  repairerDelta: number('judge-repairer', 'delta', 1800, 0, 30 * DAY),
  repairerMaxRules: number('judge-repairer', 'max_rules', 100, 1, 100_000),
  /** The judge-cleaner: seconds between cycles and expired rules per cycle (Rucio: 200). */
  cleanerInterval: number('judge-cleaner', 'interval', 60, 1, DAY),
  cleanerMaxRules: number('judge-cleaner', 'max_rules', 200, 1, 100_000),
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
} as const;
