import { Queue } from 'bullmq';
import type { Clock } from '../infra/clock.ts';
import type { AllSubscription, EventStore, SubscriptionBatch } from '../infra/eventstore/eventStore.ts';
import type { Logger } from '../infra/logger.ts';
import { redisConnectionOptions } from '../infra/queue/connection.ts';
import type { CollectionSpec, Document, ReadStore } from '../infra/readstore/readStore.ts';
import { EventJobs, type PlannedJob, type Reaction } from './eventJobs.ts';

export { eventJob, jobTrace, reactionsOf, type EventJob, type Reaction } from './eventJobs.ts';

type CheckpointDocument = Document & { checkpoint: string; updatedAt: string };

export const workerCheckpointsCollection: CollectionSpec = { name: 'worker_checkpoints', indexes: [] };

export type ReactorOptions = Readonly<{
  eventStore: EventStore;
  readStore: ReadStore;
  redisUrl: string;
  reactions: readonly Reaction[];
  logger: Logger;
  /** The time delayed jobs are counted from (infra/clock.ts). */
  clock: Clock;
  /** Name of the checkpoint; default `reactor`. */
  name?: string;
  /** BullMQ key prefix; default `dms`. */
  prefix?: string;
  /** Events read per batch; default 500. */
  batchSize?: number;
}>;

/** How often a checkpoint that enqueued nothing is saved. */
const CHECKPOINT_EVERY_MS = 1000;

/**
 * Follows `$all` from its checkpoint and turns the events that need work into BullMQ jobs. The job
 * id is the event id, so replaying events after a crash (enqueued, checkpoint not yet saved)
 * enqueues nothing twice: BullMQ keeps one job per id.
 */
export class Reactor {
  private readonly queues = new Map<string, Queue>();
  private readonly jobs: EventJobs;
  private subscription: AllSubscription | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private checkpoint = 0n;

  constructor(private readonly options: ReactorOptions) {
    this.jobs = new EventJobs(options.reactions);
    for (const queue of this.jobs.queues())
      this.queues.set(
        queue,
        new Queue(queue, { connection: redisConnectionOptions(options.redisUrl), prefix: options.prefix ?? 'dms' }),
      );
  }

  get name(): string {
    return this.options.name ?? 'reactor';
  }

  get position(): bigint {
    return this.checkpoint;
  }

  async start(): Promise<void> {
    const stored = await this.checkpoints().get(this.name);
    this.checkpoint = BigInt(stored?.checkpoint ?? '0');
    this.savedCheckpoint = this.checkpoint;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.subscription?.close();
    await this.loop;
    await this.saveCheckpoint();
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }

  private checkpoints() {
    return this.options.readStore.collection<CheckpointDocument>(workerCheckpointsCollection);
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      this.subscription = this.options.eventStore.subscribeToAll({
        after: this.checkpoint,
        batchSize: this.options.batchSize ?? 500,
        // Only the events some role reacts to are read.
        eventTypes: this.jobs.eventTypes(),
      });
      try {
        for await (const batch of this.subscription) {
          await this.enqueue(batch);
          if (this.stopping) break;
        }
      } catch (error) {
        if (this.stopping) break;
        this.options.logger.error({ err: error, reactor: this.name }, 'reactor failed; retrying from its checkpoint');
        await new Promise((resolve) => setTimeout(resolve, 1000));
      } finally {
        await this.subscription.close();
      }
    }
  }

  private async enqueue({ events, through }: SubscriptionBatch): Promise<void> {
    const jobsByQueue = new Map<string, PlannedJob[]>();
    const now = this.options.clock.now();
    for (const event of events)
      for (const job of this.jobs.jobsOf(event, now)) {
        const jobs = jobsByQueue.get(job.queue);
        if (jobs) jobs.push(job);
        else jobsByQueue.set(job.queue, [job]);
      }
    for (const [queue, jobs] of jobsByQueue)
      await this.queues.get(queue)!.addBulk(jobs.map(({ name, data, opts }) => ({ name, data, opts: { ...opts } })));
    this.checkpoint = through;
    // A batch that enqueued nothing need not be remembered at once: replayed after a crash it
    // enqueues nothing again. Saving such checkpoints at most every second spares the read store
    // a write (and a wait for the projections' write lock) per 500 events under heavy traffic.
    if (jobsByQueue.size > 0 || Date.now() - this.savedAt >= CHECKPOINT_EVERY_MS) await this.saveCheckpoint();
  }

  private savedAt = 0;

  private async saveCheckpoint(): Promise<void> {
    if (this.checkpoint === this.savedCheckpoint) return;
    await this.checkpoints().replaceOne(
      { _id: this.name },
      { _id: this.name, checkpoint: this.checkpoint.toString(), updatedAt: new Date().toISOString() },
      { upsert: true },
    );
    this.savedCheckpoint = this.checkpoint;
    this.savedAt = Date.now();
  }

  private savedCheckpoint = 0n;
}
