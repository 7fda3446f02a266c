import {
  isWrongExpectedRevision,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type StreamAppend,
} from '../../infra/eventstore/eventStore.ts';
import { DelegatingEventStore } from '../../infra/eventstore/delegatingEventStore.ts';
import type { AppendOutcome, ServiceMetrics } from './serviceMetrics.ts';

/**
 * The event store the commands write through, counting and timing its appends (the durable
 * commit included) by outcome; reads pass straight through. Wrapping the port rather than the
 * command handler counts every writer alike: routes, daemons, the CLI's commands in `dms serve`.
 */
export class MeteredEventStore extends DelegatingEventStore {
  constructor(
    inner: EventStore,
    private readonly metrics: ServiceMetrics,
  ) {
    super(inner);
  }

  override appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision?: ExpectedRevision,
  ): Promise<AppendResult> {
    return this.timed(events.length, () => this.inner.appendToStream(streamName, events, expectedRevision));
  }

  override appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    return this.timed(
      appends.reduce((count, append) => count + append.events.length, 0),
      () => this.inner.appendToStreams(appends),
    );
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
