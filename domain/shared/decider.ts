import type { Command, Event } from './event.ts';

/**
 * One aggregate's behaviour as data, in the shape Emmett calls a decider: the state before any
 * event, how an event changes it, and which events a command produces on it. All three are pure.
 * The command handler (commands/handleCommand.ts) runs exactly this object, and the decider tests
 * specify exactly this object (given events, when command, then events).
 */
export type Decider<State, C extends Command, E extends Event> = Readonly<{
  /** Names the aggregate in state caches and messages (`did`, `rse`, `account`, ...). */
  name: string;
  initialState(): State;
  /** Folds one event into the state; an event of another aggregate leaves it unchanged. */
  evolve(state: State, event: E): State;
  /** The events that record the command on this state, or a thrown RucioError refusing it. */
  decide(command: C, state: State): E[];
  /**
   * The events one step decided on the stream, merged where the aggregate records several facts
   * of a step as one event (docs/architecture.md, "Event granularity"). Folding the result must
   * give the state folding the input gives. Default: as decided.
   */
  compact?(events: E[]): E[];
}>;

/**
 * Decides several commands on one stream one after the other: each sees the state the events of
 * the ones before it left. A refused command refuses them all.
 */
export const decideInOrder = <State, C extends Command, E extends Event>(
  decider: Decider<State, C, E>,
  commands: readonly C[],
  state: State,
): Readonly<{ events: E[]; state: State }> => {
  const decided = decideSteps(
    decider.evolve,
    commands.map((command) => (current: State) => decider.decide(command, current)),
    state,
  );
  return decider.compact ? { ...decided, events: decider.compact(decided.events) } : decided;
};

/**
 * The same for decision steps inside one decider (an import that creates or edits, then adds or
 * updates each protocol): each step sees the state the events of the steps before it left.
 */
export const decideSteps = <State, E extends Event>(
  evolve: (state: State, event: E) => State,
  steps: readonly ((state: State) => E[])[],
  state: State,
): Readonly<{ events: E[]; state: State }> => {
  const events: E[] = [];
  let current = state;
  for (const step of steps) {
    for (const event of step(current)) {
      current = evolve(current, event);
      events.push(event);
    }
  }
  return { events, state: current };
};

/**
 * The `default` of every decider's switch over its commands: the compiler proves it unreachable
 * (a command type added without its case does not compile), and a command that arrives anyway
 * (from untyped input) fails loudly. Give the command, or its `type` when the aggregate has only
 * one kind of command (TypeScript narrows a union to `never`, not a single type's object).
 */
export const unknownCommand = (aggregate: string, command: never): never => {
  const type: unknown = typeof command === 'string' ? command : (command as Command).type;
  throw new Error(`Unknown ${aggregate} command ${String(type)}`);
};
