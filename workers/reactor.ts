import { Queue } from 'bullmq';
import type { Event } from '../domain/shared/event.ts';
import { eventUpcasters } from '../domain/upcasters.ts';
import type { Clock } from '../infra/clock.ts';
import type { AllSubscription, EventStore, RecordedEvent } from '../infra/eventstore/eventStore.ts';
import type { Logger } from '../infra/logger.ts';
import { isTraceId, traceparentOf } from '../infra/tracing.ts';
import { redisConnectionOptions } from '../infra/queue/connection.ts';
import type { CollectionSpec, Document, ReadStore } from '../infra/readstore/readStore.ts';
import { reactsTo, type EventRole, type Role } from './role.ts';

/**
 * Which events become jobs on which queue, and the job data an event becomes (by default the
 * event itself, `EventJob`).
 */
export type Reaction = Readonly<{
  queue: string;
  eventTypes: readonly string[];
  jobOf?: (event: RecordedEvent) => object | undefined;
  /** Milliseconds the job waits, given the event and the time now. */
  delayOf?: (event: RecordedEvent, now: number) => number;
}>;

/** What a job carries by default: the triggering event. */
export type EventJob = Readonly<{
  eventId: string;
  type: string;
  streamName: string;
  position: string;
  data: unknown;
}>;

export const eventJob = (event: RecordedEvent): EventJob => ({
  eventId: event.id,
  type: event.type,
  streamName: event.streamName,
  position: event.position.toString(),
  data: event.data,
});

/** The reactions of the event roles: each role's queue gets the events it reacts to. */
export const reactionsOf = (roles: readonly Role[]): Reaction[] =>
  roles.flatMap((role) => (role.kind === 'event' ? [reactionOf(role)] : []));

const reactionOf = <E extends Event, Job extends object>(role: EventRole<E, Job>): Reaction => {
  // The one narrowing from a stored event to the role's union, sound because the reactor hands a
  // reaction only the events of the types it lists, their data upcast to the current shape.
  const isHandled = (event: RecordedEvent): event is RecordedEvent & E => Object.hasOwn(role.handles, event.type);
  const { delayOf } = role;
  return {
    queue: role.name,
    eventTypes: reactsTo(role),
    jobOf: (event) => (isHandled(event) ? role.jobOf(event, event) : undefined),
    ...(delayOf
      ? { delayOf: (event: RecordedEvent, now: number) => (isHandled(event) ? delayOf(event, event, now) : 0) }
      : {}),
  };
};

/**
 * The trace a job continues: its event's (the request's trace id, and the span that appended it
 * when spans were made, else one derived from the event's id), as a `traceparent` in the job's
 * options, where BullMQ keeps context to propagate (workers/workerHost.ts reads it). None for an
 * event written without a correlation id (before it was recorded, or by the service's start-up).
 */
export const jobTrace = (event: RecordedEvent): string | undefined => {
  const { correlationId, spanId } = event.metadata;
  if (!correlationId || !isTraceId(correlationId)) return undefined;
  return traceparentOf({ traceId: correlationId, ...(spanId ? { spanId } : {}) }, spanIdOf(event.id));
};

/** 16 hex digits of an event id, nonzero: the span a job's trace names when nobody exported one. */
const spanIdOf = (eventId: string): string => {
  const hex = eventId.replaceAll('-', '').slice(-16).padStart(16, '0');
  return /^0+$/.test(hex) ? '0000000000000001' : hex;
};

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
  private readonly queuesByType = new Map<
    string,
    {
      queue: Queue;
      jobOf: (event: RecordedEvent) => object | undefined;
      delayOf?: (event: RecordedEvent, now: number) => number;
    }[]
  >();
  private subscription: AllSubscription | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private checkpoint = 0n;

  constructor(private readonly options: ReactorOptions) {
    for (const reaction of options.reactions) {
      let queue = this.queues.get(reaction.queue);
      if (!queue) {
        queue = new Queue(reaction.queue, {
          connection: redisConnectionOptions(options.redisUrl),
          prefix: options.prefix ?? 'dms',
        });
        this.queues.set(reaction.queue, queue);
      }
      const target = {
        queue,
        jobOf: reaction.jobOf ?? eventJob,
        ...(reaction.delayOf ? { delayOf: reaction.delayOf } : {}),
      };
      for (const type of reaction.eventTypes)
        this.queuesByType.set(type, [...(this.queuesByType.get(type) ?? []), target]);
    }
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

  private async enqueue(batch: readonly RecordedEvent[]): Promise<void> {
    const jobsByQueue = new Map<
      Queue,
      { name: string; data: object; opts: { jobId: string; delay?: number; telemetry?: { metadata: string } } }[]
    >();
    for (const stored of batch) {
      const targets = this.queuesByType.get(stored.type);
      if (!targets) continue;
      // Roles read the event's data in the current shape of its type.
      const event = {
        ...stored,
        data: eventUpcasters.upcast({
          type: stored.type,
          data: stored.data,
          schemaVersion: stored.metadata.schemaVersion,
        }),
      };
      for (const { queue, jobOf, delayOf } of targets) {
        const data = jobOf(event);
        if (data === undefined) continue;
        const delay = delayOf?.(event, this.options.clock.now()) ?? 0;
        const jobs = jobsByQueue.get(queue) ?? [];
        const trace = jobTrace(event);
        jobs.push({
          name: event.type,
          data,
          opts: {
            jobId: event.id,
            ...(delay > 0 ? { delay } : {}),
            ...(trace ? { telemetry: { metadata: trace } } : {}),
          },
        });
        jobsByQueue.set(queue, jobs);
      }
    }
    for (const [queue, jobs] of jobsByQueue) await queue.addBulk(jobs);
    const last = batch[batch.length - 1]!;
    this.checkpoint = last.position;
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
