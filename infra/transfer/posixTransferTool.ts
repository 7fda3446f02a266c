import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { copyVerified, pathOfFilePfn, type CopyResult } from './posixCopy.ts';
import { bareReport } from './transferTool.ts';
import type { JobReport, SubmittedJob, TransferEndpoint, TransferJob, TransferTool } from './transferTool.ts';

export type PosixTransferToolOptions = Readonly<{
  /**
   * Copies streaming at once (default 4); the others wait in order of priority, then of
   * submission. A copy whose bytes are written and verified gives its place to the next while it
   * waits for fsync and rename, up to as many such copies again.
   */
  concurrency?: number;
  /** Bytes per read and write (default 1 MiB). */
  chunkBytes?: number;
  /** Bytes a copy writes between two background flushes to disk (default 4 MiB); the final fsync then waits only for the rest. */
  writeBehindBytes?: number;
  /** A cap on each copy's rate in bytes per second (default none). */
  maxBytesPerSecond?: number | null;
  /** A temporary file nobody wrote to for this long is the leftover of a dead copy (default 10 minutes). */
  staleTemporaryMs?: number;
  /** How long a finished job still answers `poll` (default an hour, then LOST, as FTS purges old jobs). */
  keepFinishedMs?: number;
  /**
   * How long bringing a file online from a tape source takes, in milliseconds, when the job's
   * attributes do not say (`simulated_recall_ms`, from the source RSE's attribute); default 0.
   */
  recallDelayMs?: number;
  now?: () => number;
}>;

type Entry = {
  readonly externalId: string;
  readonly job: TransferJob;
  /** The destination's path (or PFN when it has none): two jobs never write one destination at once. */
  readonly destinationKey: string;
  phase: 'staging' | 'queued' | 'running' | 'done' | 'failed';
  stagingStartedAt: number | null;
  stagingFinishedAt: number | null;
  /** The simulated recall under way. */
  recall: NodeJS.Timeout | null;
  reason: string | null;
  source: TransferEndpoint | null;
  bytesTransferred: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  abort: AbortController | null;
  running: Promise<void> | null;
};

const CANCELLED = 'Transfer cancelled';

/** FTS's words when a file does not come online in time. */
const BRING_ONLINE_TIMEOUT = 'STAGING [62] bring-online timeout has been exceeded';

/** How long a recalled file stays online when the job names no pin lifetime (Rucio's default `copy_pin_lifetime`). */
const DEFAULT_PIN_SECONDS = 172_800;

/** Jobs kept at most, finished ones dropped oldest first beyond it: a poller asks for its jobs within seconds. */
const MAX_KEPT_JOBS = 10_000;

/**
 * The `posix` tool: real copies between RSEs whose protocol is `file`, both mounted on this
 * machine (PFN `file://<host>/<prefix><path>`). Each job copies from the first source that gives
 * the catalogue's size and checksum (adler32, or md5 when that is all the file has) into a
 * temporary name beside the destination, then fsyncs and renames it into place (posixCopy.ts). A
 * destination that already holds a verified copy is DONE without copying, so a job submitted
 * again after a crash costs one read.
 *
 * `submit` only queues: copies run in the background, `concurrency` at a time. Jobs live in this
 * process: after a restart, or when polled by another process, they are LOST, and the conveyor's
 * retry finds the verified copy if the first attempt had finished.
 *
 * Tape is simulated: a job whose source is TAPE with a `bringOnline` bound first brings the file
 * online, which takes the recall delay (`simulated_recall_ms` in the job's attributes, else the
 * tool's `recallDelayMs`) unless the file is still online from an earlier recall (it stays so for
 * the job's pin lifetime); a recall longer than the bound fails as FTS's bring-online timeout. A
 * STAGEIN job ends there: its source is its destination, which the copy finds verified.
 */
export class PosixTransferTool implements TransferTool {
  readonly name = 'posix';
  readonly externalHost = `posix://${hostname()}/${process.pid}`;
  private readonly entries = new Map<string, Entry>();
  /** Queued jobs by priority (index 1 to 5), first in first out within one. */
  private readonly queues: Entry[][] = [[], [], [], [], [], []];
  /** Queued jobs whose destination another job is writing, by destination. */
  private readonly blocked = new Map<string, Entry[]>();
  private readonly busyDestinations = new Set<string>();
  /** Files recalled from tape, by path, until when they stay online. */
  private readonly online = new Map<string, number>();
  /** Copies reading and writing bytes. */
  private running = 0;
  /** Copies that gave their place and wait for their bytes to reach the disk. */
  private finishing = 0;
  private closed = false;
  private readonly concurrency: number;

  constructor(private readonly options: PosixTransferToolOptions = {}) {
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
  }

  /** Copies reading and writing bytes now (at most `concurrency`). */
  get runningCopies(): number {
    return this.running;
  }

  /** Copies whose bytes are written and that wait for fsync and rename (at most `concurrency`). */
  get finishingCopies(): number {
    return this.finishing;
  }

  async submit(jobs: readonly TransferJob[]): Promise<SubmittedJob[]> {
    if (this.closed) throw new Error('the posix transfer tool is closed');
    const submitted = jobs.map((job) => {
      const entry: Entry = {
        externalId: `posix-${randomUUID()}`,
        job,
        destinationKey: destinationKeyOf(job),
        phase: 'queued',
        stagingStartedAt: null,
        stagingFinishedAt: null,
        recall: null,
        reason: null,
        source: null,
        bytesTransferred: null,
        startedAt: null,
        finishedAt: null,
        abort: null,
        running: null,
      };
      this.entries.set(entry.externalId, entry);
      if (needsStaging(job)) this.stage(entry);
      else this.queues[priorityIndex(job.priority)]!.push(entry);
      return { requestId: job.requestId, externalId: entry.externalId, externalHost: this.externalHost };
    });
    this.startCopies();
    return submitted;
  }

  async poll(externalIds: readonly string[]): Promise<Map<string, JobReport>> {
    this.forgetOldJobs();
    const reports = new Map<string, JobReport>();
    for (const externalId of externalIds) {
      const entry = this.entries.get(externalId);
      reports.set(externalId, entry ? reportOf(entry) : lostReport(externalId));
    }
    return reports;
  }

  /** Stops the named jobs: a queued one never starts, a running one stops and its temporary file is removed before this returns. */
  async cancel(externalIds: readonly string[]): Promise<void> {
    const stopping: Promise<void>[] = [];
    for (const externalId of externalIds) {
      const entry = this.entries.get(externalId);
      if (!entry) continue;
      if (entry.phase === 'staging') {
        if (entry.recall) clearTimeout(entry.recall);
        entry.recall = null;
        this.finish(entry, { phase: 'failed', reason: CANCELLED });
      } else if (entry.phase === 'queued') {
        this.unqueue(entry);
        this.finish(entry, { phase: 'failed', reason: CANCELLED });
      } else if (entry.phase === 'running') {
        entry.abort?.abort();
        if (entry.running) stopping.push(entry.running);
      }
    }
    await Promise.all(stopping);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.entries.values()) if (entry.recall) clearTimeout(entry.recall);
    for (const queue of this.queues) queue.length = 0;
    this.blocked.clear();
    const stopping = [...this.entries.values()]
      .filter((entry) => entry.phase === 'running')
      .flatMap((entry) => {
        entry.abort?.abort();
        return entry.running ? [entry.running] : [];
      });
    await Promise.all(stopping);
    this.entries.clear();
  }

  /** Brings the job's source online (a simulated tape recall), then queues its copy. */
  private stage(entry: Entry): void {
    const { job } = entry;
    const now = this.now();
    const sourceKey = stagingKeyOf(job);
    entry.phase = 'staging';
    entry.stagingStartedAt = now;
    const online = (this.online.get(sourceKey) ?? 0) > now;
    const recall = online
      ? 0
      : Math.max(0, numberOr(job.attributes.simulated_recall_ms, this.options.recallDelayMs ?? 0));
    const bound = (job.bringOnline ?? 0) * 1000;
    const timedOut = bound > 0 && recall > bound;
    entry.recall = setTimeout(
      () => {
        entry.recall = null;
        if (this.closed || entry.phase !== 'staging') return;
        if (timedOut) return this.finish(entry, { phase: 'failed', reason: BRING_ONLINE_TIMEOUT });
        const at = this.now();
        entry.stagingFinishedAt = at;
        const pin =
          typeof job.attributes.lifetime === 'number' && job.attributes.lifetime > 0
            ? job.attributes.lifetime
            : DEFAULT_PIN_SECONDS;
        this.online.set(sourceKey, Math.max(this.online.get(sourceKey) ?? 0, at + pin * 1000));
        entry.phase = 'queued';
        this.queues[priorityIndex(job.priority)]!.push(entry);
        this.startCopies();
      },
      timedOut ? bound : recall,
    );
  }

  private startCopies(): void {
    while (!this.closed && this.running < this.concurrency) {
      const entry = this.nextQueued();
      if (!entry) return;
      this.start(entry);
    }
  }

  private nextQueued(): Entry | undefined {
    for (let priority = this.queues.length - 1; priority >= 0; priority -= 1) {
      const queue = this.queues[priority]!;
      while (queue.length > 0) {
        const entry = queue.shift()!;
        if (!this.busyDestinations.has(entry.destinationKey)) return entry;
        const waiting = this.blocked.get(entry.destinationKey) ?? [];
        waiting.push(entry);
        this.blocked.set(entry.destinationKey, waiting);
      }
    }
    return undefined;
  }

  private start(entry: Entry): void {
    const abort = new AbortController();
    let gaveItsPlace = false;
    entry.phase = 'running';
    entry.startedAt = this.now();
    entry.abort = abort;
    this.running += 1;
    this.busyDestinations.add(entry.destinationKey);
    entry.running = copyVerified(entry.job, {
      chunkBytes: this.options.chunkBytes ?? 1024 * 1024,
      writeBehindBytes: this.options.writeBehindBytes ?? 4 * 1024 * 1024,
      maxBytesPerSecond: this.options.maxBytesPerSecond ?? null,
      staleTemporaryMs: this.options.staleTemporaryMs ?? 600_000,
      signal: abort.signal,
      onStreamed: () => {
        if (this.finishing >= this.concurrency) return;
        gaveItsPlace = true;
        this.running -= 1;
        this.finishing += 1;
        this.startCopies();
      },
    })
      .then(
        (result) => this.finish(entry, outcomeOf(result)),
        (error: unknown) =>
          this.finish(entry, {
            phase: 'failed',
            reason: abort.signal.aborted ? CANCELLED : `posix copy failed: ${String(error)}`,
          }),
      )
      .finally(() => {
        if (gaveItsPlace) this.finishing -= 1;
        else this.running -= 1;
        this.busyDestinations.delete(entry.destinationKey);
        const waiting = this.blocked.get(entry.destinationKey);
        if (waiting) {
          this.blocked.delete(entry.destinationKey);
          for (const queued of waiting.reverse()) this.queues[priorityIndex(queued.job.priority)]!.unshift(queued);
        }
        entry.abort = null;
        entry.running = null;
        this.startCopies();
      });
  }

  private finish(
    entry: Entry,
    outcome: Readonly<{
      phase: 'done' | 'failed';
      reason: string | null;
      source?: TransferEndpoint | null;
      bytes?: number;
    }>,
  ): void {
    entry.phase = outcome.phase;
    entry.reason = outcome.reason;
    entry.source = outcome.source ?? null;
    entry.bytesTransferred = outcome.bytes ?? 0;
    entry.finishedAt = this.now();
  }

  private unqueue(entry: Entry): void {
    const queue = this.queues[priorityIndex(entry.job.priority)]!;
    const index = queue.indexOf(entry);
    if (index >= 0) queue.splice(index, 1);
    const waiting = this.blocked.get(entry.destinationKey);
    const blockedIndex = waiting?.indexOf(entry) ?? -1;
    if (waiting && blockedIndex >= 0) waiting.splice(blockedIndex, 1);
  }

  /** Finished jobs go after `keepFinishedMs`, and the oldest first beyond MAX_KEPT_JOBS jobs in all. */
  private forgetOldJobs(): void {
    const keepMs = this.options.keepFinishedMs ?? 3_600_000;
    const now = this.now();
    let excess = this.entries.size - MAX_KEPT_JOBS;
    for (const [externalId, entry] of this.entries) {
      if (entry.finishedAt === null) continue;
      if (excess > 0 || now - entry.finishedAt > keepMs) {
        this.entries.delete(externalId);
        excess -= 1;
      }
    }
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }
}

const outcomeOf = (result: CopyResult) => {
  switch (result.outcome) {
    case 'copied':
      return { phase: 'done' as const, reason: null, source: result.source, bytes: result.bytes };
    case 'already-there':
      return { phase: 'done' as const, reason: null, source: null, bytes: 0 };
    case 'failed':
      return { phase: 'failed' as const, reason: result.reason };
  }
};

const destinationKeyOf = (job: TransferJob): string => {
  try {
    return pathOfFilePfn(job.destination.pfn);
  } catch {
    return job.destination.pfn;
  }
};

/** Rucio's priorities run from 1 to 5; anything else is clamped. */
const priorityIndex = (priority: number): number =>
  Math.min(5, Math.max(1, Math.round(Number.isFinite(priority) ? priority : 3)));

const iso = (time: number | null): string | null => (time === null ? null : new Date(time).toISOString());

const reportOf = (entry: Entry): JobReport => ({
  externalId: entry.externalId,
  state: entry.phase === 'done' ? 'DONE' : entry.phase === 'failed' ? 'FAILED' : 'SUBMITTED',
  reason: entry.reason,
  source: entry.source,
  bytesTransferred: entry.bytesTransferred,
  startedAt: iso(entry.startedAt),
  finishedAt: iso(entry.finishedAt),
  ...(entry.stagingStartedAt !== null
    ? { stagingStartedAt: iso(entry.stagingStartedAt), stagingFinishedAt: iso(entry.stagingFinishedAt) }
    : {}),
});

/** A job from tape with a bring-online bound stages its source first (as FTS with `bring_online`). */
const needsStaging = (job: TransferJob): boolean =>
  job.sourceType === 'TAPE' && job.bringOnline !== undefined && job.bringOnline !== null;

/** The file a recall brings online: its source's path. */
const stagingKeyOf = (job: TransferJob): string => {
  const pfn = job.sources[0]?.pfn ?? '';
  try {
    return pathOfFilePfn(pfn);
  } catch {
    return pfn;
  }
};

const numberOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value)
    ? value
    : typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))
      ? Number(value)
      : fallback;

const lostReport = (externalId: string): JobReport =>
  bareReport(
    externalId,
    'LOST',
    'Transfer job unknown to the posix tool (its jobs live in the process that submitted them)',
  );
