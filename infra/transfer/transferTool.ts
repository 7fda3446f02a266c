/**
 * The transfer tool port: what the conveyor asks of whatever copies files between storage
 * elements (Rucio's `Transfertool`). The submitter hands over jobs, the poller asks for their
 * state, the finisher never talks to the tool. A tool is chosen per RSE by its `transfertool`
 * attribute (default: configuration `conveyor.transfertool`); every implementation passes the
 * same contract suite.
 *
 * Ids: the tool names each submitted job (`externalId`), and the request remembers it; a report
 * is accepted only for the request's current job, so a late report of an earlier attempt
 * changes nothing.
 */

/**
 * One endpoint of a copy: the RSE and the physical file name there. `root`: for a PFN of a `file`
 * protocol, the protocol's prefix, which the `posix` tool keeps every path inside (it refuses a
 * `file` endpoint without one); other tools ignore it.
 */
export type TransferEndpoint = Readonly<{ rse: string; rseId: string; pfn: string; root?: string }>;

/** What the destination must hold once the copy is verified. */
export type TransferFile = Readonly<{
  scope: string;
  name: string;
  bytes: number;
  /** 8 lowercase hex digits, or null when the catalogue has none. */
  adler32: string | null;
  /** 32 lowercase hex digits, or null. */
  md5: string | null;
}>;

export type TransferJob = Readonly<{
  /** The request this job serves; tools echo it in their reports. */
  requestId: string;
  file: TransferFile;
  /** Candidate sources in the order the conveyor ranked them; the tool uses the first that works. */
  sources: readonly TransferEndpoint[];
  destination: TransferEndpoint;
  activity: string;
  /** 1 (lowest) to 5, as Rucio's priorities. */
  priority: number;
  /** The request's `attributes` (JSON object), which the `mock` tool reads its outcome from. */
  attributes: Readonly<Record<string, unknown>>;
  /**
   * TRANSFER (the default) copies the file; STAGEIN only brings it online where it is (Rucio's
   * stager: the source and destination URLs are the same).
   */
  requestType?: 'TRANSFER' | 'STAGEIN';
  /** TAPE when the first source is on tape or needs staging (Rucio's `src_type`); DISK by default. */
  sourceType?: 'DISK' | 'TAPE';
  /** TAPE when the destination is a tape RSE (Rucio's `dst_type`); DISK by default. */
  destinationType?: 'DISK' | 'TAPE';
  /**
   * For a TAPE source: how many seconds the tool may take to bring the file online before the
   * copy (FTS's `bring_online`, Rucio's `conveyor.bring_online`); null or absent: no staging.
   */
  bringOnline?: number | null;
  /** For a TAPE destination: how long the tool waits for the file to reach tape (FTS's `archive_timeout`). */
  archiveTimeout?: number | null;
  /**
   * OAuth2 tokens for the endpoints (Rucio's `source_tokens` and `destination_tokens`: one per
   * source, in order, and one for the destination), and for the FTS server itself; absent: the
   * tool's certificate.
   */
  tokens?: Readonly<{ sources: readonly string[]; destination: string; fts?: string | null }>;
}>;

export type SubmittedJob = Readonly<{ requestId: string; externalId: string; externalHost: string }>;

/**
 * The state of one job as the tool knows it. LOST: the tool does not know the job (a tool that
 * restarted, a job the FTS server purged); the finisher then treats the transfer as failed.
 */
export type JobState = 'SUBMITTED' | 'DONE' | 'FAILED' | 'LOST';

export type JobReport = Readonly<{
  externalId: string;
  state: JobState;
  /** Why it failed (checksums in the words when they differ), null otherwise. */
  reason: string | null;
  /** The source that was read, when known. */
  source: TransferEndpoint | null;
  bytesTransferred: number | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** When the tool started and finished bringing a tape source online (FTS's `staging_start`, `staging_finished`). */
  stagingStartedAt?: string | null;
  stagingFinishedAt?: string | null;
  /** A job of several copies (a multihop path): the report of each, by request id; the job's own fields say how the job stands. */
  byRequest?: ReadonlyMap<string, JobReport>;
}>;

/** A report of a job's state alone (and why): no source, bytes or times known. */
export const bareReport = (externalId: string, state: JobState, reason: string | null = null): JobReport => ({
  externalId,
  state,
  reason,
  source: null,
  bytesTransferred: null,
  startedAt: null,
  finishedAt: null,
});

export interface TransferTool {
  /** `posix`, `mock`, `fts3`: the name the `transfertool` attribute gives. */
  readonly name: string;
  /** Starts the jobs; answers in the same order. A job the tool refuses at once is reported FAILED by `poll`. */
  submit(jobs: readonly TransferJob[]): Promise<SubmittedJob[]>;
  /**
   * Tools that run the copies of a multihop path as one job (FTS's `multihop` jobs): each path is
   * its copies in order, the copy after each reading where the one before wrote; every copy of a
   * path gets the path's job id. Tools without it take a path one copy at a time.
   */
  submitPaths?(paths: readonly (readonly TransferJob[])[]): Promise<SubmittedJob[]>;
  /** The state of each named job; every id asked for is in the answer (LOST when unknown). */
  poll(externalIds: readonly string[]): Promise<Map<string, JobReport>>;
  /** Asks the tool to stop the jobs; unknown ids are ignored. */
  cancel(externalIds: readonly string[]): Promise<void>;
  close(): Promise<void>;
}
