import type { Setting } from '../domain/config/settings.ts';
import { RucioError } from '../domain/shared/errors.ts';
import type { ActingIdentity, CommandMetadata, Event, EventTypes } from '../domain/shared/event.ts';
import type { Skipped, WorkflowOutput } from '../domain/shared/workflow.ts';
import { dateOf, type Clock } from '../infra/clock.ts';
import type { RecordedEvent } from '../infra/eventstore/eventStore.ts';
import type { TraceContext } from '../infra/tracing.ts';
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

/**
 * A role set off by events, typed by the union of the events it reacts to, as projections are:
 * `handles` names every type of that union (a record keyed by the union's types, so it can only
 * name events that exist), and `jobOf` and `delayOf` get the event already narrowed, its data
 * typed. Write one with `eventRole` (below), which takes the types from the area's record.
 */
export type EventRole<E extends Event, Job extends object> = Readonly<{
  kind: 'event';
  /** The role's name, which is also its queue's name. */
  name: string;
  handles: Readonly<Record<E['type'], true>>;
  /** The job an event becomes: the role's own typed data; undefined when the event needs no work. */
  jobOf(event: E, envelope: RoleEnvelope): Job | undefined;
  /** Milliseconds the job waits before it may run (a rule whose injection is delayed), at `now`; default none. */
  delayOf?(event: E, envelope: RoleEnvelope, now: number): number;
  /** Jobs one process works on at once; default 1. */
  concurrency?: number;
  process(job: Job, trigger: JobTrigger, context: WorkerContext): Promise<CycleReport>;
}>;

/** What an event role may read of a stored event besides its type and data. */
export type RoleEnvelope = Pick<RecordedEvent, 'id' | 'streamName' | 'position' | 'metadata'>;

/**
 * An event role on events of one area, or of several with `ALL_EVENT_TYPES` (domain/events.ts):
 * the area's record gives the union, `handles` the types the role reacts to, and the events reach
 * `jobOf` narrowed to those types.
 *
 *     eventRole(RULE_EVENT_TYPES, {
 *       name: 'judge-injector',
 *       handles: { RuleAdded: true, RuleApproved: true },
 *       jobOf: (event, { position }) => ...,   // event: RuleAdded | RuleApproved
 *       async process(job, trigger, context) { ... },
 *     })
 */
export const eventRole = <E extends Event, T extends E['type'], Job extends object>(
  _area: EventTypes<E>,
  role: Omit<EventRole<Extract<E, { type: T }>, Job>, 'kind' | 'handles'> & { handles: Readonly<Record<T, true>> },
): EventRole<Extract<E, { type: T }>, Job> => ({ kind: 'event', ...role });

export type ScheduledRole = Readonly<{
  kind: 'scheduled';
  name: string;
  /** Seconds between cycles, from `/config`. */
  interval: Setting<number>;
  /** Other settings a cycle reads (chunk sizes, bounds), shown by `dms workers status`; default none. */
  settings?: readonly Setting<unknown>[];
  concurrency?: number;
  /**
   * One cycle at a time across every worker process (BullMQ's global concurrency of 1), for a
   * role whose cycles must not overlap (hermes sends in log order); default off.
   */
  exclusive?: boolean;
  run(trigger: JobTrigger, context: WorkerContext): Promise<CycleReport>;
}>;

// Roles of different unions and job types are listed together; each keeps its own types through
// its definition, and the reactor only hands a role the events its `handles` names.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Role = EventRole<any, any> | ScheduledRole;

/** The event types a role reacts to (none for a scheduled role), for the reactor and `dms workers status`. */
export const reactsTo = (role: Role): string[] => (role.kind === 'event' ? Object.keys(role.handles) : []);

/**
 * The job being worked on: its id (event roles: the causing event's id), when it started, and the
 * trace it works in: for an event role, the trace of the request whose event set it off; for a
 * scheduled role's cycle, one of its own (workers/workerHost.ts). Absent where a job is run by
 * hand (tests, the command line): its commands then carry no correlation id.
 */
export type JobTrigger = Readonly<{ jobId: string; startedAt: Date; trace?: TraceContext }>;

/** Something a job left, and why: what `dms workers status` shows as skipped. */
export type SkippedItem = Skipped['data'];

/** What one job did, kept per role for `dms workers status`. */
export type CycleReport = Readonly<{
  /** How many things the job acted on (DIDs deleted, locks created, ...). */
  done: number;
  /** What it decided to leave, and why; capped when stored. */
  skipped: readonly SkippedItem[];
  /** What it did, in a line (per RSE, bytes freed, ...), for roles whose count says too little; default none. */
  detail?: string;
}>;

/** A job id that is also a valid causation id: derived event ids use it. */
export const causationOf = (role: string, trigger: JobTrigger, item: string): string =>
  `${role}/${trigger.jobId}/${item}`;

/**
 * The metadata of what a role appends about `item`: as root, the role as the identity that acted,
 * under a request id naming the role and job, caused by the job (so a job run again derives the
 * same event ids and appends nothing twice), in the job's trace. `now` is the job's start.
 */
export const asRoot = (role: string, trigger: JobTrigger, item: string): CommandMetadata => ({
  now: trigger.startedAt,
  account: 'root',
  requestId: `${role}-${trigger.jobId}`,
  causationId: causationOf(role, trigger, item),
  identity: daemonIdentity(role),
  ...(trigger.trace ? { correlationId: trigger.trace.traceId } : {}),
});

/** A daemon role as the identity that acted (what the audit shows beside root). */
export const daemonIdentity = (role: string): ActingIdentity => ({ kind: 'DAEMON', value: role });

/**
 * The same for one step of a job that acts on the clock as it goes (a page of transfers, a chunk
 * of deletions): the step names its own cause, so the steps of a job derive different event ids,
 * and is timed when it is made, since a job's steps span the time transfers and deletions take.
 */
export const stepOf = (role: string, trigger: JobTrigger, step: string, clock: Clock): CommandMetadata => ({
  ...asRoot(role, trigger, step),
  now: dateOf(clock),
});

/** The outputs a workflow decided to leave, with why. */
export const skippedOf = (outputs: readonly WorkflowOutput[]): SkippedItem[] =>
  outputs.filter((output): output is Skipped => output.type === 'Skipped').map((output) => output.data);

/** The outputs a workflow asks to carry out: every one but the skipped. */
export const withoutSkipped = <Output extends WorkflowOutput>(outputs: readonly Output[]): Exclude<Output, Skipped>[] =>
  outputs.filter((output): output is Exclude<Output, Skipped> => output.type !== 'Skipped');

/** What a failure says, whatever was thrown (a tool's error, a string). */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Runs one action of a job, and says why a command refused it, if one did: a `RucioError` (the
 * rule is gone, the DID was given a new lifetime meanwhile) comes back as `<ExceptionClass>:
 * <message>`, and the job goes on with its other items. Any other error fails the job, which
 * BullMQ retries.
 */
export const refusalOf = async (act: () => Promise<unknown>): Promise<string | undefined> => {
  try {
    await act();
    return undefined;
  } catch (error) {
    if (error instanceof RucioError) return `${error.exceptionClass}: ${error.message}`;
    throw error;
  }
};

/**
 * Carries out a workflow's outputs and reports them. A `Skipped` output is reported as it is;
 * each other one goes to `act`, which issues its commands and returns why they left it undone
 * (a rule no longer waiting, say), or nothing when they did it. A command's refusal is reported
 * too (`refusalOf`). `inChunksOf` outputs are carried out at once (default 1: one after the
 * other).
 */
export const carryOut = async <Output extends WorkflowOutput>(
  outputs: readonly Output[],
  what: (output: Exclude<Output, Skipped>) => string,
  act: (output: Exclude<Output, Skipped>) => Promise<string | void>,
  inChunksOf = 1,
): Promise<CycleReport> => {
  let done = 0;
  const skipped: SkippedItem[] = [];
  const carryOne = async (output: Exclude<Output, Skipped>) => {
    let left: string | void = undefined;
    const refusal = await refusalOf(async () => {
      left = await act(output);
    });
    const reason = refusal ?? left;
    if (reason) skipped.push({ what: what(output), reason });
    else done += 1;
  };
  skipped.push(...skippedOf(outputs));
  const actions = withoutSkipped(outputs);
  for (let start = 0; start < actions.length; start += inChunksOf)
    await Promise.all(actions.slice(start, start + inChunksOf).map(carryOne));
  return { done, skipped };
};
