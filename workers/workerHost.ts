import { Queue, Worker, type Job } from 'bullmq';
import { settingValue } from '../domain/config/settings.ts';
import type { Logger } from '../infra/logger.ts';
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
}>;

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

  constructor(private readonly options: WorkerHostOptions) {
    this.status = new RoleStatusStore(options.redisUrl, this.prefix);
  }

  private get prefix(): string {
    return this.options.prefix ?? 'dms';
  }

  async start(): Promise<void> {
    for (const role of this.options.roles) {
      const worker = new Worker(role.name, (job) => this.run(role, job), {
        connection: redisConnectionOptions(this.options.redisUrl),
        prefix: this.prefix,
        concurrency: role.concurrency ?? 1,
      });
      worker.on('failed', (job, error) =>
        this.options.logger.warn({ daemon: role.name, jobId: job?.id, err: error }, 'job failed'),
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
  }

  async stop(): Promise<void> {
    if (this.refresher) clearInterval(this.refresher);
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

  private async run(role: Role, job: Job): Promise<CycleReport> {
    const trigger: JobTrigger = { jobId: String(job.id), startedAt: new Date() };
    let told = false;
    const finished = (outcome: 'completed' | 'failed') => {
      if (!told) this.options.onJobFinished?.(role.name, outcome, (Date.now() - trigger.startedAt.getTime()) / 1000);
      told = true;
    };
    try {
      const report =
        role.kind === 'event'
          ? await role.process(job.data, trigger, this.options.context)
          : await role.run(trigger, this.options.context);
      finished('completed');
      await this.status.record(role.name, trigger.jobId, trigger.startedAt, report);
      if (report.done > 0 || report.skipped.length > 0) {
        this.options.logger.info(
          { daemon: role.name, jobId: trigger.jobId, done: report.done, skipped: report.skipped.length },
          'role cycle',
        );
      }
      return report;
    } catch (error) {
      finished('failed');
      await this.status.record(role.name, trigger.jobId, trigger.startedAt, { error }).catch(() => undefined);
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
