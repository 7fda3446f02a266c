import Database from 'better-sqlite3';
import { BroadcastChannel } from 'node:worker_threads';
import { resolve } from 'node:path';
import type { PositionSignal } from '../positionSignal.ts';
import { CHAIN_START, eventHash, withoutHash } from './eventHashes.ts';
import { LOG_CHAIN_START, logHash } from './logChain.ts';
import { SAFETY_AUTOCHECKPOINT_PAGES, WalCheckpointer } from '../sqliteCheckpointer.ts';
import {
  EventIdConflictError,
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
import { errorMessage } from '../narrowing.ts';

export type CommitStats = { commits: number; appends: number; seconds: number };

/** Where a subscription stands: the last position delivered, and how to wake it from its wait. */
type SubscriptionState = { after: bigint; closed: boolean; wake: (() => void) | undefined };

type EventRow = {
  position: number;
  event_id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  recorded_at: string;
  /** Null for events written before hashing. */
  hash: string | null;
  /** Null for events written before the log chain (logChain.ts). */
  log_hash: string | null;
};

export type SqliteEventStoreOptions = Readonly<{
  /** How often an idle subscription looks for events appended by other processes; default 200 ms. */
  pollIntervalMs?: number;
  /**
   * Checkpoint the WAL in a worker thread (see WalCheckpointer); default false. The service turns
   * it on; short-lived tools and tests need no extra thread.
   */
  backgroundCheckpoints?: boolean;
  /**
   * Carries "appended up to P" between the processes sharing the file (the deployment's Redis,
   * infra/queue/redisPositionSignals.ts): each commit is announced on it, and what other processes
   * announce wakes this one's subscriptions at once instead of at their next poll. Default none.
   */
  crossProcess?: PositionSignal;
}>;

/**
 * The embedded event store: one SQLite file in WAL mode with `synchronous=FULL`, so a commit is
 * on disk before `append` resolves. `position` is the table's AUTOINCREMENT key, which never
 * reuses a value, so it serves as the global order of `$all`. Every event carries two hashes:
 * its stream's chain (`hash`, eventHashes.ts) and the log's (`log_hash`, logChain.ts), both
 * computed in the append's transaction, which holds the file's write lock.
 */
export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly listeners = new Set<() => void>();
  private readonly pending: {
    appends: readonly StreamAppend[];
    resolve(results: AppendResult[]): void;
    reject(error: unknown): void;
  }[] = [];
  private readonly pollIntervalMs: number;
  private readonly checkpointer: WalCheckpointer | undefined;
  /** Tells the stores of the same file on other threads of this process that events were appended. */
  private readonly appended: BroadcastChannel;
  private readonly crossProcess: PositionSignal | undefined;
  private readonly stopHearing: () => void;
  private closed = false;
  /** The log hash the next event appended in the open transaction chains to. */
  private logHead = LOG_CHAIN_START;
  private readonly commits: CommitStats = { commits: 0, appends: 0, seconds: 0 };

  private readonly statements: {
    findById: Database.Statement<[string], Pick<EventRow, 'stream' | 'revision' | 'position'>>;
    streamHead: Database.Statement<[string], { revision: number; hash: string | null }>;
    logHead: Database.Statement<[], { log_hash: string | null }>;
    insert: Database.Statement<[string, string, number, string, string, string, string, string, string]>;
    readStream: Database.Statement<[string, number], EventRow>;
    readStreamLimited: Database.Statement<[string, number, number], EventRow>;
    readAll: Database.Statement<[number, number], EventRow>;
    readAt: Database.Statement<[string], EventRow>;
    head: Database.Statement<[], { position: number | null }>;
  };

  constructor(path: string, options: SqliteEventStoreOptions = {}) {
    this.pollIntervalMs = options.pollIntervalMs ?? 200;
    this.db = new Database(path);
    // A subscription on another thread (the projection thread of `dms serve`) wakes at once
    // instead of at its next poll; other processes through `crossProcess`, or by polling.
    this.appended = new BroadcastChannel(`dms-sqlite-events:${resolve(path)}`);
    this.appended.onmessage = () => this.notify();
    (this.appended as BroadcastChannel & { unref(): void }).unref();
    this.crossProcess = options.crossProcess;
    this.stopHearing = this.crossProcess?.subscribe(() => this.notify()) ?? (() => undefined);
    this.db.pragma('journal_mode = WAL');
    // FULL: the WAL is synced at every commit, so an acknowledged append survives a power cut.
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    if (options.backgroundCheckpoints) {
      this.db.pragma(`wal_autocheckpoint = ${SAFETY_AUTOCHECKPOINT_PAGES}`);
      this.checkpointer = new WalCheckpointer(path, { synchronous: 'FULL' });
    }
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id TEXT NOT NULL,
        stream TEXT NOT NULL,
        revision INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        metadata TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        hash TEXT,
        log_hash TEXT
      );
      CREATE UNIQUE INDEX IF NOT EXISTS events_by_id ON events (event_id);
      CREATE UNIQUE INDEX IF NOT EXISTS events_by_stream ON events (stream, revision);
    `);
    // Files written before hashing, or before the log chain, gain the columns; their events stay
    // without (NULL). Two processes opening such a file at once may both try: the second finds it added.
    const columns = this.db.prepare<[], { name: string }>('PRAGMA table_info(events)').all();
    for (const column of ['hash', 'log_hash']) {
      if (columns.some((existing) => existing.name === column)) continue;
      try {
        this.db.exec(`ALTER TABLE events ADD COLUMN ${column} TEXT`);
      } catch (error) {
        if (!/duplicate column/i.test(errorMessage(error))) throw error;
      }
    }
    this.statements = {
      findById: this.db.prepare('SELECT stream, revision, position FROM events WHERE event_id = ?'),
      // The stream's last event: its revision, and the hash the next event chains to.
      streamHead: this.db.prepare('SELECT revision, hash FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1'),
      // The log's last event: the log hash the next event chains to (NULL before the log chain).
      logHead: this.db.prepare('SELECT log_hash FROM events ORDER BY position DESC LIMIT 1'),
      insert: this.db.prepare(
        'INSERT INTO events (event_id, stream, revision, type, data, metadata, recorded_at, hash, log_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      // Without a LIMIT parameter SQLite answers a stream that does not exist three times faster;
      // commands read every stream they decide on, most often a new one (a file being registered).
      readStream: this.db.prepare('SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision'),
      readStreamLimited: this.db.prepare(
        'SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?',
      ),
      readAll: this.db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      readAt: this.db.prepare(
        'SELECT * FROM events WHERE position IN (SELECT value FROM json_each(?)) ORDER BY position',
      ),
      head: this.db.prepare('SELECT max(position) AS position FROM events'),
    };
  }

  async appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision: ExpectedRevision = 'any',
  ): Promise<AppendResult> {
    const [result] = await this.appendToStreams([{ streamName, events, expectedRevision }]);
    return result!;
  }

  /**
   * Group commit: appends that arrive in the same turn of the event loop are written in one
   * transaction with one fsync. Each keeps its own savepoint, so one that fails (a stale expected
   * revision) rolls back alone and the others still commit; each caller hears its own outcome only
   * after the shared commit is on disk.
   */
  appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    this.assertOpen();
    return new Promise((resolve, reject) => {
      this.pending.push({ appends, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.commitPending());
    });
  }

  private commitPending(): void {
    const group = this.pending.splice(0);
    if (group.length === 0) return;
    let outcomes: ({ results: AppendResult[] } | { error: unknown })[];
    const started = process.hrtime.bigint();
    try {
      this.assertOpen();
      outcomes = this.db
        .transaction(() => {
          // Read once the write lock is held: other processes append to the same file.
          this.logHead = this.statements.logHead.get()?.log_hash ?? LOG_CHAIN_START;
          return group.map((item) => {
            const logHeadBefore = this.logHead;
            try {
              // A nested transaction is a savepoint: a failure here undoes only this caller's appends.
              return {
                results: this.db.transaction(() => item.appends.map((append) => this.appendInTransaction(append)))(),
              };
            } catch (error) {
              this.logHead = logHeadBefore;
              return { error };
            }
          });
        })
        .immediate();
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    this.commits.commits += 1;
    this.commits.appends += group.length;
    this.commits.seconds += Number(process.hrtime.bigint() - started) / 1e9;
    group.forEach((item, index) => {
      const outcome = outcomes[index]!;
      if ('error' in outcome) item.reject(outcome.error);
      else item.resolve(outcome.results);
    });
    this.notify();
    this.appended.postMessage(null);
    if (this.crossProcess) {
      let last = 0n;
      for (const outcome of outcomes)
        if ('results' in outcome) for (const { position } of outcome.results) if (position > last) last = position;
      if (last > 0n) this.crossProcess.publish(last);
    }
  }

  private appendInTransaction({ streamName, events, expectedRevision = 'any' }: StreamAppend): AppendResult {
    // 1. A batch whose ids are all stored already was appended before: answer as the first time.
    const stored = events.map((event) => this.statements.findById.get(event.id));
    if (events.length > 0 && stored.every((row) => row !== undefined && row.stream === streamName)) {
      const last = stored[stored.length - 1]!;
      return { streamName, nextExpectedRevision: BigInt(last.revision), position: BigInt(last.position) };
    }
    const partlyStored = stored.findIndex((row) => row !== undefined);
    if (partlyStored >= 0) throw new EventIdConflictError(streamName, events[partlyStored]!.id);

    // 2. Optimistic concurrency: compare the stream's head with what the caller expected. The
    //    head is read inside the transaction, after the appends of the same group before this one,
    //    and a rolled-back savepoint takes its rows with it: the hash chain never forks.
    const last = this.statements.streamHead.get(streamName);
    const head = last?.revision ?? null;
    assertExpectedRevision(streamName, expectedRevision, head);

    // 3. Append after the head, each event chained to the one before in its stream (a stream
    //    whose last event was written before hashing starts a new chain) and in the log.
    let revision = head ?? -1;
    let previousHash = last?.hash ?? CHAIN_START;
    let position = 0;
    const recordedAt = new Date().toISOString();
    for (const event of events) {
      revision += 1;
      const metadata = withoutHash(event.metadata);
      previousHash = eventHash(previousHash, {
        id: event.id,
        streamName,
        revision: BigInt(revision),
        type: event.type,
        data: event.data,
        metadata,
      });
      const info = this.statements.insert.run(
        event.id,
        streamName,
        revision,
        event.type,
        JSON.stringify(event.data),
        this.metadataJson(metadata),
        recordedAt,
        previousHash,
        (this.logHead = logHash(this.logHead, previousHash)),
      );
      position = Number(info.lastInsertRowid);
    }
    if (events.length === 0) {
      return { streamName, nextExpectedRevision: BigInt(revision), position: 0n };
    }
    return { streamName, nextExpectedRevision: BigInt(revision), position: BigInt(position) };
  }

  /**
   * Events of one command share one metadata object (commands/handleCommand.ts): it is serialised
   * once, not once per event (a bulk registration appends thousands of events with it).
   */
  private lastMetadata: { source: EventMetadata; json: string } | undefined;

  private metadataJson(metadata: EventMetadata): string {
    if (this.lastMetadata?.source !== metadata)
      this.lastMetadata = { source: metadata, json: JSON.stringify(metadata) };
    return this.lastMetadata.json;
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    this.assertOpen();
    const fromRevision = Number(options.fromRevision ?? 0n);
    const rows =
      options.maxCount === undefined
        ? this.statements.readStream.all(streamName, fromRevision)
        : this.statements.readStreamLimited.all(streamName, fromRevision, options.maxCount);
    return rows.map(toRecordedEvent);
  }

  async streamRevision(streamName: string): Promise<bigint | 'no_stream'> {
    this.assertOpen();
    const head = this.statements.streamHead.get(streamName)?.revision ?? null;
    return head === null ? 'no_stream' : BigInt(head);
  }

  async readEventsAt(positions: readonly bigint[]): Promise<RecordedEvent[]> {
    this.assertOpen();
    const events: RecordedEvent[] = [];
    // One statement per thousand positions, whatever their number (a JSON array bound once).
    for (let start = 0; start < positions.length; start += 1000) {
      const chunk = positions.slice(start, start + 1000).map((position) => Number(position));
      events.push(...this.statements.readAt.all(JSON.stringify(chunk)).map(toRecordedEvent));
    }
    return events.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    this.assertOpen();
    return this.statements.readAll.all(Number(options.after ?? 0n), options.maxCount).map(toRecordedEvent);
  }

  async headPosition(): Promise<bigint> {
    this.assertOpen();
    return BigInt(this.statements.head.get()?.position ?? 0);
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): AllSubscription {
    const subscription: SubscriptionState = { after: options.after ?? 0n, closed: false, wake: undefined };
    const batchSize = options.batchSize ?? 500;
    return {
      [Symbol.asyncIterator]: () => this.batchesOf(subscription, batchSize),
      close: async () => {
        subscription.closed = true;
        subscription.wake?.();
      },
    };
  }

  private async *batchesOf(subscription: SubscriptionState, batchSize: number): AsyncGenerator<RecordedEvent[]> {
    while (!subscription.closed && !this.closed) {
      const batch = await this.readAll({ after: subscription.after, maxCount: batchSize });
      if (batch.length > 0) {
        subscription.after = batch[batch.length - 1]!.position;
        yield batch;
        continue;
      }
      await this.waitForAppend(subscription);
    }
  }

  /** Resolves at the next append this process hears of, or after the poll interval. */
  private waitForAppend(subscription: SubscriptionState): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(done);
        subscription.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.pollIntervalMs);
      subscription.wake = done;
      this.listeners.add(done);
    });
  }

  /**
   * The commits so far: how many, how many callers' appends they held (more appends than commits:
   * appends shared a commit), and the seconds they took, fsync included.
   */
  commitStats(): Readonly<CommitStats> {
    return { ...this.commits };
  }

  /** SQLite's `synchronous` level of the writing connection (2 = FULL). */
  synchronousLevel(): number {
    return Number(this.db.pragma('synchronous', { simple: true }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.commitPending();
    this.closed = true;
    for (const listener of [...this.listeners]) listener();
    this.appended.close();
    this.stopHearing();
    await this.checkpointer?.stop();
    this.db.close();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The event store is closed');
  }
}

const assertExpectedRevision = (streamName: string, expected: ExpectedRevision, head: number | null): void => {
  const actual = head === null ? 'no_stream' : BigInt(head);
  const ok =
    expected === 'any' ||
    (expected === 'no_stream' && head === null) ||
    (expected === 'stream_exists' && head !== null) ||
    (typeof expected === 'bigint' && head !== null && BigInt(head) === expected);
  if (!ok) throw new WrongExpectedRevisionError(streamName, expected, actual);
};

/** The hash has a column of its own, so the events of one command still share one metadata text. */
const metadataOf = (row: EventRow): EventMetadata => {
  const metadata: unknown = JSON.parse(row.metadata);
  if (!isEventMetadata(metadata)) throw new Error(`Event ${row.event_id} is stored without its metadata`);
  return row.hash === null ? metadata : { ...metadata, hash: row.hash };
};

const toRecordedEvent = (row: EventRow): RecordedEvent => ({
  id: row.event_id,
  type: row.type,
  data: JSON.parse(row.data) as unknown,
  metadata: metadataOf(row),
  streamName: row.stream,
  revision: BigInt(row.revision),
  position: BigInt(row.position),
  recordedAt: new Date(row.recorded_at),
  ...(row.log_hash !== null ? { logHash: row.log_hash } : {}),
});
