import {
  isWrongExpectedRevision,
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
} from '../../infra/eventstore/eventStore.ts';
import type { AppendOutcome, ServiceMetrics } from './serviceMetrics.ts';

/**
 * The event store the commands write through, counting and timing its appends (the durable
 * commit included) by outcome; reads pass straight through. Wrapping the port rather than the
 * command handler counts every writer alike: routes, daemons, the CLI's commands in `dms serve`.
 */
export class MeteredEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly metrics: ServiceMetrics,
  ) {}

  appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision?: ExpectedRevision,
  ): Promise<AppendResult> {
    return this.timed(events.length, () => this.inner.appendToStream(streamName, events, expectedRevision));
  }

  appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    return this.timed(
      appends.reduce((count, append) => count + append.events.length, 0),
      () => this.inner.appendToStreams(appends),
    );
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

  private async timed<T>(events: number, append: () => Promise<T>): Promise<T> {
    const started = process.hrtime.bigint();
    let outcome: AppendOutcome = 'failed';
    try {
      const result = await append();
      outcome = 'appended';
      return result;
    } catch (error) {
      if (isWrongExpectedRevision(error)) outcome = 'conflict';
      throw error;
    } finally {
      this.metrics.observeAppend(outcome, events, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }
}
