import { isRecord } from '../typeGuards.ts';

/**
 * The event store port. Streams are named `<category>-<id>`; `$all` orders every event of every
 * stream by a global position. Revisions count from 0 within a stream; positions only grow.
 * Both adapters (SQLite, EventStoreDB) pass the same contract suite (test/infra/eventStoreContract.ts).
 */

/**
 * The envelope stored beside every event: who acted, in which request, when, the shape version
 * of the data, and for events appended by workers the event that caused them.
 */
export type EventMetadata = Readonly<{
  account: string;
  requestId: string;
  /** ISO 8601 time the command was decided at. */
  at: string;
  /** Version of the event's data shape; bumped together with an upcaster. */
  schemaVersion: number;
  /** Id of the event that caused this one, for events appended by workers. */
  causationId?: string;
  /**
   * The identity that acted (its kind and value: the user name, the DN, `SUB=…, ISS=…`, the SSH
   * key's fingerprint, DAEMON and the role...), beside `account`. Absent on events written before
   * it was recorded, never null: their hashes cover the metadata as it was.
   */
  identity?: Readonly<{ kind: string; value: string }>;
  /** The trace of the request that caused this event, daemon work included (infra/tracing.ts). */
  correlationId?: string;
  /** The span that appended this event, when spans were made: the parent of the work it sets off. */
  spanId?: string;
  /**
   * Found on events an older deployment wrote on EventStoreDB through the retired stepped
   * protocol (a multi-stream decision written stream by stream): the step's id and its number of
   * events. Such steps are completed once by `dms events finish-steps` (leftSteps.ts) before the
   * service starts on the log; nothing reads the mark since, and the audit shows it as stored.
   */
  step?: StepMark;
  /**
   * Set by the event store at append time: the hash chaining this event to the one before it in
   * its stream (infra/eventstore/eventHashes.ts). Absent on events written before hashing. A hash
   * given in an appended event's metadata is ignored.
   */
  hash?: string;
}>;

/**
 * Whether a value read back from a store or an export is an event's envelope: an object naming
 * the acting account and the time. What else it holds is as the appending adapter wrote it.
 */
export const isEventMetadata = (value: unknown): value is EventMetadata =>
  isRecord(value) && typeof value.account === 'string' && typeof value.at === 'string';

/** Which multi-stream step an event belongs to, and the step's number of events (all streams). */
export type StepMark = Readonly<{ id: string; count: number }>;

/** What the caller believes the stream's last revision to be. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

export type NewEvent = Readonly<{
  /** A UUID. Appending an event id that is already stored is treated as already done. */
  id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
}>;

/** Whether a value (structured-cloned from another process, or read from a journal) is an event to append. */
export const isNewEvent = (value: unknown): value is NewEvent =>
  isRecord(value) &&
  typeof value.id === 'string' &&
  typeof value.type === 'string' &&
  'data' in value &&
  isEventMetadata(value.metadata);

export type RecordedEvent = Readonly<{
  id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  streamName: string;
  revision: bigint;
  position: bigint;
  recordedAt: Date;
  /**
   * The event's link in the log chain (logChain.ts), on stores that keep it with the event
   * (SQLite); absent on EventStoreDB and on events written before the log chain existed.
   */
  logHash?: string;
}>;

export type AppendResult = Readonly<{
  streamName: string;
  /** Revision of the stream's last event after the append. */
  nextExpectedRevision: bigint;
  /** Global position of the last event written (or found, for a repeated append). */
  position: bigint;
}>;

export type StreamAppend = Readonly<{
  streamName: string;
  events: readonly NewEvent[];
  expectedRevision?: ExpectedRevision;
}>;

export type ReadStreamOptions = Readonly<{
  /** First revision to return; default 0. */
  fromRevision?: bigint;
  maxCount?: number;
}>;

export type ReadAllOptions = Readonly<{
  /** Return events strictly after this position; default 0 (the start). */
  after?: bigint;
  maxCount: number;
}>;

export type SubscribeToAllOptions = Readonly<{
  /** Deliver events strictly after this position (a checkpoint); default 0 (the start). */
  after?: bigint;
  /** Largest batch handed to the consumer at once; default 500. */
  batchSize?: number;
  /**
   * Deliver only events of these types (a projection group's, a reactor's); default all. The
   * SQLite adapter leaves the others in the database, unread: a consumer of a few types does
   * not pay for the rest of the log.
   */
  eventTypes?: ReadonlySet<string>;
}>;

/**
 * What a subscription delivers at once: the events (of the types asked for) after the previous
 * batch, in order, and the position it has read the log through, at or past the last of them.
 * Every event of those types up to `through` has been delivered, so a consumer may take
 * `through` as its checkpoint; a batch may hold no event at all, when only other types came.
 */
export type SubscriptionBatch = Readonly<{ events: readonly RecordedEvent[]; through: bigint }>;

/** A catch-up subscription: replays history in batches, then keeps delivering new events. */
export interface AllSubscription extends AsyncIterable<SubscriptionBatch> {
  close(): Promise<void>;
}

export interface EventStore {
  appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision?: ExpectedRevision,
  ): Promise<AppendResult>;
  /**
   * Appends to several streams, all or nothing: the SQLite adapter in one transaction, the
   * KurrentDB adapter in one `multiStreamAppend` (KurrentDB 25.1 and later; esdbEventStore.ts).
   */
  appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]>;
  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options: ReadAllOptions): Promise<RecordedEvent[]>;
  /**
   * The events at these global positions (an index of positions kept in a read model, say), in
   * ascending position order; positions that hold no event are left out.
   */
  readEventsAt(positions: readonly bigint[]): Promise<RecordedEvent[]>;
  /** Revision of the stream's last event, or `no_stream` when it has none. */
  streamRevision(streamName: string): Promise<bigint | 'no_stream'>;
  subscribeToAll(options?: SubscribeToAllOptions): AllSubscription;
  /** Position of the newest event in `$all`, 0 when the store is empty. */
  headPosition(): Promise<bigint>;
  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`Stream ${streamName}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/** Some but not all event ids of an append are already stored: a caller bug, never retried. */
export class EventIdConflictError extends Error {
  constructor(
    readonly streamName: string,
    readonly eventId: string,
  ) {
    super(`Stream ${streamName}: event ${eventId} is already stored but the rest of its batch is not`);
    this.name = 'EventIdConflictError';
  }
}

export const isWrongExpectedRevision = (error: unknown): error is WrongExpectedRevisionError =>
  error instanceof WrongExpectedRevisionError;
