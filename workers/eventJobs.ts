import type { JobsOptions } from 'bullmq';
import type { Event } from '../domain/shared/event.ts';
import { eventUpcasters } from '../domain/areas.ts';
import type { RecordedEvent } from '../infra/eventstore/eventStore.ts';
import { isTraceId, traceparentOf } from '../infra/tracing.ts';
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

/** The reactions of the event roles: each role's queue gets the events it reacts to. */
export const reactionsOf = (roles: readonly Role[]): Reaction[] =>
  roles.flatMap((role) => (role.kind === 'event' ? [reactionOf(role)] : []));

const reactionOf = <E extends Event, Job extends object>(role: EventRole<E, Job>): Reaction => {
  // The one narrowing from a stored event to the role's union, sound because a reaction is handed
  // only the events of the types it lists, their data upcast to the current shape.
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
 * A job that fails is tried again, after a pause that doubles from a second up to a minute
 * (`retryDelayMs`), as long as a thousand times: what was decided is carried out, and a failure
 * that lasts (a bug) keeps showing in the log and in `dms workers status`. The reactor and the
 * reconciler enqueue with these options; the worker host knows the strategy.
 */
export const RETRY_BACKOFF = 'doubling-to-a-minute';
export const EVENT_JOB_RETRIES: Pick<JobsOptions, 'attempts' | 'backoff'> = {
  attempts: 1000,
  backoff: { type: RETRY_BACKOFF },
};

/** The pause before a failed job's next attempt (`attemptsMade` counts the attempts so far). */
export const retryDelayMs = (attemptsMade: number): number =>
  Math.min(60_000, 1000 * 2 ** Math.max(0, Math.min(attemptsMade - 1, 16)));

/** A job to add to a role's queue: its id makes adding it twice add it once. */
export type PlannedJob = Readonly<{
  queue: string;
  name: string;
  data: object;
  opts: Readonly<
    { jobId: string; delay?: number; telemetry?: { metadata: string } } & Pick<JobsOptions, 'attempts' | 'backoff'>
  >;
}>;

type Target = Readonly<{
  queue: string;
  jobOf: (event: RecordedEvent) => object | undefined;
  delayOf?: (event: RecordedEvent, now: number) => number;
}>;

/**
 * The jobs each stored event becomes, one per role reacting to it, with the event's id as job id:
 * the reactor enqueues them as it follows the log, the reconciler finds again those missing.
 */
export class EventJobs {
  private readonly byType = new Map<string, Target[]>();

  constructor(reactions: readonly Reaction[]) {
    for (const reaction of reactions) {
      const target: Target = {
        queue: reaction.queue,
        jobOf: reaction.jobOf ?? eventJob,
        ...(reaction.delayOf ? { delayOf: reaction.delayOf } : {}),
      };
      for (const type of reaction.eventTypes) this.byType.set(type, [...(this.byType.get(type) ?? []), target]);
    }
  }

  /** The queues jobs go to. */
  /** The event types some reaction turns into jobs: the only ones a reactor need read. */
  eventTypes(): ReadonlySet<string> {
    return new Set(this.byType.keys());
  }

  queues(): string[] {
    return [...new Set([...this.byType.values()].flat().map((target) => target.queue))];
  }

  /** `now`: the time a delayed job's wait is counted from. */
  jobsOf(stored: RecordedEvent, now: number): PlannedJob[] {
    const targets = this.byType.get(stored.type);
    if (!targets) return [];
    // Roles read the event's data in the current shape of its type.
    const event = {
      ...stored,
      data: eventUpcasters.upcast({
        type: stored.type,
        data: stored.data,
        schemaVersion: stored.metadata.schemaVersion,
      }),
    };
    return targets.flatMap(({ queue, jobOf, delayOf }) => {
      const data = jobOf(event);
      if (data === undefined) return [];
      const delay = delayOf?.(event, now) ?? 0;
      const trace = jobTrace(event);
      return [
        {
          queue,
          name: event.type,
          data,
          opts: {
            jobId: event.id,
            ...(delay > 0 ? { delay } : {}),
            ...(trace ? { telemetry: { metadata: trace } } : {}),
            ...EVENT_JOB_RETRIES,
          },
        },
      ];
    });
  }
}
