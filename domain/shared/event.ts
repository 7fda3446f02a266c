/**
 * The shapes every aggregate shares: events are readonly `{ type, data }` facts, commands are
 * imperative requests that carry who asked, when and under which request id. Deciders never read
 * the clock or the request themselves: everything they need arrives in the command.
 */

export type Event<Type extends string = string, Data extends object = object> = Readonly<{
  type: Type;
  data: Readonly<Data>;
}>;

declare const eventUnion: unique symbol;

/**
 * Every type of an event union, each once, as a record (`{ DidCreated: true, ... }`): each area
 * declares its own with `eventTypes`, and `domain/events.ts` lists them all. The record also
 * carries the union it was made from, as a type only (nothing at run time), so that whoever takes
 * the record can name the union's events with their data: an event role names its area's record
 * and reads the events it reacts to already narrowed (workers/role.ts).
 */
export type EventTypes<E extends Event> = Readonly<Record<E['type'], true>> & { readonly [eventUnion]?: E };

/**
 * The record of an event union's types: leaving a type of the union out, or naming one it does not
 * have, does not compile.
 */
export const eventTypes = <E extends Event>(types: Readonly<Record<E['type'], true>>): EventTypes<E> => types;

/**
 * The identity that acted, as it authenticated: its kind (Rucio's identity types: USERPASS, X509,
 * GSS, SSH, OIDC, SAML; or DAEMON for a daemon role, CLI for the command line on the host, SERVICE
 * for the service's own start-up) and its value (the user name, the certificate's DN, the
 * principal, the SSH key's fingerprint, `SUB=<subject>, ISS=<issuer>`, the role's name...).
 * Two people sharing one account are two identities.
 */
export type ActingIdentity = Readonly<{ kind: string; value: string }>;

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
  /** Who acted, beside the account (see `ActingIdentity`); absent where nobody says. */
  identity?: ActingIdentity;
  /**
   * The trace this command belongs to (a W3C trace id, 32 hex digits): the API request's, carried
   * by the reactor into the daemon work the request's events set off (infra/tracing.ts).
   */
  correlationId?: string;
}>;

export type Command<Type extends string = string, Data extends object = object> = Readonly<{
  type: Type;
  data: Readonly<Data>;
  metadata: CommandMetadata;
}>;
