import { withoutHash } from './eventHashes.ts';
import {
  isEventMetadata,
  type EventMetadata,
  type EventStore,
  type NewEvent,
  type RecordedEvent,
  type StreamAppend,
} from './eventStore.ts';
import { HashChainChecker } from './hashChains.ts';
import { isRecord } from '../typeGuards.ts';
import { LogChainChecker } from './logChain.ts';

/**
 * The event log as NDJSON, for backups and moves between stores: one event per line, oldest first
 * (the order of `$all`), with everything the store keeps of it:
 *
 *   {"position":1,"stream":"account-root","revision":0,"id":"…","type":"AccountCreated",
 *    "data":{…},"metadata":{"account":"root",…,"hash":"…"},"recordedAt":"2026-…Z","logHash":"…"}
 *
 * (`logHash`, the event's link in the log chain, only from stores that keep it: logChain.ts.)
 * An import appends the lines in that order into an empty store, with the same ids, streams,
 * revisions, types, data and metadata; the store computes the hashes again (the same ones, for a
 * store that was hashed throughout) and records its own time. Positions come out the same on
 * SQLite, whose positions count the events; EventStoreDB gives its own.
 */
export type LoggedEvent = Readonly<{
  position: number;
  stream: string;
  revision: number;
  id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  recordedAt: string;
  logHash?: string;
}>;

export const loggedEvent = (event: RecordedEvent): LoggedEvent => ({
  position: Number(event.position),
  stream: event.streamName,
  revision: Number(event.revision),
  id: event.id,
  type: event.type,
  data: event.data,
  metadata: event.metadata,
  recordedAt: event.recordedAt.toISOString(),
  ...(event.logHash !== undefined ? { logHash: event.logHash } : {}),
});

/** Every event of the store as NDJSON text, in chunks of about 64 KiB; `onProgress` after every read. */
export async function* exportEventLog(
  eventStore: EventStore,
  options: Readonly<{ batchSize?: number; onProgress?: (events: number, position: bigint) => void }> = {},
): AsyncGenerator<string> {
  let after = 0n;
  let events = 0;
  for (;;) {
    const batch = await eventStore.readAll({ after, maxCount: options.batchSize ?? 1000 });
    if (batch.length === 0) return;
    let chunk = '';
    for (const event of batch) {
      chunk += `${JSON.stringify(loggedEvent(event))}\n`;
      if (chunk.length >= 64 * 1024) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk.length > 0) yield chunk;
    events += batch.length;
    after = batch[batch.length - 1]!.position;
    options.onProgress?.(events, after);
  }
}

/** An import that cannot go on: a store that is not empty, a malformed line, a broken chain. */
export class EventImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventImportError';
  }
}

export type ImportReport = Readonly<{
  events: number;
  streams: number;
  /** Lines whose position differs from the one the store gave the event. */
  movedPositions: number;
  /** Lines without a hash (exported from a store written before hashing); they have one now. */
  unhashed: number;
}>;

/**
 * Appends the events of an NDJSON log (`exportEventLog`'s format) into an empty store, in order.
 * Every hash a line carries is checked against its stream's chain first, and every log hash
 * against the log chain, so a log edited, cut inside or reordered after its export is refused
 * before the first event it changed is written (the store computes both chains again). Events are appended in chunks of
 * `chunkSize` (default 1000): consecutive events of one stream as one append at their recorded
 * revision, the appends of a chunk in one call, which SQLite commits as one transaction in order
 * and EventStoreDB appends one after the other (a store opened without `EsdbEventStore.connect`,
 * as bin/commands/eventsImport.ts does: an import into an empty store needs no atomic appends).
 */
export const importEventLog = async (
  eventStore: EventStore,
  lines: AsyncIterable<string>,
  options: Readonly<{ chunkSize?: number; onProgress?: (events: number) => void }> = {},
): Promise<ImportReport> => {
  if ((await eventStore.headPosition()) !== 0n)
    throw new EventImportError('The event store is not empty: an import goes only into an empty store');
  const checker = new HashChainChecker();
  const logChecker = new LogChainChecker('stored');
  const chunkSize = options.chunkSize ?? 1000;
  const streams = new Set<string>();
  let runs: { append: StreamAppend & { events: NewEvent[] }; lastPosition: number }[] = [];
  let pending = 0;
  let events = 0;
  let movedPositions = 0;
  let lineNumber = 0;

  const flush = async (): Promise<void> => {
    if (runs.length === 0) return;
    const results = await eventStore.appendToStreams(runs.map((run) => run.append));
    results.forEach((result, index) => {
      if (result.position !== BigInt(runs[index]!.lastPosition)) movedPositions += 1;
    });
    events += pending;
    runs = [];
    pending = 0;
    options.onProgress?.(events);
  };

  for await (const line of lines) {
    lineNumber += 1;
    if (line.trim() === '') continue;
    const event = parseLine(line, lineNumber);
    const stored = {
      id: event.id,
      streamName: event.stream,
      revision: BigInt(event.revision),
      position: BigInt(event.position),
      type: event.type,
      data: event.data,
      metadata: event.metadata,
    };
    const broken = checker.check(stored);
    if (broken)
      throw new EventImportError(
        `Line ${lineNumber}: stream ${broken.streamName}, revision ${broken.revision}: ${broken.detail}`,
      );
    const logBroken = logChecker.check({
      ...stored,
      ...(typeof event.logHash === 'string' ? { logHash: event.logHash } : {}),
    });
    if (logBroken) throw new EventImportError(`Line ${lineNumber}: the log chain: ${logBroken.detail}`);
    streams.add(event.stream);
    const newEvent: NewEvent = {
      id: event.id,
      type: event.type,
      data: event.data,
      metadata: withoutHash(event.metadata),
    };
    const last = runs[runs.length - 1];
    if (last && last.append.streamName === event.stream) {
      last.append.events.push(newEvent);
      last.lastPosition = event.position;
    } else {
      runs.push({
        append: {
          streamName: event.stream,
          expectedRevision: event.revision === 0 ? 'no_stream' : BigInt(event.revision - 1),
          events: [newEvent],
        },
        lastPosition: event.position,
      });
    }
    pending += 1;
    if (pending >= chunkSize) await flush();
  }
  await flush();
  return { events, streams: streams.size, movedPositions, unhashed: checker.unhashed };
};

const parseLine = (line: string, lineNumber: number): LoggedEvent => {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new EventImportError(`Line ${lineNumber} is not JSON`);
  }
  if (!isLoggedEvent(value))
    throw new EventImportError(
      `Line ${lineNumber} is not an exported event (id, stream, revision, position, type, data, metadata)`,
    );
  return value;
};

/** What an import relies on of an exported line; the rest is as the exporting service wrote it. */
const isLoggedEvent = (value: unknown): value is LoggedEvent =>
  isRecord(value) &&
  typeof value.id === 'string' &&
  typeof value.stream === 'string' &&
  typeof value.type === 'string' &&
  typeof value.revision === 'number' &&
  Number.isSafeInteger(value.revision) &&
  value.revision >= 0 &&
  Number.isSafeInteger(value.position) &&
  'data' in value &&
  isEventMetadata(value.metadata);
