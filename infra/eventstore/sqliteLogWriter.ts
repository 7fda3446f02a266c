import type Database from 'better-sqlite3';
import { CHAIN_START, eventHash, withoutHash } from './eventHashes.ts';
import { LOG_CHAIN_START, logHash } from './logChain.ts';
import {
  EventIdConflictError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventMetadata,
  type ExpectedRevision,
  type StreamAppend,
} from './eventStore.ts';

/** One caller's appends in a group commit: its results, or why they were refused (rolled back alone). */
export type GroupOutcome = { results: AppendResult[] } | { error: unknown };

/**
 * The writing half of the SQLite event log: one connection in WAL mode with `synchronous=FULL`,
 * committing a group of callers' appends in one transaction and one fsync. Each caller's appends
 * keep their own savepoint, so one that fails (a stale expected revision) rolls back alone and
 * the others still commit. It runs in the thread of the store (sqliteEventStore.ts), or on a
 * thread of its own (sqliteWriterThread.ts) so that the fsync does not stop the process's event
 * loop.
 */
export class SqliteLogWriter {
  private readonly db: Database.Database;
  /** The log hash the next event appended in the open transaction chains to. */
  private logHead = LOG_CHAIN_START;
  private readonly statements: {
    findById: Database.Statement<[string], { stream: string; revision: number; position: number }>;
    streamHead: Database.Statement<[string], { revision: number; hash: string | null }>;
    logHead: Database.Statement<[], { log_hash: string | null }>;
    insert: Database.Statement<[string, string, number, string, string, string, string, string, string]>;
  };

  /** `db`: the connection to write with, its pragmas set (the store opens it, after the schema). */
  constructor(db: Database.Database) {
    this.db = db;
    this.statements = {
      findById: this.db.prepare('SELECT stream, revision, position FROM events WHERE event_id = ?'),
      // The stream's last event: its revision, and the hash the next event chains to.
      streamHead: this.db.prepare('SELECT revision, hash FROM events WHERE stream = ? ORDER BY revision DESC LIMIT 1'),
      // The log's last event: the log hash the next event chains to (NULL before the log chain).
      logHead: this.db.prepare('SELECT log_hash FROM events ORDER BY position DESC LIMIT 1'),
      insert: this.db.prepare(
        'INSERT INTO events (event_id, stream, revision, type, data, metadata, recorded_at, hash, log_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
    };
  }

  /**
   * Commits every caller's appends in one transaction, durable when this returns. Throws when the
   * transaction itself fails (then nothing of the group is written).
   */
  commitGroup(group: readonly (readonly StreamAppend[])[]): GroupOutcome[] {
    return this.db
      .transaction(() => {
        // Read once the write lock is held: other processes append to the same file.
        this.logHead = this.statements.logHead.get()?.log_hash ?? LOG_CHAIN_START;
        return group.map((appends): GroupOutcome => {
          const logHeadBefore = this.logHead;
          try {
            // A nested transaction is a savepoint: a failure here undoes only this caller's appends.
            return { results: this.db.transaction(() => appends.map((append) => this.appendInTransaction(append)))() };
          } catch (error) {
            this.logHead = logHeadBefore;
            return { error };
          }
        });
      })
      .immediate();
  }

  close(): void {
    this.db.close();
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
   * once, not once per event (a bulk registration appends thousands of events with it). Sent to
   * the writer's thread, they still share it: a structured clone keeps shared references.
   */
  private lastMetadata: { source: EventMetadata; json: string } | undefined;

  private metadataJson(metadata: EventMetadata): string {
    if (this.lastMetadata?.source !== metadata)
      this.lastMetadata = { source: metadata, json: JSON.stringify(metadata) };
    return this.lastMetadata.json;
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
