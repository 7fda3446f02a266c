import { choice, flag, integer, number, patternList, typed, DAY } from '../config/settingKinds.ts';

/** The conveyor's `/config` options (domain/request/). */
export const CONVEYOR_SETTINGS = {
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
  /**
   * The same bound for requests of a tool whose jobs live in the submitting process (`posix`,
   * `mock`): submitting to it is an instant in memory, so a request SUBMITTING this long lost its
   * job with a submitter that died between the two steps, and is retried at once (not in Rucio).
   */
  finisherLocalSubmittingTimeout: number('conveyor-finisher', 'local_submitting_timeout', 60, 1, 30 * DAY),
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
} as const;
