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
  type ResolvedEvent,
} from '@eventstore/db-client';
import type { EventMetadata } from './eventStore.ts';
import { BatchingQueue } from './batchingQueue.ts';
import {
  WrongExpectedRevisionError,
  type AllSubscription,
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

  async appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision: ExpectedRevision = 'any',
  ): Promise<AppendResult> {
    try {
      const result = await this.client.appendToStream(
        streamName,
        events.map((event) =>
          jsonEvent({
            id: event.id,
            type: event.type,
            data: event.data as Record<string, unknown>,
            metadata: event.metadata as unknown as Record<string, unknown>,
          }),
        ),
        { expectedRevision: expectedRevision as AppendExpectedRevision },
      );
      return {
        streamName,
        nextExpectedRevision: result.nextExpectedRevision,
        position: result.position?.commit ?? 0n,
      };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = typeof error.actualVersion === 'bigint' ? error.actualVersion : 'no_stream';
        throw new WrongExpectedRevisionError(streamName, expectedRevision, actual);
      }
      throw error;
    }
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
      for await (const resolved of this.client.readStream(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: 1 })) {
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

const toRecordedEvent = (resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined => {
  const event = resolved.event;
  if (!event || event.type.startsWith('$') || !event.isJson) return undefined;
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: event.metadata as unknown as EventMetadata,
    streamName: event.streamId,
    revision: event.revision,
    position: event.position?.commit ?? resolved.commitPosition ?? 0n,
    recordedAt: event.created,
  };
};
