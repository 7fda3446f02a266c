import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { redisConnectionOptions } from '../infra/queue/connection.ts';
import type { PlannedJob } from './eventJobs.ts';

/** What making sure of some jobs found: there already, added (they were missing), retried (they had failed). */
export type EnsuredJobs = { present: number; added: number; retried: number };

/** Jobs whose state is asked at once. */
const AT_ONCE = 64;

/**
 * The roles' queues as the reconciler uses them: it makes sure that jobs are there, each in any
 * state but lost. A job whose id BullMQ does not know (lost with Redis's last second, never
 * enqueued) is added; one that failed for good is tried again; one waiting, running, delayed or
 * done is left alone. Adding is idempotent by job id: a job the reactor enqueues at the same
 * moment is enqueued once.
 */
export class JobQueues {
  private readonly queues = new Map<string, Queue>();
  private client: Redis | undefined;

  constructor(
    private readonly redisUrl: string,
    private readonly prefix: string,
  ) {}

  async ensure(jobs: readonly PlannedJob[]): Promise<EnsuredJobs> {
    const ensured: EnsuredJobs = { present: 0, added: 0, retried: 0 };
    for (let start = 0; start < jobs.length; start += AT_ONCE)
      await Promise.all(
        jobs.slice(start, start + AT_ONCE).map(async (job) => {
          const queue = this.queueOf(job.queue);
          const state = await queue.getJobState(job.opts.jobId);
          if (state === 'unknown') {
            await queue.add(job.name, job.data, { ...job.opts });
            ensured.added += 1;
          } else if (state === 'failed') {
            await (await queue.getJob(job.opts.jobId))?.retry('failed', { resetAttemptsMade: true });
            ensured.retried += 1;
          } else ensured.present += 1;
        }),
      );
    return ensured;
  }

  /**
   * The id of the data this Redis holds: written by the first to ask, and gone only with all of
   * Redis's data (a server that came back empty, another server at the same address), when the
   * next to ask writes another.
   */
  async dataEpoch(): Promise<string> {
    this.client ??= new Redis(this.redisUrl, { maxRetriesPerRequest: null, lazyConnect: false });
    const key = `${this.prefix}:reconciler:epoch`;
    await this.client.set(key, randomUUID(), 'NX');
    return (await this.client.get(key)) ?? '';
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    this.queues.clear();
    this.client?.disconnect();
    this.client = undefined;
  }

  private queueOf(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: redisConnectionOptions(this.redisUrl), prefix: this.prefix });
      this.queues.set(name, queue);
    }
    return queue;
  }
}
