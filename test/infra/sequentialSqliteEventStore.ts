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
} from '../../infra/eventstore/eventStore.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';

/** The writer stopped: thrown by the append that would have come after the crash point, and every one after it. */
export class SimulatedCrash extends Error {
  constructor(streamName: string) {
    super(`simulated crash before appending to ${streamName}`);
    this.name = 'SimulatedCrash';
  }
}

/**
 * A stand-in for the EventStoreDB adapter in tests: a real SQLite event store that appends one
 * stream per call, so a multi-stream append is as divisible as on EventStoreDB. `crashAfter`
 * stops it between two stream appends; `beforeRevisionRead` lets a test act at the moment a
 * writer reads a stream's head.
 */
export class SequentialSqliteEventStore implements EventStore {
  readonly sqlite: SqliteEventStore;
  private crash:
    { remaining: number; counts: (streamName: string) => boolean; onCrash: (() => void) | undefined } | undefined;
  private crashed = false;
  /** Awaited before each `streamRevision` read. */
  beforeRevisionRead: ((streamName: string) => Promise<void> | void) | undefined;

  constructor(path: string) {
    this.sqlite = new SqliteEventStore(path, { pollIntervalMs: 20 });
  }

  /**
   * After `appends` more stream appends that `counts` (default: all), the next such append
   * throws SimulatedCrash instead of writing, and so does every append after it. `onCrash` runs
   * first (a test cuts the writer's Redis connection there, as a dying process would).
   */
  crashAfter(
    appends: number,
    options: Readonly<{ counts?: (streamName: string) => boolean; onCrash?: () => void }> = {},
  ): void {
    this.crash = { remaining: appends, counts: options.counts ?? (() => true), onCrash: options.onCrash };
  }

  async appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision: ExpectedRevision = 'any',
  ): Promise<AppendResult> {
    if (this.crashed) throw new SimulatedCrash(streamName);
    if (this.crash?.counts(streamName)) {
      if (this.crash.remaining === 0) {
        this.crashed = true;
        this.crash.onCrash?.();
        throw new SimulatedCrash(streamName);
      }
      this.crash.remaining -= 1;
    }
    return this.sqlite.appendToStream(streamName, events, expectedRevision);
  }

  async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const results: AppendResult[] = [];
    for (const append of appends)
      results.push(await this.appendToStream(append.streamName, append.events, append.expectedRevision));
    return results;
  }

  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.sqlite.readStream(streamName, options);
  }

  readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.sqlite.readAll(options);
  }

  readEventsAt(positions: readonly bigint[]): Promise<RecordedEvent[]> {
    return this.sqlite.readEventsAt(positions);
  }

  async streamRevision(streamName: string): Promise<bigint | 'no_stream'> {
    await this.beforeRevisionRead?.(streamName);
    return this.sqlite.streamRevision(streamName);
  }

  subscribeToAll(options?: SubscribeToAllOptions): AllSubscription {
    return this.sqlite.subscribeToAll(options);
  }

  headPosition(): Promise<bigint> {
    return this.sqlite.headPosition();
  }

  close(): Promise<void> {
    return this.sqlite.close();
  }
}
