import { decideInOrder, type Decider } from '../domain/shared/decider.ts';
import type { Command, CommandMetadata, Event } from '../domain/shared/event.ts';
import { upcastEvent } from '../domain/shared/upcasting.ts';
import {
  isWrongExpectedRevision,
  type EventMetadata,
  type ExpectedRevision,
  type NewEvent,
} from '../infra/eventstore/eventStore.ts';
import { deterministicUuid, timeOrderedUuid } from '../infra/eventstore/eventIds.ts';
import { activeSpanId, inSpan, tracingOn } from '../infra/tracing.ts';
import type { CommandContext } from './commandContext.ts';

export type { CommandContext } from './commandContext.ts';

export type HandleOptions = Readonly<{
  /** Who, when and which request: stored with every event (default: the first command's metadata). */
  metadata?: CommandMetadata;
  /**
   * The event that caused this command, when the metadata does not name it. Event ids are then
   * derived from it, so a retried job appends nothing twice: the event store treats repeated ids
   * as done.
   */
  causationId?: string;
  /**
   * Attempts after a concurrent write to the same stream by another process (this process's own
   * commands on a stream take turns); default 10, each after a random wait that doubles.
   */
  retries?: number;
}>;

export type CommandOutcome<State, E extends Event> = Readonly<{
  streamName: string;
  /** The name of the decider that decided the stream. */
  deciderName: string;
  events: E[];
  /** The state the commands were decided on (what a report of their effect compares with). */
  previousState: State;
  newState: State;
  /** Global position of the last appended event; undefined when the decision was "nothing". */
  position: bigint | undefined;
}>;

/** The states of the streams decided before, in the same step (see `StreamDecision.commands`). */
export type DecidedStates = Readonly<{
  stateOf<State>(decider: Decider<State, never, Event>, streamName: string): State | undefined;
}>;

/**
 * The commands to decide on one stream, in order, with the decider of its aggregate. When the
 * commands depend on what other streams of the same step become (an attach that takes files the
 * same request creates), give a function: it is called after the streams listed before it have
 * been decided, and reads their new states. It stays synchronous: facts are read before deciding.
 */
export type StreamDecision<State, C extends Command, E extends Event> = Readonly<{
  streamName: string;
  decider: Decider<State, C, E>;
  commands: readonly C[] | ((decided: DecidedStates) => readonly C[]);
  /**
   * The stream cannot exist yet (its name holds an id made for this step): it is not read, and it
   * is appended to with "no stream". Saves a read per new request of a large rule.
   */
  fresh?: boolean;
}>;

/** The outcome of a decision, typed by its decider. */
export type OutcomeOf<D> = D extends StreamDecision<infer State, infer _C, infer E> ? CommandOutcome<State, E> : never;

/** The decisions a decider makes on a stream (a list of decisions of one aggregate). */
export type DecisionOf<D> = D extends Decider<infer State, infer C, infer E> ? StreamDecision<State, C, E> : never;

/**
 * Decisions on several aggregates travel in one list, typed by what they share; each keeps its
 * own types through `onStream`, and `handleCommands` gives each outcome back typed by its decision.
 */
export type AnyStreamDecision = StreamDecision<unknown, Command, Event>;

/**
 * A value one of a step's deciders made (a state, an outcome), typed again by that decider.
 * Decisions on several aggregates travel in one list, which the compiler can only type by what
 * they share; each value is read back with the decider or decision that made it (matched by the
 * decider's name, or by the order of the list), which is what makes the narrowing sound.
 */
const madeBy = <T>(value: unknown): T =>
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- read back with the decider that made it (see above)
  value as T;

/** A decision on one stream, typed by its decider. */
export const onStream = <State, C extends Command, E extends Event>(
  decider: Decider<State, C, E>,
  streamName: string,
  commands: C | readonly C[] | ((decided: DecidedStates) => readonly C[]),
  options: Readonly<{ fresh?: boolean }> = {},
): StreamDecision<State, C, E> => ({
  streamName,
  decider,
  commands: isOneCommand(commands) ? [commands] : commands,
  ...(options.fresh ? { fresh: true } : {}),
});

const isOneCommand = <C extends Command>(
  commands: C | readonly C[] | ((decided: DecidedStates) => readonly C[]),
): commands is C => typeof commands !== 'function' && !Array.isArray(commands);

/**
 * Commands gathered per stream for one step, in the order they were added: a step that touches a
 * stream several times (an import naming an RSE, then its distances) decides it once, in order.
 */
export class StepPlan {
  private readonly streams = new Map<string, { decider: Decider<unknown, Command, Event>; commands: Command[] }>();

  add<State, C extends Command, E extends Event>(decider: Decider<State, C, E>, streamName: string, command: C): this {
    const entry = this.streams.get(streamName);
    if (entry && entry.decider.name !== decider.name)
      throw new Error(`Stream ${streamName} is decided by ${entry.decider.name}, not ${decider.name}`);
    if (entry) entry.commands.push(command);
    else
      this.streams.set(streamName, {
        decider,
        commands: [command],
      });
    return this;
  }

  decisions(): AnyStreamDecision[] {
    return [...this.streams].map(([streamName, { decider, commands }]) => onStream(decider, streamName, commands));
  }
}

/**
 * The one command handler: (1) read the stream, (2) rebuild the state with the decider's
 * `evolve`, (3) `decide`, (4) append with the revision that was read. A concurrent writer makes
 * the append fail; then the handler re-reads and decides again, a few times, with jitter.
 */
export const handleCommand = async <State, C extends Command, E extends Event>(
  context: CommandContext,
  decider: Decider<State, C, E>,
  streamName: string,
  command: C | readonly C[],
  options: HandleOptions = {},
): Promise<CommandOutcome<State, E>> =>
  (await decideAndAppend(context, [onStream(decider, streamName, command)], options))[0]!;

/**
 * The same for a decision spanning several streams: every stream is read and decided, in list
 * order, then all appends go to the event store together, all or nothing (atomically on SQLite,
 * through the event store's transaction log where streams are written one by one).
 */
export const handleCommands = async <D extends AnyStreamDecision>(
  context: CommandContext,
  decisions: readonly D[],
  options: HandleOptions = {},
): Promise<OutcomeOf<D>[]> => madeBy<OutcomeOf<D>[]>(await decideAndAppend(context, decisions, options));

/** Both handlers' work, typed by what the decisions share: one outcome per decision, in order. */
const decideAndAppend = async <State, C extends Command, E extends Event>(
  context: CommandContext,
  decisions: readonly StreamDecision<State, C, E>[],
  options: HandleOptions,
): Promise<CommandOutcome<State, E>[]> => {
  const streamNames = new Set(decisions.map((decision) => decision.streamName));
  if (streamNames.size !== decisions.length)
    throw new Error('A step decides each stream once: group its commands per stream');
  const metadata = options.metadata ?? firstCommandMetadata(decisions);
  const retries = options.retries ?? 10;
  const decide = () =>
    inTurn(context.eventStore, streamNames, () => decideAndAppendOnce(context, decisions, options, metadata, retries));
  if (!tracingOn()) return decide();
  return inSpan(`command ${commandNames(decisions)}`, { attributes: commandAttributes(decisions, metadata) }, decide);
};

/** The span's name: the deciders of the step, each once (`command did, rule`). */
const commandNames = (decisions: readonly StreamDecision<unknown, Command, Event>[]): string =>
  [...new Set(decisions.map((decision) => decision.decider.name))].join(', ');

const commandAttributes = (
  decisions: readonly StreamDecision<unknown, Command, Event>[],
  metadata: CommandMetadata,
): Record<string, string | number> => ({
  'dms.account': metadata.account,
  'dms.request_id': metadata.requestId,
  'dms.streams': decisions.length,
  ...(decisions.length === 1 ? { 'dms.stream': decisions[0]!.streamName } : {}),
  ...(metadata.causationId ? { 'dms.causation_id': metadata.causationId } : {}),
});

/**
 * The streams' commands of this process in the order they came, one decision at a time per stream:
 * two commands of one process never decide on the same revision, so only other processes' writes
 * (API workers, daemons elsewhere) make a decision stale. A decision waits for every earlier one
 * that shares a stream with it; all its streams are taken at once, so no two can wait on each other.
 */
const turns = new WeakMap<object, Map<string, Promise<void>>>();
const inTurn = async <T>(store: object, streamNames: ReadonlySet<string>, work: () => Promise<T>): Promise<T> => {
  let tails = turns.get(store);
  if (!tails) turns.set(store, (tails = new Map()));
  let release = () => {};
  const done = new Promise<void>((resolve) => (release = resolve));
  const earlier: Promise<void>[] = [];
  for (const name of streamNames) {
    const tail = tails.get(name);
    if (tail) earlier.push(tail);
    tails.set(name, done);
  }
  try {
    if (earlier.length > 0) await Promise.all(earlier);
    return await work();
  } finally {
    release();
    for (const name of streamNames) if (tails.get(name) === done) tails.delete(name);
  }
};

const decideAndAppendOnce = async <State, C extends Command, E extends Event>(
  context: CommandContext,
  decisions: readonly StreamDecision<State, C, E>[],
  options: HandleOptions,
  metadata: CommandMetadata,
  retries: number,
): Promise<CommandOutcome<State, E>[]> => {
  for (let attempt = 0; ; attempt += 1) {
    // 1. Read each stream and 2. rebuild its state.
    const loaded = await Promise.all(
      decisions.map(async (decision) => ({
        decision,
        ...(decision.fresh
          ? { state: decision.decider.initialState(), revision: 'no_stream' as const }
          : await loadState(context, decision.decider, decision.streamName)),
      })),
    );
    // 3. Decide, stream after stream; later streams may read what earlier ones became.
    const newStates = new Map<string, { deciderName: string; state: unknown }>();
    const decided: DecidedStates = {
      stateOf: <Decided>(decider: Decider<Decided, never, Event>, streamName: string) => {
        const entry = newStates.get(streamName);
        return entry && entry.deciderName === decider.name ? madeBy<Decided>(entry.state) : undefined;
      },
    };
    const results = loaded.map(({ decision, state, revision }) => {
      const commands = typeof decision.commands === 'function' ? decision.commands(decided) : decision.commands;
      const outcome = decideInOrder(decision.decider, commands, state);
      newStates.set(decision.streamName, { deciderName: decision.decider.name, state: outcome.state });
      return { decision, revision, events: outcome.events, previousState: state, newState: outcome.state };
    });
    const appends = results.filter((result) => result.events.length > 0);
    if (appends.length === 0) {
      return results.map(({ decision, previousState, newState }) => ({
        streamName: decision.streamName,
        deciderName: decision.decider.name,
        events: [],
        previousState,
        newState,
        position: undefined,
      }));
    }
    // 4. Append with the revisions that were read.
    try {
      const envelope = versionedMetadata(eventMetadata(metadata, options), context.upcasters);
      const appended = await context.eventStore.appendToStreams(
        appends.map((result) => ({
          streamName: result.decision.streamName,
          expectedRevision: result.revision,
          ...(result.decision.fresh ? { fresh: true } : {}),
          events: result.events.map((event, index) =>
            toNewEvent(event, result.decision.streamName, index, envelope(event.type)),
          ),
        })),
      );
      const appendedBy = new Map(appends.map((result, index) => [result, appended[index]!]));
      return results.map((result) => {
        const stored = appendedBy.get(result);
        const { previousState, newState } = result;
        const { streamName, decider } = result.decision;
        if (!stored)
          return { streamName, deciderName: decider.name, events: [], previousState, newState, position: undefined };
        context.stateCache.set(decider.name, streamName, stored.nextExpectedRevision, newState);
        return {
          streamName,
          deciderName: decider.name,
          events: result.events,
          previousState,
          newState,
          position: stored.position,
        };
      });
    } catch (error) {
      if (!isWrongExpectedRevision(error) || attempt >= retries) throw error;
      // Another process wrote first: a random wait that doubles (5 ms up to 320 ms) lets contenders
      // take turns instead of colliding again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * 2 ** Math.min(attempt, 6)));
    }
  }
};

const firstCommandMetadata = (decisions: readonly StreamDecision<unknown, Command, Event>[]): CommandMetadata => {
  for (const decision of decisions) {
    if (typeof decision.commands !== 'function' && decision.commands[0]) return decision.commands[0].metadata;
  }
  throw new Error('handleCommands needs the metadata of the step when no command is known in advance');
};

/**
 * The outcome on one stream of a step, typed by the decider that decided it; undefined when the
 * step did not decide the stream, or another decider did.
 */
export const outcomeOn = <State, E extends Event>(
  outcomes: readonly CommandOutcome<unknown, Event>[],
  decider: Decider<State, never, E>,
  streamName: string,
): CommandOutcome<State, E> | undefined => {
  const outcome = outcomes.find((candidate) => candidate.streamName === streamName);
  return outcome?.deciderName === decider.name ? madeBy<CommandOutcome<State, E>>(outcome) : undefined;
};

/** The global position of the last event a multi-stream command appended. */
export const lastPosition = (outcomes: readonly CommandOutcome<unknown, Event>[]): bigint | undefined =>
  outcomes.reduce<bigint | undefined>(
    (last, outcome) =>
      outcome.position !== undefined && (last === undefined || outcome.position > last) ? outcome.position : last,
    undefined,
  );

/**
 * The current state of an aggregate and the revision it reflects. Cached states are brought up
 * to date by reading only the events after the cached revision, so long streams are not replayed
 * on every command and other processes' writes are always seen.
 */
export const loadState = async <State, E extends Event>(
  context: CommandContext,
  decider: Decider<State, never, E>,
  streamName: string,
): Promise<{ state: State; revision: ExpectedRevision }> => {
  // The cache is keyed by the decider's name: a cached state is one this decider made.
  const cached = context.stateCache.get(decider.name, streamName);
  const fromRevision = cached ? cached.revision + 1n : 0n;
  const events = await context.eventStore.readStream(streamName, { fromRevision });
  let state = cached ? madeBy<State>(cached.state) : decider.initialState();
  // The stream's events are the aggregate's own: its decider wrote them (evolve ignores others),
  // in the shape of the version they were written with, brought to the current one here.
  for (const event of events)
    state = decider.evolve(
      state,
      upcastEvent<E>(context.upcasters, {
        type: event.type,
        data: event.data,
        schemaVersion: event.metadata.schemaVersion,
      }),
    );
  const last = events[events.length - 1];
  const revision = last ? last.revision : cached?.revision;
  if (revision === undefined) return { state, revision: 'no_stream' };
  if (last) context.stateCache.set(decider.name, streamName, revision, state);
  return { state, revision };
};

/** The current state of one aggregate, for facts a command reads before deciding. */
export const loadAggregate = async <State, E extends Event>(
  context: CommandContext,
  decider: Decider<State, never, E>,
  streamName: string,
): Promise<State> => (await loadState(context, decider, streamName)).state;

/** The metadata every event of one command shares (one object, so stores may serialise it once). */
const eventMetadata = (metadata: CommandMetadata, options: HandleOptions): EventMetadata => {
  const causationId = options.causationId ?? metadata.causationId;
  const spanId = activeSpanId();
  return {
    account: metadata.account,
    requestId: metadata.requestId,
    at: metadata.now.toISOString(),
    schemaVersion: 1,
    ...(causationId ? { causationId } : {}),
    // Absent rather than null when unknown: the hashes of events written before cover no such key.
    ...(metadata.identity ? { identity: metadata.identity } : {}),
    ...(metadata.correlationId ? { correlationId: metadata.correlationId } : {}),
    ...(spanId ? { spanId } : {}),
  };
};

/**
 * The metadata of an event of the given type: the command's, with the schema version its type is
 * at now. Events of types at version 1 (nearly all) share the command's object; each other
 * version gets one object of its own.
 */
const versionedMetadata = (
  metadata: EventMetadata,
  upcasters: CommandContext['upcasters'],
): ((type: string) => EventMetadata) => {
  const byVersion = new Map<number, EventMetadata>([[metadata.schemaVersion, metadata]]);
  return (type) => {
    const version = upcasters.currentVersion(type);
    let versioned = byVersion.get(version);
    if (!versioned) byVersion.set(version, (versioned = { ...metadata, schemaVersion: version }));
    return versioned;
  };
};

const toNewEvent = (event: Event, streamName: string, index: number, metadata: EventMetadata): NewEvent => {
  const id = metadata.causationId
    ? deterministicUuid(`${metadata.causationId}/${streamName}/${index}`)
    : timeOrderedUuid();
  return { id, type: event.type, data: event.data, metadata };
};
