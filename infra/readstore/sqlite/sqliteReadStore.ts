import Database from 'better-sqlite3';
import { AsyncLock } from '../../asyncLock.ts';
import { SAFETY_AUTOCHECKPOINT_PAGES, WalCheckpointer } from '../../sqliteCheckpointer.ts';
import { errorCode } from '../../typeGuards.ts';
import {
  ReadStoreBusyError,
  type Collection,
  type CollectionSpec,
  type Document,
  type ReadStore,
  type ReadStoreTransaction,
} from '../readStore.ts';
import { columnName, columnValueOf, quoteIdentifier } from './columns.ts';
import { SqliteCollection } from './sqliteCollection.ts';
import { parseStored } from './storedText.ts';
import { enterWalMode } from '../../sqliteWal.ts';

/** How SQLite plans a query (EXPLAIN QUERY PLAN): one line per step, e.g. `SEARCH t USING INDEX i (f=?)`. */
export type QueryPlan = Readonly<{ collection: string; sql: string; plan: readonly string[] }>;

/**
 * How long a write waits for another connection to let go of the file (a projection group's
 * thread in the middle of a batch, another process) before it gives up with ReadStoreBusyError.
 */
export const WRITE_WAIT_MS = 5000;

/** SQLite's own wait for the write lock, per attempt: short, so that its blocking sleeps never stall the event loop. */
const WRITER_BUSY_TIMEOUT_MS = 2;

export type TableSchema = Readonly<{
  name: string;
  quotedName: string;
  /** Field path → quoted column, for every indexed field. `_id` is the primary key `id`. */
  columns: ReadonlyMap<string, string>;
}>;

/**
 * The embedded read store: JSON documents in one SQLite file. Two connections: `writer` takes
 * every write, one transaction at a time behind an async lock; `reader` serves queries and, in WAL
 * mode, only ever sees committed data. Read models can always be rebuilt from the event store, so
 * commits use `synchronous=NORMAL` (a power cut may lose the newest batches, never consistency:
 * each projection's checkpoint rolls back together with its documents).
 */
export class SqliteReadStore implements ReadStore {
  readonly writer: Database.Database;
  readonly reader: Database.Database;
  private readonly lock = new AsyncLock();
  private readonly schemas = new Map<string, TableSchema>();
  private readonly statements = new WeakMap<Database.Database, Map<string, Database.Statement>>();
  private readonly rawStatements = new WeakMap<Database.Database, Map<string, Database.Statement>>();
  private readonly checkpointer: WalCheckpointer | undefined;
  private closed = false;
  /** Told the plan of every query before it runs (tests check that queries use an index). */
  readonly queryPlans: ((plan: QueryPlan) => void) | undefined;

  /**
   * `backgroundCheckpoints` (default false) moves WAL checkpoints to a worker thread (see
   * WalCheckpointer); the service turns it on, short-lived tools and tests need no extra thread.
   */
  private readonly writeWaitMs: number;

  /** `writeWaitMs`: how long a write waits for the file's write lock (default WRITE_WAIT_MS). */
  constructor(
    private readonly path: string,
    options: { backgroundCheckpoints?: boolean; queryPlans?: (plan: QueryPlan) => void; writeWaitMs?: number } = {},
  ) {
    this.writer = openConnection(path);
    this.writer.pragma(`busy_timeout = ${WRITER_BUSY_TIMEOUT_MS}`);
    this.reader = openConnection(path);
    this.writeWaitMs = options.writeWaitMs ?? WRITE_WAIT_MS;
    this.queryPlans = options.queryPlans;
    if (options.backgroundCheckpoints) {
      this.writer.pragma(`wal_autocheckpoint = ${SAFETY_AUTOCHECKPOINT_PAGES}`);
      this.checkpointer = new WalCheckpointer(path, { synchronous: 'NORMAL' });
    }
  }

  collection<T extends Document = Document>(spec: CollectionSpec): Collection<T> {
    return new SqliteCollection<T>(this, spec, 'committed');
  }

  async transaction<R>(work: (transaction: ReadStoreTransaction) => Promise<R>): Promise<R> {
    return this.lock.run(async () => {
      this.assertOpen();
      const created: string[] = [];
      await this.beginImmediate();
      try {
        const result = await work({
          collection: <T extends Document>(spec: CollectionSpec) =>
            new SqliteCollection<T>(this, spec, 'transaction', created),
        });
        this.writer.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.writer.inTransaction) this.writer.exec('ROLLBACK');
        // Tables created inside the rolled-back transaction no longer exist.
        for (const name of created) this.schemas.delete(name);
        throw error;
      }
    });
  }

  /** Runs synchronous writes as one committed transaction, after any transaction in progress. */
  write<R>(work: () => R): Promise<R> {
    return this.lock.run(() => {
      this.assertOpen();
      return this.immediate(work);
    });
  }

  /**
   * Takes the file's write lock. Another connection may hold it (a group's thread applying a
   * batch, back to back with the next): SQLite's own busy handler sleeps up to 100 ms between
   * tries, blocking the thread, and misses the few milliseconds between two such transactions,
   * so a writer could wait out its whole timeout behind a busy lane. Instead each try waits a
   * moment in SQLite and the next comes a millisecond later from the event loop, until
   * `writeWaitMs` have passed.
   */
  private async beginImmediate(): Promise<void> {
    const deadline = Date.now() + this.writeWaitMs;
    for (;;) {
      try {
        this.writer.exec('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!isBusy(error)) throw error;
        if (Date.now() >= deadline) throw new ReadStoreBusyError(this.path, this.writeWaitMs);
        await new Promise((resolve) => setTimeout(resolve, 1));
        this.assertOpen();
      }
    }
  }

  /** Runs synchronous work (writes, DDL) as one transaction of its own (the lock must be held). */
  private async immediate<R>(work: () => R): Promise<R> {
    await this.beginImmediate();
    try {
      const result = work();
      this.writer.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.writer.inTransaction) this.writer.exec('ROLLBACK');
      throw error;
    }
  }

  /** The table behind a collection; known tables are answered without touching SQLite. */
  knownSchema(spec: CollectionSpec): TableSchema | undefined {
    const known = this.schemas.get(spec.name);
    const complete =
      known &&
      spec.indexes.every((index) => index.fields.every((field) => field === '_id' || known.columns.has(field)));
    return complete ? known : undefined;
  }

  /**
   * Creates the table (with its columns and indexes) on first use. Outside a transaction the DDL
   * waits for the write lock, so it never slips into another caller's open transaction; inside one
   * it becomes part of it and is forgotten again if that transaction rolls back.
   */
  async ensureSchema(spec: CollectionSpec, createdInTransaction?: string[]): Promise<TableSchema> {
    const known = this.knownSchema(spec);
    if (known) return known;
    const create = () => {
      const schema = this.createTable(spec);
      this.schemas.set(spec.name, schema);
      return schema;
    };
    if (createdInTransaction) {
      createdInTransaction.push(spec.name);
      return create();
    }
    return this.lock.run(() => this.knownSchema(spec) ?? this.immediate(create));
  }

  statement(connection: Database.Database, sql: string): Database.Statement {
    let cache = this.statements.get(connection);
    if (!cache) {
      cache = new Map();
      this.statements.set(connection, cache);
    }
    let statement = cache.get(sql);
    if (!statement) {
      statement = connection.prepare(sql);
      cache.set(sql, statement);
    }
    return statement;
  }

  /** A cached statement that answers rows as arrays of the selected columns, in order. */
  rawStatement(connection: Database.Database, sql: string): Database.Statement {
    let cache = this.rawStatements.get(connection);
    if (!cache) {
      cache = new Map();
      this.rawStatements.set(connection, cache);
    }
    let statement = cache.get(sql);
    if (!statement) {
      statement = connection.prepare(sql).raw(true);
      cache.set(sql, statement);
    }
    return statement;
  }

  async listCollections(): Promise<string[]> {
    const rows = this.reader
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all();
    return rows.map((row) => row.name);
  }

  async dropCollection(name: string): Promise<void> {
    await this.lock.run(() =>
      this.immediate(() => {
        this.writer.exec(`DROP TABLE IF EXISTS ${quoteIdentifier(name)}`);
        this.schemas.delete(name);
      }),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.lock.run(async () => {
      this.closed = true;
      await this.checkpointer?.stop();
      this.reader.close();
      this.writer.close();
    });
  }

  assertOpen(): void {
    if (this.closed) throw new Error('The read store is closed');
  }

  /**
   * DDL runs on the writer. Called outside a transaction it is its own statement; inside one it
   * becomes part of it. Columns added to a table that already has rows are filled from the JSON.
   */
  private createTable(spec: CollectionSpec): TableSchema {
    const quotedName = quoteIdentifier(spec.name);
    this.writer.exec(`CREATE TABLE IF NOT EXISTS ${quotedName} (id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL)`);
    const existing = new Set(
      this.writer
        .prepare<[], { name: string }>(`PRAGMA table_info(${quotedName})`)
        .all()
        .map((c) => c.name),
    );
    const columns = new Map<string, string>();
    const added: string[] = [];
    for (const field of new Set(spec.indexes.flatMap((index) => index.fields))) {
      if (field === '_id') continue;
      const column = columnName(field);
      columns.set(field, quoteIdentifier(column));
      if (!existing.has(column)) {
        this.writer.exec(`ALTER TABLE ${quotedName} ADD COLUMN ${quoteIdentifier(column)}`);
        added.push(field);
      }
    }
    if (added.length > 0) this.backfill(spec.name, quotedName, added);
    const declared = new Set<string>();
    for (const index of spec.indexes) {
      // A sparse index has a name of its own: one declared plain before is dropped, not taken for it.
      const indexName = `${spec.name}__${index.fields.join('__')}${index.sparse ? '__sparse' : ''}`;
      declared.add(indexName);
      const indexColumns = index.fields.map((field) => (field === '_id' ? 'id' : columns.get(field)!)).join(', ');
      // SQLite uses such a partial index for any comparison of the column with a value, which implies IS NOT NULL.
      const only = index.sparse
        ? ` WHERE ${index.fields[0] === '_id' ? 'id' : columns.get(index.fields[0]!)!} IS NOT NULL`
        : '';
      this.writer.exec(
        `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${quoteIdentifier(indexName)} ON ${quotedName} (${indexColumns})${only}`,
      );
    }
    // An index the collection no longer declares would still cost every write: it goes.
    const existingIndexes = this.writer
      .prepare<[], { name: string; origin: string }>(`PRAGMA index_list(${quotedName})`)
      .all();
    for (const { name, origin } of existingIndexes) {
      if (origin === 'c' && name.startsWith(`${spec.name}__`) && !declared.has(name))
        this.writer.exec(`DROP INDEX IF EXISTS ${quoteIdentifier(name)}`);
    }
    return { name: spec.name, quotedName, columns };
  }

  private backfill(name: string, quotedName: string, fields: string[]): void {
    const rows = this.writer.prepare<[], { id: string; doc: string }>(`SELECT id, doc FROM ${quotedName}`).all();
    const update = this.writer.prepare(
      `UPDATE ${quotedName} SET ${fields.map((field) => `${quoteIdentifier(columnName(field))} = ?`).join(', ')} WHERE id = ?`,
    );
    for (const row of rows) {
      const document = parseStored(row.id, row.doc);
      update.run(...fields.map((field) => columnValueOf(name, document, field)), row.id);
    }
  }
}

const isBusy = (error: unknown): boolean => errorCode(error)?.startsWith('SQLITE_BUSY') ?? false;

const openConnection = (path: string): Database.Database => {
  const connection = new Database(path);
  // The wait first: switching a new file to WAL takes a lock another process starting on the
  // same file may hold for a moment, and without a busy timeout that fails at once.
  connection.pragma('busy_timeout = 5000');
  enterWalMode(connection);
  connection.pragma('synchronous = NORMAL');
  connection.pragma('mmap_size = 268435456');
  return connection;
};
