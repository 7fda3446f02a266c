import { Worker, type Job } from 'bullmq';
import type { Logger } from '../infra/logger.ts';
import { redisConnectionOptions } from '../infra/queue/connection.ts';
import type { EventJob } from './reactor.ts';

/** One daemon role: the queue it drains and what it does with a job. */
export type Processor = Readonly<{
  queue: string;
  /** Jobs processed at once by this process; default 1. */
  concurrency?: number;
  process(job: Job<EventJob>): Promise<void>;
}>;

/**
 * Runs the processors of this process as BullMQ workers. Processors change state only by issuing
 * commands; a failed job is retried by BullMQ and, since command event ids derive from the job's
 * event id, a retry never appends the same events twice.
 */
export class WorkerHost {
  private readonly workers: Worker<EventJob>[] = [];

  constructor(
    private readonly redisUrl: string,
    private readonly processors: readonly Processor[],
    private readonly logger: Logger,
    private readonly prefix = 'dms',
  ) {}

  start(): void {
    for (const processor of this.processors) {
      const worker = new Worker<EventJob>(processor.queue, (job) => processor.process(job), {
        connection: redisConnectionOptions(this.redisUrl),
        prefix: this.prefix,
        concurrency: processor.concurrency ?? 1,
      });
      worker.on('failed', (job, error) =>
        this.logger.warn({ queue: processor.queue, jobId: job?.id, err: error }, 'job failed'),
      );
      this.workers.push(worker);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close()));
  }
}
