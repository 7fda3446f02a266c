import { errorMessage, isRecord } from '../typeGuards.ts';
import {
  EventIdConflictError,
  isNewEvent,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type StreamAppend,
} from './eventStore.ts';
import { DelegatingEventStore } from './delegatingEventStore.ts';

/** Carries a decision's appends to the process that writes the log, and its outcome back. */
export interface AppendChannel {
  append(appends: readonly StreamAppend[]): Promise<AppendResult[]>;
}

/**
 * The event store of an API worker of `dms serve` (bin/cluster/): it reads the log through its
 * own connection, and sends every append to the one process that writes it (the cluster primary),
 * where appends from every worker arriving together share one transaction and one fsync (group
 * commit, sqliteEventStore.ts). Each append is still checked against its expected revisions
 * there, inside that transaction, so a worker deciding on a state it read here loses nothing but
 * a retry when another worker wrote first.
 */
export class ForwardingEventStore extends DelegatingEventStore {
  constructor(
    reader: EventStore,
    private readonly channel: AppendChannel,
  ) {
    super(reader);
  }

  override async appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision: ExpectedRevision = 'any',
  ): Promise<AppendResult> {
    const [result] = await this.channel.append([{ streamName, events, expectedRevision }]);
    if (!result) throw new Error(`The writer answered an append to ${streamName} with no result`);
    return result;
  }

  override appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    return this.channel.append(appends);
  }
}

/**
 * An append's failure as it crosses to the worker: the two the command handler tells apart (a
 * stale expected revision, which it decides again on; ids stored with another batch) keep their
 * class, anything else its message.
 */
export type AppendFailure =
  | { kind: 'wrong-revision'; streamName: string; expected: ExpectedRevision; actual: bigint | 'no_stream' }
  | { kind: 'event-id-conflict'; streamName: string; eventId: string }
  | { kind: 'failed'; message: string };

export const appendFailureOf = (error: unknown): AppendFailure => {
  if (error instanceof WrongExpectedRevisionError)
    return { kind: 'wrong-revision', streamName: error.streamName, expected: error.expected, actual: error.actual };
  if (error instanceof EventIdConflictError)
    return { kind: 'event-id-conflict', streamName: error.streamName, eventId: error.eventId };
  return { kind: 'failed', message: errorMessage(error) };
};

export const errorOfAppendFailure = (failure: AppendFailure): Error => {
  if (failure.kind === 'wrong-revision')
    return new WrongExpectedRevisionError(failure.streamName, failure.expected, failure.actual);
  if (failure.kind === 'event-id-conflict') return new EventIdConflictError(failure.streamName, failure.eventId);
  return new Error(`The event log's writer could not append: ${failure.message}`);
};

const isExpectedRevision = (value: unknown): value is ExpectedRevision =>
  typeof value === 'bigint' || value === 'any' || value === 'no_stream' || value === 'stream_exists';

/** Appends as they arrive from another process (structured-cloned), or undefined when they are not. */
export const parseStreamAppends = (value: unknown): StreamAppend[] | undefined => {
  if (!Array.isArray(value)) return undefined;
  const appends: StreamAppend[] = [];
  for (const item of value) {
    if (!isRecord(item) || typeof item.streamName !== 'string' || !Array.isArray(item.events)) return undefined;
    const events: NewEvent[] = [];
    for (const event of item.events) {
      if (!isNewEvent(event)) return undefined;
      events.push(event);
    }
    const expected = item.expectedRevision ?? 'any';
    if (!isExpectedRevision(expected)) return undefined;
    appends.push({
      streamName: item.streamName,
      events,
      expectedRevision: expected,
    });
  }
  return appends;
};

export const parseAppendResults = (value: unknown): AppendResult[] | undefined => {
  if (!Array.isArray(value)) return undefined;
  const results: AppendResult[] = [];
  for (const item of value) {
    if (
      !isRecord(item) ||
      typeof item.streamName !== 'string' ||
      typeof item.nextExpectedRevision !== 'bigint' ||
      typeof item.position !== 'bigint'
    )
      return undefined;
    results.push({
      streamName: item.streamName,
      nextExpectedRevision: item.nextExpectedRevision,
      position: item.position,
    });
  }
  return results;
};

export const parseAppendFailure = (value: unknown): AppendFailure | undefined => {
  if (!isRecord(value)) return undefined;
  if (
    value.kind === 'wrong-revision' &&
    typeof value.streamName === 'string' &&
    isExpectedRevision(value.expected) &&
    (typeof value.actual === 'bigint' || value.actual === 'no_stream')
  )
    return { kind: 'wrong-revision', streamName: value.streamName, expected: value.expected, actual: value.actual };
  if (value.kind === 'event-id-conflict' && typeof value.streamName === 'string' && typeof value.eventId === 'string')
    return { kind: 'event-id-conflict', streamName: value.streamName, eventId: value.eventId };
  if (value.kind === 'failed' && typeof value.message === 'string') return { kind: 'failed', message: value.message };
  return undefined;
};
