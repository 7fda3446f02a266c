import { Queue, Worker, type Job } from 'bullmq';
import { hostname } from 'node:os';
import { settingValue } from '../domain/config/settings.ts';
import { dateOf } from '../infra/clock.ts';
import type { HeartbeatInput, HeartbeatStore } from '../infra/heartbeats/heartbeatStore.ts';
import type { Logger } from '../infra/logger.ts';
import { inSpan, newTraceId, parseTraceparent, type TraceContext } from '../infra/tracing.ts';
import { redisConnectionOptions } from '../infra/queue/connection.ts';
import type { CycleReport, JobTrigger, Role, ScheduledRole } from './role.ts';
import { RoleStatusStore } from './roleStatus.ts';
import type { WorkerContext } from './workerContext.ts';

export type WorkerHostOptions = Readonly<{
  redisUrl: string;
  roles: readonly Role[];
  context: WorkerContext;
  logger: Logger;
  /** BullMQ key prefix; default `dms`. */
  prefix?: string;
  /** How often schedules follow a changed interval in `/config`; default 10 s. */
  scheduleRefreshMs?: number;
  /** Told of every job that ended, with its outcome and duration (the metrics); default nobody. */
  onJobFinished?: (role: string, outcome: 'completed' | 'failed', seconds: number) => void;
  /** Where each running role beats (`GET /heartbeats`); default nowhere. */
  heartbeats?: HeartbeatStore;
  /** How often each role beats; default 30 s. A role silent for three beats is gone. */
  heartbeatIntervalMs?: number;
  /** How long a job stays with a process that stopped renewing its lock, and how often that is looked for; default 30 s. */
  jobLockMs?: number;
}>;

const HEARTBEAT_INTERVAL_MS = 30_000;

/** Jobs in one role's queue, by state. */
export type QueueJobCounts = Readonly<{ queue: string; counts: Readonly<Record<string, number>> }>;

const COUNTED_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized'] as const;

/**
 * Runs the roles of this process as BullMQ workers, each with its own concurrency, and keeps the
 * job schedulers of the scheduled roles at the interval `/config` gives (an upsert, so every
 * worker process may do it). Roles change state only by issuing commands; a failed job is retried
 * by BullMQ, and since the commands derive their event ids from the job, a retry never appends the
 * same events twice. Each job's report (or error) is recorded for `dms workers status`.
 */
export class WorkerHost {
  private readonly workers: Worker[] = [];
  private readonly queues = new Map<string, Queue>();
  private readonly intervals = new Map<string, number>();
  private readonly status: RoleStatusStore;
  private refresher: NodeJS.Timeout | undefined;
  private beating: NodeJS.Timeout | undefined;
  private lastBeat: Promise<void> = Promise.resolve();

  constructor(private readonly options: WorkerHostOptions) {
    this.status = new RoleStatusStore(options.redisUrl, this.prefix);
  }

  private get prefix(): string {
    return this.options.prefix ?? 'dms';
  }

  async start(): Promise<void> {
    for (const role of this.options.roles) {
      // Before its worker takes a job: cycles of an exclusive role never overlap, in any process.
      if (role.kind === 'scheduled' && role.exclusive) await this.queueOf(role.name).setGlobalConcurrency(1);
      const worker = new Worker(role.name, (job) => this.run(role, job), {
        connection: redisConnectionOptions(this.options.redisUrl),
        prefix: this.prefix,
        concurrency: role.concurrency ?? 1,
        lockDuration: this.options.jobLockMs ?? 30_000,
        stalledInterval: this.options.jobLockMs ?? 30_000,
      });
      worker.on('failed', (job, error) =>
        this.options.logger.warn(
          {
            daemon: role.name,
            jobId: job?.id,
            traceId: parseTraceparent(job?.opts.telemetry?.metadata)?.traceId,
            err: error,
          },
          'job failed',
        ),
      );
      worker.on('error', (error) => this.options.logger.warn({ daemon: role.name, err: error }, 'worker error'));
      this.workers.push(worker);
    }
    await this.refreshSchedules();
    this.refresher = setInterval(
      () =>
        void this.refreshSchedules().catch((error: unknown) =>
          this.options.logger.warn({ err: error }, 'could not refresh the schedules'),
        ),
      this.options.scheduleRefreshMs ?? 10_000,
    );
    this.refresher.unref();
    if (this.options.heartbeats) {
      await this.beat();
      this.beating = setInterval(() => {
        this.lastBeat = this.beat().catch((error: unknown) =>
          this.options.logger.warn({ err: error }, 'could not record the heartbeats'),
        );
      }, this.heartbeatIntervalMs);
      this.beating.unref();
    }
  }

  async stop(): Promise<void> {
    if (this.refresher) clearInterval(this.refresher);
    if (this.beating) clearInterval(this.beating);
    await this.lastBeat;
    // A role that stops says so at once, as Rucio's daemons do, rather than fading out.
    const store = this.options.heartbeats;
    if (store)
      await Promise.all(this.options.roles.map((role) => store.die(this.heartbeatOf(role.name)))).catch(
        (error: unknown) => this.options.logger.warn({ err: error }, 'could not remove the heartbeats'),
      );
    await Promise.all(this.workers.map((worker) => worker.close()));
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    await this.status.close();
  }

  /** Jobs by state in the queue of each role of this process (one Redis round trip per role). */
  async jobCounts(): Promise<QueueJobCounts[]> {
    return Promise.all(
      this.options.roles.map(async (role) => ({
        queue: role.name,
        counts: await this.queueOf(role.name).getJobCounts(...COUNTED_STATES),
      })),
    );
  }

  private get heartbeatIntervalMs(): number {
    return this.options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS;
  }

  /** The heartbeat of one role of this process: Node runs every role on the main thread. */
  private heartbeatOf(role: string): HeartbeatInput {
    return { executable: role, hostname: hostname(), pid: process.pid, threadId: 0, threadName: 'main', payload: null };
  }

  /**
   * One beat of every role whose worker runs, each expiring the beats of its executable silent
   * for three intervals (a process that died), then every heartbeat a day old (Rucio's expiry).
   */
  private async beat(): Promise<void> {
    const store = this.options.heartbeats;
    if (!store) return;
    const now = dateOf(this.options.context.clock);
    const olderThanSeconds = (3 * this.heartbeatIntervalMs) / 1000;
    for (const [index, role] of this.options.roles.entries()) {
      if (this.workers[index]?.isRunning()) await store.beat(this.heartbeatOf(role.name), now, olderThanSeconds);
    }
    await store.expire(now);
  }

  /**
   * One job in its trace: an event role's job continues the trace of the event that set it off
   * (the reactor put its `traceparent` in the job's options), a scheduled cycle starts one. As a
   * span when spans are made; the job's commands carry the trace id, and so do its log lines.
   */
  private run(role: Role, job: Job): Promise<CycleReport> {
    const given = parseTraceparent(job.opts.telemetry?.metadata);
    return inSpan(
      `${role.kind === 'event' ? 'job' : 'cycle'} ${role.name}`,
      {
        kind: 'consumer',
        ...(given ? { parent: given } : {}),
        attributes: { 'dms.daemon': role.name, 'dms.job_id': String(job.id) },
      },
      (span) => {
        const traceId = span?.spanContext().traceId ?? given?.traceId ?? newTraceId();
        return this.runInTrace(role, job, { traceId });
      },
    );
  }

  private async runInTrace(role: Role, job: Job, trace: TraceContext): Promise<CycleReport> {
    // When the job started is what it decides by (the clock); how long it took is measured apart.
    const trigger: JobTrigger = { jobId: String(job.id), startedAt: dateOf(this.options.context.clock), trace };
    const started = performance.now();
    const elapsedMs = () => performance.now() - started;
    const logger = this.options.logger.child({ daemon: role.name, jobId: trigger.jobId, traceId: trace.traceId });
    const context: WorkerContext = { ...this.options.context, logger };
    let told = false;
    const finished = (outcome: 'completed' | 'failed') => {
      if (!told) this.options.onJobFinished?.(role.name, outcome, elapsedMs() / 1000);
      told = true;
    };
    try {
      const report =
        role.kind === 'event' ? await role.process(job.data, trigger, context) : await role.run(trigger, context);
      finished('completed');
      await this.status.record(role.name, trigger.jobId, trigger.startedAt, elapsedMs(), report);
      if (report.done > 0 || report.skipped.length > 0)
        logger.info({ done: report.done, skipped: report.skipped.length }, 'role cycle');
      return report;
    } catch (error) {
      finished('failed');
      await this.status
        .record(role.name, trigger.jobId, trigger.startedAt, elapsedMs(), { error })
        .catch(() => undefined);
      throw error;
    }
  }

  /** Puts every scheduled role's job scheduler at the interval the configuration gives now. */
  private async refreshSchedules(): Promise<void> {
    const scheduled = this.options.roles.filter((role): role is ScheduledRole => role.kind === 'scheduled');
    if (scheduled.length === 0) return;
    const sections = await this.options.context.settings();
    for (const role of scheduled) {
      const everyMs = settingValue(sections, role.interval) * 1000;
      if (this.intervals.get(role.name) === everyMs) continue;
      await this.queueOf(role.name).upsertJobScheduler(role.name, { every: everyMs }, { name: 'cycle', data: {} });
      this.intervals.set(role.name, everyMs);
      this.options.logger.info({ daemon: role.name, everySeconds: everyMs / 1000 }, 'scheduled role');
    }
  }

  private queueOf(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: redisConnectionOptions(this.options.redisUrl), prefix: this.prefix });
      this.queues.set(name, queue);
    }
    return queue;
  }
}
