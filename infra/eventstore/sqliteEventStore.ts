import Database from 'better-sqlite3';
import { BroadcastChannel } from 'node:worker_threads';
import { resolve } from 'node:path';
import type { PositionSignal } from '../positionSignal.ts';
import { SqliteLogWriter, type GroupOutcome } from './sqliteLogWriter.ts';
import { SqliteWriterThread } from './sqliteWriterThread.ts';
import { SAFETY_AUTOCHECKPOINT_PAGES, WalCheckpointer } from '../sqliteCheckpointer.ts';
import {
  isEventMetadata,
  type AllSubscription,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeToAllOptions,
  type SubscriptionBatch,
} from './eventStore.ts';
import { errorMessage } from '../typeGuards.ts';
import { enterWalMode } from '../sqliteWal.ts';

export type CommitStats = { commits: number; appends: number; seconds: number };

/**
 * Groups of at most this many events go to the writer's thread (`writerThread`); larger ones
 * (a registration, a rule's locks) are committed on the calling thread: copying thousands of
 * events to the thread cost more CPU (+20 % per event measured in 1000-stream appends) than the
 * fsync it spares the event loop, on a machine whose other core is busy projecting.
 */
const THREAD_GROUP_EVENTS = 64;

const eventsIn = (pending: readonly { appends: readonly StreamAppend[] }[]): number => {
  let count = 0;
  for (const { appends } of pending) for (const append of appends) count += append.events.length;
  return count;
};

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
  /**
   * Commit on a thread of its own (sqliteWriterThread.ts), so that the fsync of a group commit
   * does not stop this thread's event loop; default false. The service turns it on where it
   * writes the log; tools and tests commit in their own thread.
   */
  writerThread?: boolean;
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
  /** Commits here: every group without `writerThread`, the large ones with it. */
  private readonly writer: SqliteLogWriter;
  /** With `writerThread`: commits the small groups off this thread. */
  private readonly thread: SqliteWriterThread | undefined;
  /** Groups sent to the writer's thread and not yet answered. */
  private readonly inFlight = new Set<Promise<void>>();
  /** The writer thread's transaction that answered last (the groups it held count as one commit). */
  private lastTransaction: number | undefined;
  private readonly commits: CommitStats = { commits: 0, appends: 0, seconds: 0 };

  private readonly statements: {
    streamHead: Database.Statement<[string], { revision: number; hash: string | null }>;
    readStream: Database.Statement<[string, number], EventRow>;
    readStreamLimited: Database.Statement<[string, number, number], EventRow>;
    readAll: Database.Statement<[number, number], EventRow>;
    readTypes: Database.Statement<[number, number, string, number], EventRow>;
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
    // The wait first: processes starting together on a new log all switch it to WAL.
    this.db.pragma('busy_timeout = 5000');
    enterWalMode(this.db);
    // FULL: the WAL is synced at every commit, so an acknowledged append survives a power cut.
    this.db.pragma('synchronous = FULL');
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
    this.writer = new SqliteLogWriter(this.db);
    this.thread = options.writerThread
      ? new SqliteWriterThread(
          path,
          options.backgroundCheckpoints ? { autocheckpointPages: SAFETY_AUTOCHECKPOINT_PAGES } : {},
        )
      : undefined;
    this.statements = {
      // The stream's last event: its revision (the writer reads it again inside its transaction).
      streamHead: this.db.prepare('SELECT revision, hash FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1'),
      // Without a LIMIT parameter SQLite answers a stream that does not exist three times faster;
      // commands read every stream they decide on, most often a new one (a file being registered).
      readStream: this.db.prepare('SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision'),
      readStreamLimited: this.db.prepare(
        'SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?',
      ),
      readAll: this.db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?'),
      // Up to a head read just before, so that a batch shorter than asked tells the scan reached it.
      readTypes: this.db.prepare(
        'SELECT * FROM events WHERE position > ? AND position <= ? AND type IN (SELECT value FROM json_each(?)) ORDER BY position LIMIT ?',
      ),
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
   * Group commit: appends that arrive in the same turn of the event loop (with `writerThread`:
   * also those that reach the thread while it commits) are written in one transaction with one
   * fsync. Each keeps its own savepoint, so one that fails (a stale expected revision) rolls back
   * alone and the others still commit; each caller hears its own outcome only after the shared
   * commit is on disk (sqliteLogWriter.ts).
   */
  appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    this.assertOpen();
    return new Promise((resolve, reject) => {
      this.pending.push({ appends, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.commitPending());
    });
  }

  private commitPending(): void {
    if (this.pending.length === 0) return;
    const thread = this.thread;
    const small = thread !== undefined && eventsIn(this.pending) <= THREAD_GROUP_EVENTS;
    // A large group is written here, once the thread has nothing in flight (one writer at a time).
    if (thread && !small && this.inFlight.size > 0) return;
    const group = this.pending.splice(0);
    const appends = group.map((item) => item.appends);
    if (!thread || !small) {
      const started = process.hrtime.bigint();
      let outcomes: GroupOutcome[];
      try {
        this.assertOpen();
        outcomes = this.writer.commitGroup(appends);
      } catch (error) {
        for (const item of group) item.reject(error);
        return;
      }
      this.committed(group, outcomes, {
        transaction: undefined,
        seconds: Number(process.hrtime.bigint() - started) / 1e9,
      });
      return;
    }
    const sent = thread.commit(appends).then(
      ({ outcomes, transaction, seconds }) => this.committed(group, outcomes, { transaction, seconds }),
      (error: unknown) => {
        for (const item of group) item.reject(error);
      },
    );
    this.inFlight.add(sent);
    void sent.finally(() => {
      this.inFlight.delete(sent);
      // A large group waits for the thread's commits to end.
      if (this.inFlight.size === 0) this.commitPending();
    });
  }

  /** Answers the callers of a group on disk, then wakes whoever follows the log. */
  private committed(
    group: typeof this.pending,
    outcomes: readonly GroupOutcome[],
    commit: { transaction: number | undefined; seconds: number },
  ): void {
    // Groups the writer's thread committed together count once.
    if (commit.transaction === undefined || commit.transaction !== this.lastTransaction) {
      this.commits.commits += 1;
      this.commits.seconds += commit.seconds;
      this.lastTransaction = commit.transaction;
    }
    this.commits.appends += group.length;
    group.forEach((item, index) => {
      const outcome = outcomes[index] ?? { error: new Error('The event log answered no outcome for an append') };
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
    const types = options.eventTypes ? JSON.stringify([...options.eventTypes]) : undefined;
    return {
      [Symbol.asyncIterator]: () => this.batchesOf(subscription, batchSize, types),
      close: async () => {
        subscription.closed = true;
        subscription.wake?.();
      },
    };
  }

  private async *batchesOf(
    subscription: SubscriptionState,
    batchSize: number,
    types: string | undefined,
  ): AsyncGenerator<SubscriptionBatch> {
    while (!subscription.closed && !this.closed) {
      const batch =
        types === undefined
          ? this.nextBatch(subscription.after, batchSize)
          : this.nextOfTypes(subscription.after, batchSize, types);
      if (batch.through > subscription.after) {
        subscription.after = batch.through;
        yield batch;
        continue;
      }
      await this.waitForAppend(subscription);
    }
  }

  private nextBatch(after: bigint, batchSize: number): SubscriptionBatch {
    this.assertOpen();
    const events = this.statements.readAll.all(Number(after), batchSize).map(toRecordedEvent);
    return { events, through: events.length > 0 ? events[events.length - 1]!.position : after };
  }

  /** The next events of `types` (a JSON array), and how far the scan went: to the head it read first, or to the last event of a full batch. */
  private nextOfTypes(after: bigint, batchSize: number, types: string): SubscriptionBatch {
    this.assertOpen();
    const head = this.statements.head.get()?.position ?? 0;
    if (head <= Number(after)) return { events: [], through: after };
    const events = this.statements.readTypes.all(Number(after), head, types, batchSize).map(toRecordedEvent);
    return { events, through: events.length === batchSize ? events[events.length - 1]!.position : BigInt(head) };
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
    // Every append accepted before close is committed and answered first.
    do {
      this.commitPending();
      await Promise.all(this.inFlight);
    } while (this.pending.length > 0 && this.thread !== undefined);
    await this.thread?.stop();
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
