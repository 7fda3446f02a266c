import { randomUUID } from 'node:crypto';
import { Fts3Client, ftsErrorMessage, jsonOf, type FtsCredentials } from './fts3Client.ts';
import {
  deterministicJobId,
  ftsPathSubmission,
  jobAnswersOf,
  POLLED_FILE_FIELDS,
  reportOfFtsJob,
  type SubmissionSettings,
} from './fts3Jobs.ts';
import { bareReport } from './transferTool.ts';
import type { JobReport, SubmittedJob, TransferEndpoint, TransferJob, TransferTool } from './transferTool.ts';
import { TransferToolError, TransferToolUnavailable, TransferToolWrongAnswer } from './transferToolErrors.ts';
import { isRecord } from '../typeGuards.ts';

export type Fts3TransferToolOptions = Readonly<
  {
    /** The FTS3 REST endpoint, one of the RSE's `fts` attribute (`https://fts3.example.org:8446`). */
    url: string;
    /** Client certificate, key and CA files (default none; see `ftsCredentialsFromEnvironment`). */
    credentials?: FtsCredentials;
    /** Check the server's certificate (default true; Rucio does not check it). */
    rejectUnauthorized?: boolean;
    /** Deadline of one submission (default 30 s). */
    submitTimeoutMs?: number;
    /** Deadline of one poll or cancel request (default 30 s). */
    queryTimeoutMs?: number;
    /** Job ids asked for in one `GET /jobs/<ids>` (default 100, Rucio's `fts_bulk`). */
    jobsPerPoll?: number;
    /** Submissions in flight at once (default 4). */
    submitConcurrency?: number;
    /** How long a job FTS refused at submission still answers FAILED (default an hour, then LOST). */
    keepRefusedMs?: number;
  } & Partial<SubmissionSettings>
>;

/** Rucio's `conveyor.use_deterministic_id` reads `whoami` at most every 15 minutes. */
const WHOAMI_CACHE_MS = 15 * 60 * 1000;
/** Ids of jobs no FTS server took; `poll` answers them from memory. */
export const REFUSED_PREFIX = 'fts3-refused-';

type Refused = { reason: string; at: number };

/**
 * The `fts3` tool: a client of one FTS3 server's REST API. `submit` posts one FTS job per
 * transfer (`POST /jobs`, Rucio's job JSON, fts3Jobs.ts); `poll` reads up to `jobsPerPoll` jobs
 * per `GET /jobs/<id,id,...>?files=...` and maps FTS states as Rucio does; `cancel` is
 * `DELETE /jobs/<id>`. One instance serves one server URL, so a registry keeps one per URL (the
 * RSE's `fts` attribute lists them, `ftsServersOf`), and `externalHost` is that URL.
 *
 * A job FTS does not take (refused, or no answer in time) gets a local id that `poll` reports
 * FAILED with FTS's words, as Rucio marks such a request SUBMISSION_FAILED. With `deterministicIds`,
 * a submission whose answer was lost, or that FTS says it already has (409), is taken as submitted
 * under the id FTS derives from the request id, so a retry never starts a second copy.
 *
 * Unverified against a live FTS server: tested against a fake server that answers with the shapes
 * of FTS's REST code (test/infra/fakeFts3Server.ts).
 */
export class Fts3TransferTool implements TransferTool {
  readonly name = 'fts3';
  readonly externalHost: string;
  private readonly client: Fts3Client;
  private readonly settings: SubmissionSettings;
  private readonly refused = new Map<string, Refused>();
  /** The sources of jobs this process submitted, to name the one FTS read. */
  private readonly sourcesOf = new Map<string, { sources: readonly TransferEndpoint[]; at: number }>();
  private whoami: { baseId: string; vo: string; at: number } | null = null;
  private asking: Promise<{ baseId: string; vo: string; at: number } | null> | null = null;

  constructor(private readonly options: Fts3TransferToolOptions) {
    this.client = new Fts3Client(options.url, {
      ...(options.credentials ? { credentials: options.credentials } : {}),
      ...(options.rejectUnauthorized !== undefined ? { rejectUnauthorized: options.rejectUnauthorized } : {}),
    });
    this.externalHost = this.client.url;
    this.settings = {
      verifyChecksum: options.verifyChecksum ?? 'both',
      sourceStrategy: options.sourceStrategy ?? 'orderly',
      defaultLifetimeSeconds: options.defaultLifetimeSeconds ?? 172_800,
      deterministicIds: options.deterministicIds ?? false,
    };
  }

  async submit(jobs: readonly TransferJob[]): Promise<SubmittedJob[]> {
    return this.submitPaths(jobs.map((job) => [job]));
  }

  /** One FTS job per path (a `multihop` job for several copies); every copy of a path answers the path's job id. */
  async submitPaths(paths: readonly (readonly TransferJob[])[]): Promise<SubmittedJob[]> {
    const concurrency = Math.max(1, this.options.submitConcurrency ?? 4);
    const answers: SubmittedJob[][] = new Array(paths.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let index = next++; index < paths.length; index = next++) {
        const path = paths[index]!;
        const externalId = await this.submitOne(path);
        answers[index] = path.map((job) => ({ requestId: job.requestId, externalId, externalHost: this.externalHost }));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, paths.length) }, worker));
    return answers.flat();
  }

  async poll(externalIds: readonly string[]): Promise<Map<string, JobReport>> {
    this.forgetOld();
    const found = new Map<string, JobReport>();
    const remote: string[] = [];
    for (const externalId of new Set(externalIds)) {
      if (externalId.startsWith(REFUSED_PREFIX)) found.set(externalId, this.refusedReport(externalId));
      else remote.push(externalId);
    }
    const perPoll = Math.max(1, this.options.jobsPerPoll ?? 100);
    for (let start = 0; start < remote.length; start += perPoll) {
      for (const report of await this.pollChunk(remote.slice(start, start + perPoll)))
        found.set(report.externalId, report);
    }
    const reports = new Map<string, JobReport>();
    for (const externalId of externalIds) {
      reports.set(externalId, found.get(externalId) ?? bareReport(externalId, 'SUBMITTED'));
    }
    return reports;
  }

  /** `DELETE /jobs/<id>` for each job; a job FTS does not know (404) or that already ended (304) is left as it is. */
  async cancel(externalIds: readonly string[]): Promise<void> {
    for (const externalId of externalIds) {
      if (externalId.startsWith(REFUSED_PREFIX)) continue;
      const what = `DELETE ${this.externalHost}/jobs/${externalId}`;
      const answer = await this.client.request('DELETE', `/jobs/${encodeURIComponent(externalId)}`, {
        timeoutMs: this.queryTimeout(),
      });
      if (answer.status === 200 || answer.status === 304 || answer.status === 404) continue;
      throw new TransferToolUnavailable(`${what}: ${answer.status} ${ftsErrorMessage(answer)}`);
    }
  }

  async close(): Promise<void> {
    this.client.close();
  }

  private async submitOne(path: readonly TransferJob[]): Promise<string> {
    const what = `POST ${this.externalHost}/jobs`;
    const job = path[0]!;
    const expectedId = this.settings.deterministicIds ? await this.expectedJobId(job.requestId) : null;
    // A token for FTS itself (audience its host, scope `fts`) replaces the certificate, over https only (Rucio).
    const bearerToken = this.externalHost.startsWith('https://') ? (path.at(-1)!.tokens?.fts ?? undefined) : undefined;
    let answer;
    try {
      answer = await this.client.request('POST', '/jobs', {
        body: ftsPathSubmission(path, this.settings),
        timeoutMs: this.options.submitTimeoutMs ?? 30_000,
        ...(bearerToken ? { bearerToken } : {}),
      });
    } catch (error) {
      if (!(error instanceof TransferToolError)) throw error;
      // The job may have reached FTS: with a deterministic id it can be found again.
      return expectedId ? this.remember(expectedId, job) : this.refuse(`${error.name}: ${error.message}`);
    }
    if (answer.status === 200) {
      try {
        const body = jsonOf(answer, what);
        if (!isRecord(body) || typeof body.job_id !== 'string' || body.job_id === '')
          throw new TransferToolWrongAnswer(`${what}: no job_id in ${answer.text.slice(0, 200)}`);
        return this.remember(body.job_id, job);
      } catch (error) {
        if (!(error instanceof TransferToolError)) throw error;
        return expectedId ? this.remember(expectedId, job) : this.refuse(`${error.name}: ${error.message}`);
      }
    }
    const refusal = `FTS ${this.externalHost} refused the job (${answer.status}): ${ftsErrorMessage(answer)}`;
    // 409: FTS has a job with this sid already, the one a lost answer created.
    if (answer.status === 409)
      return expectedId ? this.remember(expectedId, job) : this.refuse(`DuplicateFileTransferSubmission: ${refusal}`);
    // A server error may come after the job was stored; a client error (400, 401, 403) never does.
    if (answer.status >= 500 && expectedId) return this.remember(expectedId, job);
    return this.refuse(refusal);
  }

  private async pollChunk(externalIds: readonly string[]): Promise<JobReport[]> {
    const path = `/jobs/${externalIds.map(encodeURIComponent).join(',')}?files=${POLLED_FILE_FIELDS}`;
    const what = `GET ${this.externalHost}${path}`;
    const answer = await this.client.request('GET', path, { timeoutMs: this.queryTimeout() });
    if (answer.status === 404 && externalIds.length === 1) {
      return [
        bareReport(
          externalIds[0]!,
          'LOST',
          `FTS ${this.externalHost} does not know the job: ${ftsErrorMessage(answer)}`,
        ),
      ];
    }
    if (answer.status !== 200 && answer.status !== 207)
      throw new TransferToolUnavailable(`${what}: ${answer.status} ${ftsErrorMessage(answer)}`);
    return jobAnswersOf(jsonOf(answer, what), what).map((job) =>
      reportOfFtsJob(job.job_id, job, this.sourcesOf.get(job.job_id)?.sources),
    );
  }

  /** FTS's id for the request's job (Rucio's `__get_deterministic_id`), or null when `whoami` does not answer. */
  private async expectedJobId(requestId: string): Promise<string | null> {
    if (this.whoami === null || Date.now() - this.whoami.at > WHOAMI_CACHE_MS) {
      // Submissions side by side share one question.
      this.asking ??= this.askWhoami().finally(() => {
        this.asking = null;
      });
      this.whoami = await this.asking;
    }
    return this.whoami ? deterministicJobId(this.whoami.baseId, this.whoami.vo, requestId) : null;
  }

  private async askWhoami(): Promise<{ baseId: string; vo: string; at: number } | null> {
    try {
      const answer = await this.client.request('GET', '/whoami', { timeoutMs: this.queryTimeout() });
      const body = answer.status === 200 ? jsonOf(answer, 'whoami') : null;
      if (!isRecord(body)) return null;
      const vo: unknown = Array.isArray(body.vos) ? body.vos[0] : undefined;
      return typeof body.base_id === 'string' && typeof vo === 'string'
        ? { baseId: body.base_id, vo, at: Date.now() }
        : null;
    } catch (error) {
      if (error instanceof TransferToolError) return null;
      throw error;
    }
  }

  /** An id for a job that was never sent (no server to send it to); `poll` reports it FAILED with the reason. */
  refuseUnsent(reason: string): string {
    return this.refuse(reason);
  }

  private remember(externalId: string, job: TransferJob): string {
    // A path's job: the sources of its first copy (the others read where the copy before wrote).
    this.sourcesOf.set(externalId, { sources: job.sources, at: Date.now() });
    // A day of jobs is millions at a busy site: the oldest go first beyond the bound.
    for (const oldest of this.sourcesOf.keys()) {
      if (this.sourcesOf.size <= MAX_REMEMBERED_SOURCES) break;
      this.sourcesOf.delete(oldest);
    }
    return externalId;
  }

  private refuse(reason: string): string {
    const externalId = `${REFUSED_PREFIX}${randomUUID()}`;
    this.refused.set(externalId, { reason, at: Date.now() });
    return externalId;
  }

  private refusedReport(externalId: string): JobReport {
    const refused = this.refused.get(externalId);
    if (!refused) {
      return bareReport(externalId, 'LOST', 'Submission refused by FTS in an earlier process');
    }
    const at = new Date(refused.at).toISOString();
    return {
      externalId,
      state: 'FAILED',
      reason: refused.reason,
      source: null,
      bytesTransferred: null,
      startedAt: at,
      finishedAt: at,
    };
  }

  private forgetOld(): void {
    const keepMs = this.options.keepRefusedMs ?? 3_600_000;
    const now = Date.now();
    for (const [externalId, refused] of this.refused) if (now - refused.at > keepMs) this.refused.delete(externalId);
    // Sources only name the replica FTS read; a job polled after a day still gets it from the file metadata.
    for (const [externalId, entry] of this.sourcesOf)
      if (now - entry.at > 86_400_000) this.sourcesOf.delete(externalId);
  }

  private queryTimeout(): number {
    return this.options.queryTimeoutMs ?? 30_000;
  }
}

/** Jobs whose sources are remembered at most (a few hundred bytes each). */
const MAX_REMEMBERED_SOURCES = 100_000;

/** The FTS servers an `fts` RSE attribute lists (comma-separated, as Rucio splits it). */
export const ftsServersOf = (attribute: unknown): string[] =>
  typeof attribute === 'string'
    ? attribute
        .split(',')
        .map((server) => server.trim())
        .filter((server) => server.length > 0)
    : [];

/**
 * The server for a transfer, as Rucio's `_pick_fts_servers` and `submission_builder_for_path`:
 * both RSEs must have an `fts` attribute; the destination's list is used (the source's when the
 * source signs URLs for Google Cloud Storage, `sign_url = gcs`), and its first server. Null when
 * FTS cannot do the transfer.
 */
export const pickFtsServer = (
  sourceAttributes: Readonly<Record<string, unknown>>,
  destinationAttributes: Readonly<Record<string, unknown>>,
): string | null => {
  const source = ftsServersOf(sourceAttributes.fts);
  const destination = ftsServersOf(destinationAttributes.fts);
  if (source.length === 0 || destination.length === 0) return null;
  return (sourceAttributes.sign_url === 'gcs' ? source : destination)[0]!;
};
