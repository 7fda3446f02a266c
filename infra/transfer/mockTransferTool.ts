import { createHash } from 'node:crypto';
import { bareReport } from './transferTool.ts';
import type { JobReport, SubmittedJob, TransferEndpoint, TransferJob, TransferTool } from './transferTool.ts';

/**
 * The `mock` tool: copies nothing, and reports the outcome the job asks for, for RSEs without
 * real storage, tests and load. A job's `attributes` may hold
 * - `mock_outcome`: `done` (default) or `failed`,
 * - `mock_failure_rate`: 0..1, the share of jobs that fail (chosen from the request id, so the same
 *   request always gets the same answer),
 * - `mock_delay_ms`: how long the job stays SUBMITTED (default the tool's `delayMs`, 0);
 * - `simulated_recall_ms`: for a job from tape with a bring-online bound, how long bringing the
 *   file online takes before that (default the tool's `recallDelayMs`, 0), reported as its
 *   staging times.
 * Jobs live in this process: after a restart they are LOST, as an FTS job purged by its server.
 * A job is kept an hour after it could have finished, at most `MAX_JOBS` of them (the oldest go
 * first), and only what its report needs: at a hundred transfers a second, whole jobs kept an
 * hour held most of the process's memory.
 */
export class MockTransferTool implements TransferTool {
  readonly name = 'mock';
  private readonly jobs = new Map<
    string,
    {
      submittedAt: number;
      fails: boolean;
      delayMs: number;
      cancelled: boolean;
      source: TransferEndpoint | null;
      bytes: number;
      /** The simulated recall before the copy, for a job from tape; null without one. */
      recallMs: number | null;
    }
  >();
  private sequence = 0;

  constructor(
    private readonly options: Readonly<{
      delayMs?: number;
      failureRate?: number;
      recallDelayMs?: number;
      now?: () => number;
    }> = {},
  ) {}

  async submit(jobs: readonly TransferJob[]): Promise<SubmittedJob[]> {
    const now = this.now();
    const submitted = jobs.map((job) => {
      this.sequence += 1;
      const externalId = `mock-${process.pid}-${now}-${this.sequence}`;
      const outcome = job.attributes.mock_outcome;
      const rate = numberOr(job.attributes.mock_failure_rate, this.options.failureRate ?? 0);
      const fails = outcome === 'failed' || (outcome !== 'done' && rate > 0 && fractionOf(job.requestId) < rate);
      const recallMs =
        job.sourceType === 'TAPE' && job.bringOnline !== undefined && job.bringOnline !== null
          ? Math.max(0, numberOr(job.attributes.simulated_recall_ms, this.options.recallDelayMs ?? 0))
          : null;
      this.jobs.set(externalId, {
        submittedAt: now,
        fails,
        delayMs: (recallMs ?? 0) + numberOr(job.attributes.mock_delay_ms, this.options.delayMs ?? 0),
        cancelled: false,
        source: job.sources[0] ?? null,
        bytes: job.file.bytes,
        recallMs,
      });
      return { requestId: job.requestId, externalId, externalHost: 'mock' };
    });
    for (const externalId of this.jobs.keys()) {
      if (this.jobs.size <= MAX_JOBS) break;
      this.jobs.delete(externalId);
    }
    return submitted;
  }

  async poll(externalIds: readonly string[]): Promise<Map<string, JobReport>> {
    const now = this.now();
    this.forgetOldJobs(now);
    const reports = new Map<string, JobReport>();
    for (const externalId of externalIds) {
      const entry = this.jobs.get(externalId);
      if (!entry) {
        reports.set(externalId, bareReport(externalId, 'LOST', 'Transfer job unknown to the mock tool'));
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
      const source = entry.source;
      const finishedAt = new Date(now).toISOString();
      const staging =
        entry.recallMs === null
          ? {}
          : {
              stagingStartedAt: startedAt,
              stagingFinishedAt: new Date(entry.submittedAt + entry.recallMs).toISOString(),
            };
      reports.set(
        externalId,
        entry.fails
          ? {
              ...staging,
              externalId,
              state: 'FAILED',
              reason: 'Mock transfer failed as asked',
              source,
              bytesTransferred: 0,
              startedAt,
              finishedAt,
            }
          : {
              ...staging,
              externalId,
              state: 'DONE',
              reason: null,
              source,
              bytesTransferred: entry.bytes,
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

  /**
   * Jobs are kept an hour after they could have finished, then forgotten (as FTS purges old jobs).
   * They are in the order of submission: the walk stops at the first one submitted within the hour.
   */
  private forgetOldJobs(now: number): void {
    for (const [externalId, entry] of this.jobs) {
      if (now - entry.submittedAt <= KEEP_MS) break;
      if (now - entry.submittedAt - entry.delayMs > KEEP_MS) this.jobs.delete(externalId);
    }
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }
}

const KEEP_MS = 3_600_000;

/** Jobs kept at most (about 200 bytes each); a poller asks for its jobs within seconds. */
export const MAX_JOBS = 100_000;

const numberOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;

/** A stable number in [0, 1) from a request id. */
const fractionOf = (requestId: string): number =>
  createHash('sha1').update(requestId).digest().readUInt32BE(0) / 2 ** 32;
