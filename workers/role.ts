import type { Setting } from '../domain/config/settings.ts';
import type { CommandMetadata } from '../domain/shared/event.ts';
import type { RecordedEvent } from '../infra/eventstore/eventStore.ts';
import type { WorkerContext } from './workerContext.ts';

/**
 * A daemon role as the workers run it. The logic is a workflow in domain/; a role only wires it:
 * what sets it off, how many jobs it takes at once, and how its outputs become commands.
 *
 * - An event role gets a job for each event of the types it reacts to (the reactor enqueues
 *   them with the event id as job id, so a replay enqueues nothing twice).
 * - A scheduled role gets a job at an interval read from the configuration (a BullMQ job
 *   scheduler), and works through what it finds in the read models.
 */
export type EventRole<Job extends object> = Readonly<{
  kind: 'event';
  /** The role's name, which is also its queue's name. */
  name: string;
  eventTypes: readonly string[];
  /** The job an event becomes: the role's own typed data; undefined when the event needs no work. */
  jobOf(event: RecordedEvent): Job | undefined;
  /** Milliseconds the job waits before it may run (a rule whose injection is delayed); default none. */
  delayOf?(event: RecordedEvent): number;
  /** Jobs one process works on at once; default 1. */
  concurrency?: number;
  process(job: Job, trigger: JobTrigger, context: WorkerContext): Promise<CycleReport>;
}>;

export type ScheduledRole = Readonly<{
  kind: 'scheduled';
  name: string;
  /** Seconds between cycles, from `/config`. */
  interval: Setting<number>;
  /** Other settings a cycle reads (chunk sizes, bounds), shown by `dms workers status`; default none. */
  settings?: readonly Setting<unknown>[];
  concurrency?: number;
  run(trigger: JobTrigger, context: WorkerContext): Promise<CycleReport>;
}>;

// Roles of different job types are listed together; each keeps its own type through its definition.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Role = EventRole<any> | ScheduledRole;

/** The job being worked on: its id (event roles: the causing event's id) and when it started. */
export type JobTrigger = Readonly<{ jobId: string; startedAt: Date }>;

/** What one job did, kept per role for `dms workers status`. */
export type CycleReport = Readonly<{
  /** How many things the job acted on (DIDs deleted, locks created, ...). */
  done: number;
  /** What it decided to leave, and why; capped when stored. */
  skipped: readonly Readonly<{ what: string; reason: string }>[];
  /** What it did, in a line (per RSE, bytes freed, ...), for roles whose count says too little; default none. */
  detail?: string;
}>;

/** A job id that is also a valid causation id: derived event ids use it. */
export const causationOf = (role: string, trigger: JobTrigger, item: string): string =>
  `${role}/${trigger.jobId}/${item}`;

/**
 * The metadata of what a role appends about `item`: as root, under a request id naming the role
 * and job, caused by the job (so a job run again derives the same event ids and appends nothing
 * twice). `now` is the job's start unless the role acts on the clock as it goes (deletions).
 */
export const asRoot = (
  role: string,
  trigger: JobTrigger,
  item: string,
  now: Date = trigger.startedAt,
): CommandMetadata => ({
  now,
  account: 'root',
  requestId: `${role}-${trigger.jobId}`,
  causationId: causationOf(role, trigger, item),
});
