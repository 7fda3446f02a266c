import { createHash } from 'node:crypto';
import type { JobReport, SubmittedJob, TransferJob, TransferTool } from './transferTool.ts';

/**
 * The `mock` tool: copies nothing, and reports the outcome the job asks for, for RSEs without
 * real storage, tests and load. A job's `attributes` may hold
 * - `mock_outcome`: `done` (default) or `failed`,
 * - `mock_failure_rate`: 0..1, the share of jobs that fail (chosen from the request id, so the same
 *   request always gets the same answer),
 * - `mock_delay_ms`: how long the job stays SUBMITTED (default the tool's `delayMs`, 0).
 * Jobs live in this process: after a restart they are LOST, as an FTS job purged by its server.
 */
export class MockTransferTool implements TransferTool {
  readonly name = 'mock';
  private readonly jobs = new Map<
    string,
    { job: TransferJob; submittedAt: number; fails: boolean; delayMs: number; cancelled: boolean }
  >();
  private sequence = 0;

  constructor(
    private readonly options: Readonly<{ delayMs?: number; failureRate?: number; now?: () => number }> = {},
  ) {}

  async submit(jobs: readonly TransferJob[]): Promise<SubmittedJob[]> {
    const now = this.now();
    return jobs.map((job) => {
      this.sequence += 1;
      const externalId = `mock-${process.pid}-${now}-${this.sequence}`;
      const outcome = job.attributes.mock_outcome;
      const rate = numberOr(job.attributes.mock_failure_rate, this.options.failureRate ?? 0);
      const fails = outcome === 'failed' || (outcome !== 'done' && rate > 0 && fractionOf(job.requestId) < rate);
      this.jobs.set(externalId, {
        job,
        submittedAt: now,
        fails,
        delayMs: numberOr(job.attributes.mock_delay_ms, this.options.delayMs ?? 0),
        cancelled: false,
      });
      return { requestId: job.requestId, externalId, externalHost: 'mock' };
    });
  }

  async poll(externalIds: readonly string[]): Promise<Map<string, JobReport>> {
    const now = this.now();
    this.forgetOldJobs(now);
    const reports = new Map<string, JobReport>();
    for (const externalId of externalIds) {
      const entry = this.jobs.get(externalId);
      if (!entry) {
        reports.set(externalId, {
          externalId,
          state: 'LOST',
          reason: 'Transfer job unknown to the mock tool',
          source: null,
          bytesTransferred: null,
          startedAt: null,
          finishedAt: null,
        });
        continue;
      }
      const startedAt = new Date(entry.submittedAt).toISOString();
      if (entry.cancelled) {
        reports.set(externalId, {
          externalId,
          state: 'FAILED',
          reason: 'Transfer cancelled',
          source: null,
          bytesTransferred: null,
          startedAt,
          finishedAt: new Date(now).toISOString(),
        });
        continue;
      }
      if (now - entry.submittedAt < entry.delayMs) {
        reports.set(externalId, {
          externalId,
          state: 'SUBMITTED',
          reason: null,
          source: null,
          bytesTransferred: null,
          startedAt,
          finishedAt: null,
        });
        continue;
      }
      const source = entry.job.sources[0] ?? null;
      const finishedAt = new Date(now).toISOString();
      reports.set(
        externalId,
        entry.fails
          ? {
              externalId,
              state: 'FAILED',
              reason: 'Mock transfer failed as asked',
              source,
              bytesTransferred: 0,
              startedAt,
              finishedAt,
            }
          : {
              externalId,
              state: 'DONE',
              reason: null,
              source,
              bytesTransferred: entry.job.file.bytes,
              startedAt,
              finishedAt,
            },
      );
    }
    return reports;
  }

  /** Only a job still SUBMITTED can be cancelled: a finished one keeps its outcome, as FTS answers 304 for it. */
  async cancel(externalIds: readonly string[]): Promise<void> {
    const now = this.now();
    for (const externalId of externalIds) {
      const entry = this.jobs.get(externalId);
      if (entry && now - entry.submittedAt < entry.delayMs) entry.cancelled = true;
    }
  }

  async close(): Promise<void> {
    this.jobs.clear();
  }

  /** Jobs are kept an hour after they could have finished, then forgotten (as FTS purges old jobs). */
  private forgetOldJobs(now: number): void {
    for (const [externalId, entry] of this.jobs) {
      if (now - entry.submittedAt - entry.delayMs > KEEP_MS) this.jobs.delete(externalId);
    }
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }
}

const KEEP_MS = 3_600_000;

const numberOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;

/** A stable number in [0, 1) from a request id. */
const fractionOf = (requestId: string): number =>
  createHash('sha1').update(requestId).digest().readUInt32BE(0) / 2 ** 32;
