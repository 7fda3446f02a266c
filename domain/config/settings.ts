import { parseDiracLifetimes } from '../dirac/diracPaths.ts';
import { HERMES_SETTINGS } from '../message/hermesSettings.ts';
import { parsePolicies, type SuspiciousPolicy } from '../replica/suspiciousReplicaRecoverer.ts';
import { LFN2PFN_ALGORITHMS } from '../rse/lfn2pfn.ts';
import { choice, flag, integer, number, patternList, text, typed, type Setting } from './settingKinds.ts';

export { settingValue, type ConfigSections, type Setting } from './settingKinds.ts';

/**
 * Every option the service reads (the kinds of option, and what a declaration holds, are in
 * settingKinds.ts); the messaging options have a module of their own (domain/message/).
 */

/** `YYYY-MM-DD`, a day of the calendar. */
const isCalendarDate = (value: string): boolean => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value.trim());
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.getUTCMonth() === Number(match[2]) - 1 && date.getUTCDate() === Number(match[3]);
};

/** The scope extraction algorithms Rucio ships; `def` for any other name. */
export const SCOPE_CONVENTIONS = ['def', 'dirac'] as const;
export type ScopeConvention = (typeof SCOPE_CONVENTIONS)[number];

/** Any name is taken, as Rucio takes it: one it does not ship reads as `def` (undefined here). */
const scopeConvention = (section: string, option: string): Setting<ScopeConvention | undefined> => ({
  section,
  option,
  defaultValue: undefined,
  allowed: `a scope extraction algorithm (${SCOPE_CONVENTIONS.join(', ')}; any other name means def)`,
  parse: (value) => SCOPE_CONVENTIONS.find((convention) => convention === value),
  accepts: () => true,
});

const DAY = 86_400;

export const SETTINGS = {
  /** The lfn2pfn algorithm of RSEs without an `lfn2pfn_algorithm` attribute (rucio.common.config). */
  lfn2pfnDefault: choice('policy', 'lfn2pfn_algorithm_default', 'hash', LFN2PFN_ALGORITHMS),
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
  /** The judge-repairer: seconds between cycles, how long a STUCK rule is left alone first (Rucio: 1800 s), rules per cycle. */
  repairerInterval: number('judge-repairer', 'interval', 60, 1, DAY),
  repairerDelta: number('judge-repairer', 'delta', 1800, 0, 30 * DAY),
  repairerMaxRules: integer('judge-repairer', 'max_rules', 100, 1, 100_000),
  /** The judge-cleaner: seconds between cycles and expired rules per cycle (Rucio: 200). */
  cleanerInterval: number('judge-cleaner', 'interval', 60, 1, DAY),
  cleanerMaxRules: integer('judge-cleaner', 'max_rules', 200, 1, 100_000),
  /** The activity of rules a subscription makes without naming one (Rucio's transmogrifier: `rules.default_activity`, else `default`). */
  rulesDefaultActivity: text('rules', 'default_activity', 'default'),
  /**
   * The transmogrifier's periodic pass: seconds between cycles (Rucio's daemon sleeps 60 s), in
   * which subscriptions past their lifetime become INACTIVE and retroactive ones go through the
   * DIDs that existed before them, `chunk_size` DIDs per step, at most `max_dids` per cycle.
   */
  transmogrifierRetroactiveInterval: number('transmogrifier-retroactive', 'interval', 60, 0.1, DAY),
  transmogrifierRetroactiveChunkSize: integer('transmogrifier-retroactive', 'chunk_size', 500, 1, 10_000),
  transmogrifierRetroactiveMaxDids: integer('transmogrifier-retroactive', 'max_dids', 10_000, 1, 1_000_000),
  /**
   * Lifetime exceptions (Rucio's `lifetime_model` section): requests are only taken while
   * `cutoff_date` (YYYY-MM-DD) is in the future; `max_extension` days (0: no bound) default and cap
   * an exception's end.
   */
  lifetimeModelCutoffDate: text('lifetime_model', 'cutoff_date', '', 'a date YYYY-MM-DD', isCalendarDate),
  lifetimeModelMaxExtension: integer('lifetime_model', 'max_extension', 0, 0, 36_500),
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
  atroposMaxRules: integer('atropos', 'max_rules', 1000, 1, 100_000),
  /**
   * Failed logins (api/auth/loginThrottle.ts): free failures per identity from one client address,
   * per identity from all addresses together, and distinct failing identities per address (one
   * user's typos count once there). Past one of them each attempt waits `login_delay_base`
   * seconds, twice as long after every further failure, up to `login_delay_max` (attempts that
   * would wait longer are refused at once). A success clears its identity's counts; counts end
   * `login_failure_window` seconds after their last failure.
   */
  loginFreeFailures: integer('auth', 'login_free_failures', 5, 0, 1000),
  loginIdentityFreeFailures: integer('auth', 'login_identity_free_failures', 20, 0, 100_000),
  loginAddressFreeIdentities: integer('auth', 'login_address_free_identities', 20, 0, 10_000),
  loginDelayBase: number('auth', 'login_delay_base', 1, 0, 60),
  loginDelayMax: number('auth', 'login_delay_max', 30, 0, 3600),
  loginFailureWindow: number('auth', 'login_failure_window', 900, 1, 7 * DAY),
  /**
   * JWTs of trusted OpenID providers (Rucio's `oidc` section): every audience in
   * `expected_audience` must be in the token's `aud`, and every scope in `expected_scope` in its
   * `scope` (space-separated, as Rucio reads them); the code flow asks for them too. The keys of
   * an issuer are fetched again for an unknown key id at most once per `jwks_refresh_interval`
   * seconds (30), and when older than `jwks_max_age` (an hour).
   */
  oidcExpectedAudience: text('oidc', 'expected_audience', 'rucio'),
  oidcExpectedScope: text('oidc', 'expected_scope', 'openid profile'),
  oidcJwksRefreshInterval: number('oidc', 'jwks_refresh_interval', 30, 0, DAY),
  oidcJwksMaxAge: number('oidc', 'jwks_max_age', 3600, 60, 30 * DAY),
  /**
   * The trusted provider (its nickname in DMS_OIDC_PROVIDERS) this service asks for tokens of its
   * own, as its client (Rucio's `admin_issuer`): the tokens of transfers between RSEs with
   * `oidc_support`. Empty: the file's first provider. A token is handed out again while it has
   * more than `token_min_lifetime` seconds left, and asked for anew after that (Rucio: 300).
   */
  oidcAdminIssuer: text('oidc', 'admin_issuer', ''),
  oidcTokenMinLifetime: integer('oidc', 'token_min_lifetime', 300, 0, DAY),
  /** New transfer requests wait for the preparer to choose their source (PREPARING) instead of being QUEUED. */
  conveyorUsePreparer: flag('conveyor', 'use_preparer', false),
  /**
   * The tool of RSEs without a `transfertool` attribute, for copies not between `file` protocols
   * (those go to `posix`). Rucio's default is `fts3`; here `mock`, which copies nothing and suits
   * RSEs without real storage.
   */
  conveyorTransfertool: choice('conveyor', 'transfertool', 'mock', ['fts3', 'mock', 'posix']),
  /** Whether MISMATCH_SCHEME requests are retried (Rucio's option, default false). */
  conveyorRetryProtocolMismatches: flag('conveyor', 'retry_protocol_mismatches', false),
  /** Comma-separated regular expressions: a failure matching one declares its source SUSPICIOUS; default none. */
  conveyorSuspiciousPattern: patternList('conveyor', 'suspicious_pattern'),
  /**
   * The conveyor's daemons: seconds between cycles and requests per batch (one atomic step each).
   * Rucio's submitter and poller sleep 600 s and take bulks of 100-1000; here the submitter, poller
   * and finisher wake every second, as nothing else tells them of new work. The throttler keeps
   * Rucio's 600 s. A SUBMITTING request older than `submitting_timeout` (Rucio: 120 minutes) is
   * retried; the poller asks after jobs `older_than` seconds old (Rucio: 60, with a receiver for
   * the rest; here polling is the only way to hear back, so 0).
   */
  preparerInterval: number('conveyor-preparer', 'interval', 1, 0.1, DAY),
  preparerChunkSize: integer('conveyor-preparer', 'chunk_size', 1000, 1, 100_000),
  throttlerInterval: number('conveyor-throttler', 'interval', 600, 0.1, DAY),
  submitterInterval: number('conveyor-submitter', 'interval', 1, 0.1, DAY),
  submitterChunkSize: integer('conveyor-submitter', 'chunk_size', 1000, 1, 100_000),
  pollerInterval: number('conveyor-poller', 'interval', 1, 0.1, DAY),
  pollerChunkSize: integer('conveyor-poller', 'chunk_size', 1000, 1, 100_000),
  pollerOlderThan: number('conveyor-poller', 'older_than', 0, 0, DAY),
  finisherInterval: number('conveyor-finisher', 'interval', 1, 0.1, DAY),
  finisherChunkSize: integer('conveyor-finisher', 'chunk_size', 1000, 1, 100_000),
  finisherSubmittingTimeout: number('conveyor-finisher', 'submitting_timeout', 7200, 1, 30 * DAY),
  /** The stager (Rucio's conveyor-stager): the submitter of STAGEIN requests, on the submitter's schedule. */
  stagerInterval: number('conveyor-stager', 'interval', 1, 0.1, DAY),
  stagerChunkSize: integer('conveyor-stager', 'chunk_size', 1000, 1, 100_000),
  /**
   * Seconds a tool may take to bring a file on tape online before copying it (Rucio's
   * `conveyor.bring_online`, FTS's `bring_online`), for transfers from tape or `staging_required`
   * RSEs and STAGEIN requests.
   */
  conveyorBringOnline: integer('conveyor', 'bring_online', 43_200, 1, 30 * DAY),
  /**
   * Multihop (Rucio's `transfers` section): the RSEs a transfer may pass through, as an RSE
   * expression (empty: none, no multihop), what passing through one costs (an RSE's own
   * `hop_penalty` attribute first), how long the replica a path leaves on an RSE is kept (an RSE's
   * own `multihop_tombstone_delay` first; negative: the reaper takes it at once, 0: kept), and at
   * most how many copies a path takes (0: no bound, as in Rucio, which has no such option).
   */
  multihopRseExpression: typed(
    'transfers',
    'multihop_rse_expression',
    'available_for_multihop=true',
    'an RSE expression, or nothing for no multihop',
    (value) => value,
  ),
  hopPenalty: integer('transfers', 'hop_penalty', 10, 0, 1_000_000),
  multihopTombstoneDelay: integer('transfers', 'multihop_tombstone_delay', 7200, -1, 365 * DAY),
  multihopMaxHops: integer('transfers', 'multihop_max_hops', 0, 0, 100),
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
  /** The dark reaper: seconds between cycles (Rucio: 300), quarantined files per chunk (Rucio: 100), dry run. */
  darkReaperInterval: number('dark-reaper', 'interval', 30, 0.1, DAY),
  darkReaperChunkSize: integer('dark-reaper', 'chunk_size', 100, 1, 100_000),
  darkReaperDryRun: flag('dark-reaper', 'dry_run', false),
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
  /**
   * Open data (Rucio's `opendata` section): the RSE expression whose disk replicas an entry's
   * `files` list (no default: Rucio refuses to list files without one), and the rule Rucio
   * reports as an entry's open data rule: the DID's rule of `rule_account` with `rule_copies`
   * copies on `rule_rse_expression` (none reported without an expression).
   */
  opendataRseExpression: text('opendata', 'rse_expression', ''),
  opendataRuleRseExpression: text('opendata', 'rule_rse_expression', ''),
  opendataRuleAccount: text('opendata', 'rule_account', 'root'),
  opendataRuleCopies: integer('opendata', 'rule_copies', 1, 1, 100),
  /**
   * With `rule_enable`, an entry turning PUBLIC gets that rule when the DID has none (on
   * `rule_rse_expression`, else `rse_expression`; grouping DATASET), with `rule_activity` and, with
   * `rule_asynchronous`, its locks placed by the judge later.
   */
  opendataRuleEnable: flag('opendata', 'rule_enable', false),
  opendataRuleActivity: text('opendata', 'rule_activity', 'User Subscriptions'),
  opendataRuleAsynchronous: flag('opendata', 'rule_asynchronous', false),
  /**
   * How a scope is read from a DID name without one (Rucio's `extract_scope` algorithms):
   * `def`, the scope before the first dot (two parts for `user.` and `group.`), or `dirac`, the
   * second path element of `/vo/scope/...` (the first for `/vo`). Rucio reads `common`, then
   * `policy`; an unknown name is `def`, as in Rucio.
   */
  extractScope: scopeConvention('common', 'extract_scope'),
  policyExtractScope: scopeConvention('policy', 'extract_scope'),
  /**
   * DIRAC's `add_files`: the lifetime (seconds) of the rule a new dataset gets, by scope, as a JSON
   * object of Python regular expressions (matched from the start of the scope, first match wins)
   * to seconds; `{}` for none. Checked when read: invalid JSON is refused, as in Rucio.
   */
  diracLifetime: text(
    'dirac',
    'lifetime',
    '{}',
    'a JSON object of scope patterns (RE2, without backreferences or lookarounds) to seconds',
    (value) => {
      try {
        parseDiracLifetimes(value);
        return true;
      } catch {
        return false;
      }
    },
  ),
  /**
   * Kronos (Rucio's `tracer-kronos` section): seconds between cycles (Rucio reads its broker
   * continuously; its dataset thread sleeps 60 s) and traces per batch (Rucio's `chunksize`).
   * Each batch records one event per replica and per dataset it read, however many traces.
   */
  kronosInterval: number('tracer-kronos', 'interval', 10, 0.1, DAY),
  kronosChunkSize: integer('tracer-kronos', 'chunksize', 1000, 1, 100_000),
  /**
   * Traces posted without a token (`POST /traces/`, `/nongrid_traces/`): how many one client
   * address may post per second on average, and at once (Rucio: no bound).
   */
  traceRatePerAddress: number('trace', 'rate_per_address', 100, 0.1, 1_000_000),
  traceBurstPerAddress: number('trace', 'burst_per_address', 2000, 1, 10_000_000),
  /** Hermes and its broker (Rucio's `hermes` and `messaging-hermes` sections). */
  ...HERMES_SETTINGS,
} as const;

const SETTING_BY_OPTION: ReadonlyMap<string, Setting<unknown>> = new Map(
  Object.values(SETTINGS).map((setting: Setting<unknown>) => [`${setting.section}\u0000${setting.option}`, setting]),
);

/** The declared setting of an option; undefined for free-form options. */
export const declaredSetting = (section: string, option: string): Setting<unknown> | undefined =>
  SETTING_BY_OPTION.get(`${section}\u0000${option}`);

/** Why the text cannot be stored for the option (what it takes), or undefined when it can. */
export const settingProblem = (section: string, option: string, value: string): string | undefined => {
  const setting = declaredSetting(section, option);
  return setting && !setting.accepts(value) ? `expected ${setting.allowed}` : undefined;
};
