/**
 * The shapes every aggregate shares: events are readonly `{ type, data }` facts, commands are
 * imperative requests that carry who asked, when and under which request id. Deciders never read
 * the clock or the request themselves: everything they need arrives in the command.
 */

export type Event<Type extends string = string, Data extends object = object> = Readonly<{
  type: Type;
  data: Readonly<Data>;
}>;

export type CommandMetadata = Readonly<{
  /** The moment the command is decided at; deciders use this instead of a clock. */
  now: Date;
  /** The authenticated account issuing the command (the "issuer" in Rucio's terms). */
  account: string;
  /** Correlates the command, its events and the request log line. */
  requestId: string;
  /**
   * For commands a daemon issues: the event or scheduled job that caused them. Their events get
   * ids derived from it, so a retried job appends nothing twice. Deciders ignore it.
   */
  causationId?: string;
}>;

export type Command<Type extends string = string, Data extends object = object> = Readonly<{
  type: Type;
  data: Readonly<Data>;
  metadata: CommandMetadata;
}>;
