import type {
  AllSubscription,
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamAppend,
  SubscribeToAllOptions,
} from './eventStore.ts';

/**
 * An event store that hands every call to another: the base of the decorators that change only
 * some calls (the metrics' timed appends, an API worker's appends sent to the log's writer).
 */
export abstract class DelegatingEventStore implements EventStore {
  constructor(protected readonly inner: EventStore) {}

  appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision?: ExpectedRevision,
  ): Promise<AppendResult> {
    return this.inner.appendToStream(streamName, events, expectedRevision);
  }

  appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    return this.inner.appendToStreams(appends);
  }

  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamName, options);
  }

  readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  readEventsAt(positions: readonly bigint[]): Promise<RecordedEvent[]> {
    return this.inner.readEventsAt(positions);
  }

  streamRevision(streamName: string): Promise<bigint | 'no_stream'> {
    return this.inner.streamRevision(streamName);
  }

  subscribeToAll(options?: SubscribeToAllOptions): AllSubscription {
    return this.inner.subscribeToAll(options);
  }

  headPosition(): Promise<bigint> {
    return this.inner.headPosition();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
