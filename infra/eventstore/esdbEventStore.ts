import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  excludeSystemEvents,
  FORWARDS,
  jsonEvent,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type JSONType,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { isRecord } from '../narrowing.ts';
import { BatchingQueue } from './batchingQueue.ts';
import { CHAIN_START, eventHash, withoutHash } from './eventHashes.ts';
import {
  isEventMetadata,
  WrongExpectedRevisionError,
  type AllSubscription,
  type EventMetadata,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeToAllOptions,
} from './eventStore.ts';

/**
 * The scaled-out event store: an EventStoreDB cluster through `@eventstore/db-client` 6.
 *
 * Positions: EventStoreDB orders `$all` by a (commit, prepare) pair. Since version 20 every event
 * written outside an explicit transaction has commit = prepare, and this service never opens
 * explicit transactions, so the commit position alone is the global position here. A checkpoint
 * `p` resumes at `{ commit: p, prepare: p }` and skips the event at exactly `p`.
 *
 * Idempotence: EventStoreDB itself acknowledges a repeated append of the same event ids at the
 * same expected revision without writing again, which is the contract's "repeated id = done".
 * With an exact expected revision this holds even when the stream has moved on since (it compares
 * the ids stored after that revision); with `any` it is only best effort (a cache of recent ids),
 * which is why SteppedEventStore records exact revisions in its intents.
 *
 * `appendToStreams` appends one stream after the other: on its own it is not all or nothing.
 * The service always wraps this store in SteppedEventStore (infra/stores.ts).
 */
export class EsdbEventStore implements EventStore {
  private readonly client: EventStoreDBClient;

  constructor(connectionString: string) {
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  /**
   * Hashes: each event's hash chains to the one before it in the stream (eventHashes.ts), so the
   * previous event is read first, and the append goes at exactly the revision read. With `any` or
   * `stream_exists` a concurrent writer may come in between: the read and the append are then
   * tried again after a short random pause; with an exact revision or `no_stream` the caller
   * hears the conflict as before. A repeated append at an exact revision reads the same previous event, so it computes the same
   * events and EventStoreDB acknowledges it as already done.
   */
  async appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision: ExpectedRevision = 'any',
  ): Promise<AppendResult> {
    for (let attempt = 0; ; attempt += 1) {
      const previous = await this.previousEvent(streamName, expectedRevision);
      // With `any`, EventStoreDB's own check of repeated ids is best effort: a batch whose last
      // event is the stream's last is answered as the first time.
      const lastId = events[events.length - 1]?.id;
      if (typeof expectedRevision !== 'bigint' && previous && lastId !== undefined && previous.id === lastId) {
        return { streamName, nextExpectedRevision: previous.revision, position: previous.position };
      }
      const exact: AppendExpectedRevision =
        typeof expectedRevision === 'bigint' || expectedRevision === 'no_stream'
          ? expectedRevision
          : previous
            ? previous.revision
            : 'no_stream';
      let revision = typeof exact === 'bigint' ? exact : -1n;
      let previousHash = previous?.metadata.hash ?? CHAIN_START;
      const hashed = events.map((event) => {
        revision += 1n;
        const metadata = withoutHash(event.metadata);
        previousHash = eventHash(previousHash, {
          id: event.id,
          streamName,
          revision,
          type: event.type,
          data: event.data,
          metadata,
        });
        return jsonEvent({
          id: event.id,
          type: event.type,
          data: jsonData(event),
          metadata: { ...metadata, hash: previousHash },
        });
      });
      try {
        const result = await this.client.appendToStream(streamName, hashed, { expectedRevision: exact });
        return {
          streamName,
          nextExpectedRevision: result.nextExpectedRevision,
          position: result.position?.commit ?? 0n,
        };
      } catch (error) {
        if (error instanceof WrongExpectedVersionError) {
          const actual = typeof error.actualVersion === 'bigint' ? error.actualVersion : 'no_stream';
          if (
            exact !== expectedRevision &&
            attempt < LOOSE_APPEND_ATTEMPTS &&
            revisionAllows(expectedRevision, actual)
          ) {
            // A busy stream (the steps' journal): let the writers that met here spread out.
            await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));
            continue;
          }
          throw new WrongExpectedRevisionError(streamName, expectedRevision, actual);
        }
        throw error;
      }
    }
  }

  /**
   * The event the append chains to: the one at the expected revision, or the stream's last for
   * `any` and `stream_exists`; undefined for `no_stream` or a missing stream.
   */
  private async previousEvent(
    streamName: string,
    expectedRevision: ExpectedRevision,
  ): Promise<RecordedEvent | undefined> {
    if (expectedRevision === 'no_stream') return undefined;
    try {
      const read =
        typeof expectedRevision === 'bigint'
          ? this.client.readStream(streamName, { direction: FORWARDS, fromRevision: expectedRevision, maxCount: 1 })
          : this.client.readStream(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
      for await (const resolved of read) {
        const event = toRecordedEvent(resolved);
        if (event) return event;
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return undefined;
      throw error;
    }
    return undefined;
  }

  async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const results: AppendResult[] = [];
    for (const append of appends) {
      results.push(await this.appendToStream(append.streamName, append.events, append.expectedRevision));
    }
    return results;
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamName, {
        direction: FORWARDS,
        fromRevision: options.fromRevision ?? START,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of read) {
        const event = toRecordedEvent(resolved);
        if (event) events.push(event);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  async streamRevision(streamName: string): Promise<bigint | 'no_stream'> {
    try {
      for await (const resolved of this.client.readStream(streamName, {
        direction: BACKWARDS,
        fromRevision: END,
        maxCount: 1,
      })) {
        if (resolved.event) return resolved.event.revision;
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return 'no_stream';
      throw error;
    }
    return 'no_stream';
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    const after = options.after ?? 0n;
    const events: RecordedEvent[] = [];
    // Read a little more than asked: the event at the checkpoint itself and system events are skipped.
    const read = this.client.readAll({
      direction: FORWARDS,
      fromPosition: after === 0n ? START : { commit: after, prepare: after },
      maxCount: options.maxCount + 1,
    });
    for await (const resolved of read) {
      const event = toRecordedEvent(resolved);
      if (!event || event.position <= after) continue;
      events.push(event);
      if (events.length >= options.maxCount) break;
    }
    return events;
  }

  /** One read of `$all` per position (commit = prepare here, see above), a few at a time. */
  async readEventsAt(positions: readonly bigint[]): Promise<RecordedEvent[]> {
    const wanted = [...new Set(positions)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const found: (RecordedEvent | undefined)[] = new Array(wanted.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < wanted.length) {
        const index = next++;
        const position = wanted[index]!;
        for await (const resolved of this.client.readAll({
          direction: FORWARDS,
          fromPosition: { commit: position, prepare: position },
          maxCount: 1,
        })) {
          const event = toRecordedEvent(resolved);
          if (event && event.position === position) found[index] = event;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(16, wanted.length) }, worker));
    return found.filter((event): event is RecordedEvent => event !== undefined);
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): AllSubscription {
    const after = options.after ?? 0n;
    const queue = new BatchingQueue<RecordedEvent>(options.batchSize ?? 500);
    const subscription = this.client.subscribeToAll({
      fromPosition: after === 0n ? START : { commit: after, prepare: after },
      filter: excludeSystemEvents(),
    });
    void (async () => {
      try {
        for await (const resolved of subscription) {
          const event = toRecordedEvent(resolved);
          if (event && event.position > after) await queue.push(event);
        }
        queue.end();
      } catch (error) {
        queue.fail(error);
      }
    })();
    return {
      [Symbol.asyncIterator]: () => queue.batches(),
      async close() {
        queue.end();
        await subscription.unsubscribe();
      },
    };
  }

  async headPosition(): Promise<bigint> {
    let from: { commit: bigint; prepare: bigint } | typeof END = END;
    for (;;) {
      let last: AllStreamResolvedEvent | undefined;
      for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: 100 })) {
        last = resolved;
        const event = toRecordedEvent(resolved);
        if (event) return event.position;
      }
      if (!last?.event?.position) return 0n;
      from = last.event.position;
    }
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}

/**
 * Tries of an append with `any` or `stream_exists` that meets other writers between reading the
 * previous event and appending: each round one of them wins, so a busy stream (`steps-journal`,
 * appended to by every step) still gets through.
 */
const LOOSE_APPEND_ATTEMPTS = 50;

/** Whether a stream at `actual` still satisfies the caller's loose expectation (`any`, `stream_exists`). */
const revisionAllows = (expected: ExpectedRevision, actual: bigint | 'no_stream'): boolean =>
  expected === 'any' || (expected === 'stream_exists' && actual !== 'no_stream');

/** An event's data as EventStoreDB takes JSON data: an object (as every event's here), an array or a string. */
const jsonData = (event: NewEvent): JSONType => {
  const { data } = event;
  if (isRecord(data) || Array.isArray(data) || typeof data === 'string') return data;
  throw new TypeError(`Event ${event.id} (${event.type}): its data is not a JSON object`);
};

const metadataOf = (id: string, metadata: unknown): EventMetadata => {
  if (!isEventMetadata(metadata)) throw new Error(`Event ${id} is stored without its metadata`);
  return metadata;
};

const toRecordedEvent = (resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined => {
  const event = resolved.event;
  if (!event || event.type.startsWith('$') || !event.isJson) return undefined;
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: metadataOf(event.id, event.metadata),
    streamName: event.streamId,
    revision: event.revision,
    position: event.position?.commit ?? resolved.commitPosition ?? 0n,
    recordedAt: event.created,
  };
};
