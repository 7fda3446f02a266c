/**
 * A daemon's logic (Rucio's judge, conveyor, undertaker, ...), in the shape of Emmett's
 * workflows without their state: given what set it off (an event, or the tick of a schedule) and
 * the facts read for it, decide what to do. Pure, like a decider: the worker that runs it
 * (workers/) reads the facts, calls `decide`, and carries each output out by issuing a command;
 * the domain never sees a queue.
 *
 * An Emmett workflow folds what it sees into a state of its own; here the state a process needs
 * between steps lives in the aggregates it commands (a rule, a request), so a workflow keeps none.
 */
export type Workflow<Input, Facts, Output extends WorkflowOutput> = Readonly<{
  /** Names the daemon role in logs, queues and `dms workers status`. */
  name: string;
  decide(input: Input, facts: Facts): Output[];
}>;

/** What a workflow asks for: a command by name with its data (metadata is the worker's). */
export type WorkflowOutput<Type extends string = string, Data extends object = object> = Readonly<{
  type: Type;
  data: Readonly<Data>;
}>;

/**
 * A step a workflow decided not to take, with the reason: what `dms workers status` reports as
 * skipped.
 */
export type Skipped<Type extends string = 'Skipped'> = WorkflowOutput<Type, { what: string; reason: string }>;
