import {
  BACKWARDS,
  END,
  excludeSystemEvents,
  FORWARDS,
  jsonEvent,
  KurrentDBClient,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type AppendStreamRequest,
  type JSONType,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import { isRecord } from '../typeGuards.ts';
import { BatchingQueue } from './batchingQueue.ts';
import {
  AtomicAppendsUnavailableError,
  checkAtomicAppends,
  featureAnswerOf,
  type AtomicAppendCheck,
  type FeatureAnswer,
} from './esdbAppendPath.ts';
import { decodeMetadata, encodeMetadata } from './esdbMetadata.ts';
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
 * The scaled-out event store: an EventStoreDB or KurrentDB server (or cluster) through
 * `@kurrent/kurrentdb-client`, the successor of `@eventstore/db-client` that speaks to both.
 *
 * Multi-stream appends:
 *
 * - atomic (`EsdbEventStore.connect`, which refuses a server older than KurrentDB 25.1,
 *   esdbAppendPath.ts): one `multiStreamAppend` per call, every stream at an exact revision, all
 *   or nothing on the server. Its metadata travels as flat strings (esdbMetadata.ts) and reads
 *   back as given. This is the store the service writes through.
 * - sequential (`new EsdbEventStore`, which asks the server nothing): one append per stream, one
 *   after the other, not all or nothing: for the tools that write into a log no service writes
 *   (`dms events import` into an empty store, `dms events finish-steps`), on any server.
 *
 * Positions: the server orders `$all` by a (commit, prepare) pair. Since EventStoreDB 20 every
 * event written outside an explicit transaction, and every event of a multi-stream append, has
 * commit = prepare (its own place in the log), and this service opens no explicit transactions,
 * so the commit position alone is the global position here. A checkpoint `p` resumes at
 * `{ commit: p, prepare: p }` and skips the event at exactly `p`.
 *
 * Idempotence: the server acknowledges a repeated append of the same event ids at the same
 * expected revision without writing again, which is the contract's "repeated id = done"; for a
 * multi-stream append, when every stream of it is such a repeat. With an exact expected revision
 * (or `no_stream`) this holds even when the stream has moved on since (the server compares the
 * ids stored after that revision); with `any` it is only best effort (a cache of recent ids),
 * which is why appends here are always sent at an exact revision or `no_stream`.
 */
export class EsdbEventStore implements EventStore {
  private readonly client: KurrentDBClient;
  /** Whether appendToStreams writes several streams in one atomic call; set only by `connect`. */
  private atomic = false;

  /**
   * A store that appends stream by stream and asks the server nothing: for the tools that write
   * into a log no service writes (an import into an empty store, finishing left steps).
   */
  constructor(connectionString: string) {
    this.client = KurrentDBClient.connectionString(withCurrentScheme(connectionString));
  }

  /**
   * Opens the store the service writes through, after asking the server what it offers:
   * multi-stream appends are atomic, and a server without them is refused
   * (AtomicAppendsUnavailableError, with its version and the one needed). Answers why it took it.
   */
  static async connect(
    connectionString: string,
  ): Promise<Readonly<{ store: EsdbEventStore; check: AtomicAppendCheck }>> {
    const store = new EsdbEventStore(connectionString);
    try {
      const check = checkAtomicAppends(await store.serverFeatures());
      if (!check.atomic) throw new AtomicAppendsUnavailableError(check);
      store.atomic = true;
      return { store, check };
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  /**
   * The server's answer to ServerFeatures.GetSupportedMethods, as the client keeps it after asking
   * once per connection. The client uses it itself (`multiStreamAppend` refuses to run on a server
   * without AppendSession) but keeps it behind `capabilities`, a getter it does not export; it is
   * read here by name and narrowed, so a client that stops having it gives undefined (and a
   * refusal to start) instead of a wrong answer. test/infra/esdbAppendPath.test.ts holds the installed
   * client to that shape.
   */
  async serverFeatures(): Promise<FeatureAnswer | undefined> {
    const features: unknown = await Reflect.get(this.client, 'capabilities');
    return featureAnswerOf(features);
  }

  /**
   * Hashes: each event's hash chains to the one before it in the stream (eventHashes.ts), so the
   * previous event is read first, and the append goes at exactly the revision read. With `any` or
   * `stream_exists` a concurrent writer may come in between: the read and the append are then
   * tried again after a short random pause; with an exact revision or `no_stream` the caller
   * hears the conflict as before. A repeated append at an exact revision reads the same previous
   * event, so it computes the same events and the server acknowledges it as already done.
   */
  async appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision: ExpectedRevision = 'any',
  ): Promise<AppendResult> {
    for (let attempt = 0; ; attempt += 1) {
      const prepared = await this.prepare(streamName, events, expectedRevision);
      if (prepared.done) return prepared.done;
      try {
        const result = await this.client.appendToStream(
          streamName,
          prepared.events.map((event) => jsonEvent(event)),
          { streamState: prepared.exact },
        );
        return {
          streamName,
          nextExpectedRevision: result.nextExpectedRevision,
          position: result.position?.commit ?? 0n,
        };
      } catch (error) {
        const conflict = conflictOf(error, [prepared]);
        if (!conflict) throw error;
        if (conflict.retry && attempt < LOOSE_APPEND_ATTEMPTS) {
          await spreadOut(attempt);
          continue;
        }
        throw conflict.error;
      }
    }
  }

  async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    if (!this.atomic || appends.length < 2) {
      const results: AppendResult[] = [];
      for (const append of appends) {
        results.push(await this.appendToStream(append.streamName, append.events, append.expectedRevision));
      }
      return results;
    }
    return this.appendAtomically(appends);
  }

  /**
   * One `multiStreamAppend`: every writing stream read for its previous event (hash and exact
   * revision), then all of them in one call the server commits whole or refuses whole. Streams
   * given without events are only checked, by reading their head before the append: the server's
   * AppendSession takes no stream without records (KurrentDB 25.1 to 26.1), so that check is not
   * part of the atomic call. No command of this service makes such a call (handleCommands leaves
   * out the streams it did not write).
   */
  private async appendAtomically(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    assertAtomicallyAppendable(appends);
    for (let attempt = 0; ; attempt += 1) {
      const checked = await mapLimit(
        appends.filter((append) => append.events.length === 0),
        READ_CONCURRENCY,
        async (append) => {
          const expected = append.expectedRevision ?? 'any';
          const head = await this.streamRevision(append.streamName);
          if (!revisionMatches(expected, head)) throw new WrongExpectedRevisionError(append.streamName, expected, head);
          return checkOnlyResult(append.streamName, head);
        },
      );
      const prepared = await mapLimit(
        appends.filter((append) => append.events.length > 0),
        READ_CONCURRENCY,
        (append) => this.prepare(append.streamName, append.events, append.expectedRevision ?? 'any'),
      );
      const results = new Map<string, AppendResult>(checked.map((result) => [result.streamName, result]));
      // Streams whose events are there already (an append with `any` made again) are left out.
      const sending = prepared.filter((append) => {
        if (append.done) results.set(append.streamName, append.done);
        return !append.done;
      });
      try {
        if (sending.length > 0) {
          const answer = await this.client.multiStreamAppend(
            sending.map((append): AppendStreamRequest => ({
              streamName: append.streamName,
              expectedState: append.exact,
              events: append.events.map((event) => jsonEvent({ ...event, metadata: encodeMetadata(event.metadata) })),
            })),
          );
          // The position of the append's last event, shared by its streams: past each stream's own last
          // event, and where a reader has seen every event of the decision.
          for (const response of answer.responses)
            results.set(response.streamName, {
              streamName: response.streamName,
              nextExpectedRevision: response.revision,
              position: answer.position,
            });
        }
        return appends.map((append) => {
          const result = results.get(append.streamName);
          if (!result) throw new Error(`The server's answer to a multi-stream append left out ${append.streamName}`);
          return result;
        });
      } catch (error) {
        const conflict = conflictOf(error, sending);
        if (!conflict) throw error;
        if (conflict.retry && attempt < LOOSE_APPEND_ATTEMPTS) {
          await spreadOut(attempt);
          continue;
        }
        throw conflict.error;
      }
    }
  }

  /**
   * The events of one stream's append with their hashes, and the exact revision to send them at:
   * the caller's, or for `any` and `stream_exists` the head just read. `done` when, with such a
   * loose expectation, the stream's last event is already the batch's last (the server's own check
   * of repeated ids is best effort there: it would take the batch as new).
   */
  private async prepare(
    streamName: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<PreparedAppend> {
    const previous = await this.previousEvent(streamName, expected);
    const lastId = events[events.length - 1]?.id;
    if (typeof expected !== 'bigint' && previous && lastId !== undefined && previous.id === lastId) {
      return {
        streamName,
        expected,
        exact: previous.revision,
        events: [],
        done: { streamName, nextExpectedRevision: previous.revision, position: previous.position },
      };
    }
    const exact =
      typeof expected === 'bigint' || expected === 'no_stream' ? expected : previous ? previous.revision : 'no_stream';
    let revision = typeof exact === 'bigint' ? exact : -1n;
    let previousHash = previous?.metadata.hash ?? CHAIN_START;
    const hashed = events.map((event): HashedEvent => {
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
      return { id: event.id, type: event.type, data: jsonData(event), metadata: { ...metadata, hash: previousHash } };
    });
    return { streamName, expected, exact, events: hashed };
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

  /**
   * `eventTypes` are kept here, from every event the server sends: a batch's `through` is the
   * last event read, whatever its type.
   */
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
    const types = options.eventTypes;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const read of queue.batches())
          yield {
            events: types ? read.filter((event) => types.has(event.type)) : read,
            through: read[read.length - 1]!.position,
          };
      },
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

/** One stream's part of an append, ready to send. */
type PreparedAppend = Readonly<{
  streamName: string;
  /** What the caller expected. */
  expected: ExpectedRevision;
  /** What is sent: an exact revision, or `no_stream`. */
  exact: bigint | 'no_stream';
  events: readonly HashedEvent[];
  /** Set when the events are there already: the answer, and nothing to send. */
  done?: AppendResult;
}>;

type HashedEvent = Readonly<{ id: string; type: string; data: JSONType; metadata: EventMetadata }>;

/**
 * Tries of an append with `any` or `stream_exists` that meets other writers between reading the
 * previous event and appending: each round one of them wins, so a busy stream still gets through.
 */
const LOOSE_APPEND_ATTEMPTS = 50;

/** Streams read at once while preparing one multi-stream append. */
const READ_CONCURRENCY = 16;

/** Lets the writers that met on a busy stream spread out: up to 1, 2, 4 ... 50 ms. */
const spreadOut = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));

/** Whether a stream at `actual` still satisfies the caller's loose expectation (`any`, `stream_exists`). */
const revisionAllows = (expected: ExpectedRevision, actual: bigint | 'no_stream'): boolean =>
  expected === 'any' || (expected === 'stream_exists' && actual !== 'no_stream');

/**
 * A refused append as the caller hears it, or undefined for any other failure. `retry` when the
 * refusing stream was read with a loose expectation that its actual revision still meets (another
 * writer came in between the read and the append). The server names the first stream it refused.
 */
const conflictOf = (
  error: unknown,
  sent: readonly PreparedAppend[],
): { retry: boolean; error: WrongExpectedRevisionError } | undefined => {
  if (!(error instanceof WrongExpectedVersionError)) return undefined;
  const actual = typeof error.actualState === 'bigint' ? error.actualState : 'no_stream';
  const refused = sent.find((append) => append.streamName === error.streamName) ?? sent[0];
  if (!refused) return undefined;
  return {
    retry: refused.exact !== refused.expected && revisionAllows(refused.expected, actual),
    error: new WrongExpectedRevisionError(refused.streamName, refused.expected, actual),
  };
};

/**
 * What one AppendSession cannot hold: a stream named twice, or two names that differ only in
 * letter case, which the server takes for the same stream there (KurrentDB 25.1 to 26.1 compare
 * the streams of a session without case) although it keeps them apart everywhere else. Such a
 * decision cannot be written atomically; it is refused whole rather than written in parts.
 */
const assertAtomicallyAppendable = (appends: readonly StreamAppend[]): void => {
  const names = appends.map((append) => append.streamName);
  if (new Set(names).size !== names.length) throw new Error('A multi-stream append names each stream once');
  const seen = new Map<string, string>();
  // Only the streams written go to the server; the others are read.
  for (const { streamName } of appends.filter((append) => append.events.length > 0)) {
    const folded = streamName.toLowerCase();
    const earlier = seen.get(folded);
    if (earlier !== undefined)
      throw new Error(
        `Streams ${earlier} and ${streamName} differ only in letter case, which one atomic multi-stream append ` +
          'of KurrentDB cannot hold (docs/operations.md, "Scaling out")',
      );
    seen.set(folded, streamName);
  }
};

/** Whether a stream at `head` is what the caller expected. */
const revisionMatches = (expected: ExpectedRevision, head: bigint | 'no_stream'): boolean =>
  expected === 'any' ||
  (expected === 'no_stream' && head === 'no_stream') ||
  (expected === 'stream_exists' && head !== 'no_stream') ||
  (typeof expected === 'bigint' && head === expected);

/** The answer for a stream an append only checked (no events): its head, nothing written. */
const checkOnlyResult = (streamName: string, head: bigint | 'no_stream'): AppendResult => ({
  streamName,
  nextExpectedRevision: head === 'no_stream' ? -1n : head,
  position: 0n,
});

/** Maps with at most `limit` calls in flight, in order; the first failure is thrown once the others settled. */
const mapLimit = async <T, R>(items: readonly T[], limit: number, map: (item: T) => Promise<R>): Promise<R[]> => {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await map(items[index]!);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.error;
  return results;
};

/**
 * The connection string with the scheme the client names now: `esdb://` and `esdb+discover://`
 * mean the same as `kurrentdb://` and `kurrentdb+discover://`, but the client prints a deprecation
 * warning for them on every connection.
 */
const withCurrentScheme = (connectionString: string): string =>
  connectionString.replace(
    /^esdb(\+discover)?:\/\//i,
    (_scheme, discover: string | undefined) => `kurrentdb${discover ?? ''}://`,
  );

/** An event's data as the server takes JSON data: an object (as every event's here), an array or a string. */
const jsonData = (event: NewEvent): JSONType => {
  const { data } = event;
  if (isRecord(data) || Array.isArray(data) || typeof data === 'string') return data;
  throw new TypeError(`Event ${event.id} (${event.type}): its data is not a JSON object`);
};

const metadataOf = (id: string, stored: unknown): EventMetadata => {
  const metadata = decodeMetadata(stored);
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
