import type Database from 'better-sqlite3';
import { errorCode, errorMessage } from '../../typeGuards.ts';
import { applyUpdate, asDocument, compareBySort, compileFilter, selectedOf, upsertSeed } from '../documents.ts';
import {
  DuplicateKeyError,
  type BulkOperation,
  type Collection,
  type CollectionSpec,
  type Cursor,
  type Document,
  type Filter,
  type FindOptions,
  type Selected,
  type Update,
  type UpdateResult,
} from '../readStore.ts';
import { decodeColumn, encodeScalar, IndexedFieldTypeError, type ColumnValue } from './columns.ts';
import { isObject } from '../../typeGuards.ts';
import { filterToSql, type SqlFilter } from './filterToSql.ts';
import { numberColumn, rawIndexed, rawText, textColumn } from './rows.ts';
import { parseStored, storedText } from './storedText.ts';
import type { SqliteReadStore, TableSchema } from './sqliteReadStore.ts';

/** Rows fetched per query while streaming; each page is a separate statement, so no cursor stays open. */
const PAGE_SIZE = 500;

/**
 * One collection of the embedded read store. In 'committed' mode reads use the reader connection
 * and each write is its own transaction; in 'transaction' mode everything runs on the writer
 * inside the caller's open transaction.
 */
export class SqliteCollection<T extends Document> implements Collection<T> {
  readonly name: string;

  constructor(
    private readonly store: SqliteReadStore,
    private readonly spec: CollectionSpec,
    private readonly mode: 'committed' | 'transaction',
    private readonly createdInTransaction?: string[],
  ) {
    this.name = spec.name;
  }

  async get(id: string): Promise<T | null> {
    const schema = await this.schema();
    const row = this.store
      .rawStatement(this.readConnection(), `SELECT doc FROM ${schema.quotedName} WHERE id = ?`)
      .get(id);
    return row ? asDocument<T>(parseStored(id, rawText(row, 0))) : null;
  }

  async findOne(filter: Filter, options: FindOptions = {}): Promise<T | null> {
    const schema = await this.schema();
    for (const document of this.scan(this.readConnection(), schema, filter, { ...options, limit: 1 })) return document;
    return null;
  }

  find(filter: Filter, options: FindOptions = {}): Cursor<T> {
    return {
      [Symbol.asyncIterator]: () => this.matching(filter, options),
      // All at once from the synchronous scan: no asynchronous step per document.
      toArray: async () => {
        const schema = await this.schema();
        const documents: T[] = [];
        for (const page of this.pages(this.readConnection(), schema, filter, options)) documents.push(...page);
        return documents;
      },
    };
  }

  private async *matching(filter: Filter, options: FindOptions): AsyncGenerator<T> {
    const schema = await this.schema();
    yield* this.scan(this.readConnection(), schema, filter, options);
  }

  async count(filter: Filter = {}): Promise<number> {
    const schema = await this.schema();
    const sql = filterToSql(filter, columnLookup(schema));
    if (sql.exact) {
      const text = `SELECT count(*) AS n FROM ${schema.quotedName} WHERE ${sql.where}`;
      this.tellPlan(this.readConnection(), text, sql.params);
      const row = this.store.statement(this.readConnection(), text).get(...sql.params);
      return numberColumn(row, 'n');
    }
    let count = 0;
    for (const _ of this.scan(this.readConnection(), schema, filter, {})) count += 1;
    return count;
  }

  async insertOne(document: T): Promise<void> {
    await this.bulkWrite([{ insertOne: { document } }]);
  }

  async replaceOne(filter: Filter, replacement: T, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    return this.writeSync((schema) => this.replaceOneSync(schema, filter, replacement, options.upsert ?? false));
  }

  async updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    return this.writeSync((schema) => this.updateOneSync(schema, filter, update, options.upsert ?? false));
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    return this.writeSync((schema) => this.updateManySync(schema, filter, update));
  }

  async deleteOne(filter: Filter): Promise<number> {
    return this.writeSync((schema) => this.deleteSync(schema, filter, 1));
  }

  async deleteMany(filter: Filter): Promise<number> {
    return this.writeSync((schema) => this.deleteSync(schema, filter, undefined));
  }

  async bulkWrite(operations: readonly BulkOperation<T>[]): Promise<void> {
    if (operations.length === 0) return;
    await this.writeSync((schema) => {
      if (operations.length === 1) return this.applyOperations(schema, operations);
      // A failing statement undoes only itself: the savepoint makes the whole bulk write atomic,
      // inside the caller's transaction too.
      const writer = this.store.writer;
      writer.exec('SAVEPOINT bulk_write');
      try {
        this.applyOperations(schema, operations);
        writer.exec('RELEASE bulk_write');
      } catch (error) {
        writer.exec('ROLLBACK TO bulk_write');
        writer.exec('RELEASE bulk_write');
        throw error;
      }
    });
  }

  /**
   * Runs of writes by `_id` (how projections write a batch back: documents replaced whole,
   * created where absent, deleted) go out as multi-row statements; anything else one by one, in
   * order.
   */
  private applyOperations(schema: TableSchema, operations: readonly BulkOperation<T>[]): void {
    const rows = new RowRuns(this.store, schema, this.name);
    for (const operation of operations) {
      if ('insertOne' in operation) rows.put('insert', operation.insertOne.document);
      else if ('replaceOne' in operation) {
        const { filter, replacement, upsert } = operation.replaceOne;
        const id = onlyId(filter);
        if (id !== undefined && upsert) rows.put('upsert', { ...replacement, _id: id });
        else {
          rows.flush();
          this.replaceOneSync(schema, filter, replacement, upsert ?? false);
        }
      } else if ('updateOne' in operation) {
        const { filter, update, upsert } = operation.updateOne;
        // Insert-if-absent by `_id` (only $setOnInsert, upserting), as projections create documents: no probe.
        const id = onlyId(filter);
        const onlyOnInsert = Object.keys(update).length === 1 && update.$setOnInsert !== undefined;
        if (id !== undefined && upsert && onlyOnInsert)
          rows.put('insertIfAbsent', asDocument<T>({ ...update.$setOnInsert, _id: id }));
        else {
          rows.flush();
          this.updateOneSync(schema, filter, update, upsert ?? false);
        }
      } else if ('deleteOne' in operation) {
        const id = onlyId(operation.deleteOne.filter);
        if (id !== undefined) rows.delete(id);
        else {
          rows.flush();
          this.deleteSync(schema, operation.deleteOne.filter, 1);
        }
      } else {
        rows.flush();
        if ('updateMany' in operation)
          this.updateManySync(schema, operation.updateMany.filter, operation.updateMany.update);
        else this.deleteSync(schema, operation.deleteMany.filter, undefined);
      }
    }
    rows.flush();
  }

  private tellPlan(connection: Database.Database, text: string, parameters: readonly ColumnValue[]): void {
    if (!this.store.queryPlans) return;
    const plan = connection
      .prepare(`EXPLAIN QUERY PLAN ${text}`)
      .all(...parameters)
      .map((row) => textColumn(row, 'detail'));
    this.store.queryPlans({ collection: this.name, sql: text, plan });
  }

  private schema(): Promise<TableSchema> {
    this.store.assertOpen();
    return this.store.ensureSchema(
      this.spec,
      this.mode === 'transaction' ? (this.createdInTransaction ?? []) : undefined,
    );
  }

  private readConnection(): Database.Database {
    return this.mode === 'transaction' ? this.store.writer : this.store.reader;
  }

  private async writeSync<R>(work: (schema: TableSchema) => R): Promise<R> {
    const schema = await this.schema();
    if (this.mode === 'transaction') return work(schema);
    return this.store.write(() => work(schema));
  }

  /** Matching documents in sort order, one at a time (see `pages`). */
  private *scan(
    connection: Database.Database,
    schema: TableSchema,
    filter: Filter,
    options: FindOptions,
  ): Generator<T> {
    for (const page of this.pages(connection, schema, filter, options)) yield* page;
  }

  /**
   * Yields matching documents in sort order, a page at a time. When the filter and sort are
   * expressible in SQL the rows stream page by page (`keysetPages`). A sort on a field without a
   * column sorts in memory.
   */
  private *pages(
    connection: Database.Database,
    schema: TableSchema,
    filter: Filter,
    options: FindOptions,
  ): Generator<T[]> {
    const sql = filterToSql(filter, columnLookup(schema));
    const order = sqlOrder(schema, options);
    if (!order) {
      const candidates: T[] = [];
      for (const page of this.pages(connection, schema, filter, {}))
        for (const document of page) candidates.push(document);
      candidates.sort(compareBySort(options.sort ?? {}));
      const skip = options.skip ?? 0;
      yield candidates.slice(skip, options.limit && options.limit > 0 ? skip + options.limit : undefined);
      return;
    }
    const matches = sql.exact ? undefined : compileFilter(filter);
    yield* this.keysetPages(connection, schema, sql, order, options, ['id', 'doc'], (row) => {
      const document = asDocument<T>(parseStored(rawText(row, 0), rawText(row, 1)));
      return matches && !matches(document) ? undefined : document;
    });
  }

  async select<K extends keyof T & string>(
    filter: Filter,
    fields: readonly K[],
    options: FindOptions = {},
  ): Promise<Selected<T, K>[]> {
    const schema = await this.schema();
    const connection = this.readConnection();
    const sql = filterToSql(filter, columnLookup(schema));
    const order = sqlOrder(schema, options);
    const columns = fields.map(columnLookup(schema));
    const selected: Selected<T, K>[] = [];
    if (!sql.exact || !order || columns.some((column) => column === undefined)) {
      for (const page of this.pages(connection, schema, filter, options))
        for (const document of page) selected.push(selectedOf(document, fields));
      return selected;
    }
    // Every field has a column: the documents themselves are never read.
    const pages = this.keysetPages(
      connection,
      schema,
      sql,
      order,
      options,
      ['id', ...columns.map((c) => c!)],
      (row) => {
        const record: Record<string, unknown> = { _id: rawText(row, 0) };
        fields.forEach((field, index) => (record[field] = decodeColumn(rawIndexed(row, index + 1))));
        // The record holds the fields asked for, each decoded from its column as the document held it.
        // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- columns hold the document's values (columns.ts)
        return record as Selected<T, K>;
      },
    );
    for (const page of pages) selected.push(...page);
    return selected;
  }

  /**
   * Rows in `order`, page by page, each page one statement continuing after the last row of the
   * previous one (keyset pagination), so no statement stays open. Rows come back as arrays (the
   * `leading` columns, then the order's) and `read` turns each into an item, or undefined when
   * it does not count (a document mingo refuses).
   */
  private *keysetPages<R>(
    connection: Database.Database,
    schema: TableSchema,
    sql: SqlFilter,
    order: readonly SortColumn[],
    options: FindOptions,
    leading: readonly string[],
    read: (row: unknown) => R | undefined,
  ): Generator<R[]> {
    let skip = options.skip ?? 0;
    let remaining = options.limit && options.limit > 0 ? options.limit : Number.POSITIVE_INFINITY;
    const selectColumns = [...leading, ...order.map((sort) => sort.column)].join(', ');
    const orderBy = order.map((sort) => `${sort.column} ${sort.direction === 1 ? 'ASC' : 'DESC'}`).join(', ');
    let after: ColumnValue[] | undefined;
    // With an exact filter the first page can skip in SQL; otherwise `read` decides what counts.
    let sqlOffset = sql.exact ? skip : 0;
    if (sql.exact) skip = 0;
    for (;;) {
      const keyset = after ? keysetCondition(order, after) : { where: '1', params: [] as ColumnValue[] };
      const pageSize = sql.exact ? Math.min(PAGE_SIZE, remaining) : PAGE_SIZE;
      const text =
        `SELECT ${selectColumns} FROM ${schema.quotedName} WHERE (${sql.where}) AND (${keyset.where}) ` +
        `ORDER BY ${orderBy} LIMIT ? OFFSET ?`;
      const parameters = [...sql.params, ...keyset.params, pageSize, sqlOffset];
      this.tellPlan(connection, text, parameters);
      const rows = this.store.rawStatement(connection, text).all(...parameters);
      sqlOffset = 0;
      const page: R[] = [];
      for (const row of rows) {
        const item = read(row);
        if (item === undefined) continue;
        if (skip > 0) {
          skip -= 1;
          continue;
        }
        page.push(item);
        remaining -= 1;
        if (remaining <= 0) break;
      }
      if (page.length > 0) yield page;
      if (remaining <= 0 || rows.length < pageSize) return;
      const last = rows[rows.length - 1];
      after = order.map((_, index) => rawIndexed(last, leading.length + index));
    }
  }

  private putSync(schema: TableSchema, document: T, mode: PutMode): void {
    const rows = new RowRuns(this.store, schema, this.name);
    rows.put(mode, document);
    rows.flush();
  }

  private firstMatch(schema: TableSchema, filter: Filter): T | undefined {
    for (const document of this.scan(this.store.writer, schema, filter, { limit: 1 })) return document;
    return undefined;
  }

  private replaceOneSync(schema: TableSchema, filter: Filter, replacement: T, upsert: boolean): UpdateResult {
    // Projections replace documents by `_id` alone: a primary-key probe, not a planned and parsed scan.
    const id = onlyId(filter);
    const currentId = id !== undefined ? this.existingId(schema, id) : this.firstMatch(schema, filter)?._id;
    if (currentId !== undefined) {
      this.putSync(schema, { ...replacement, _id: currentId }, 'upsert');
      return { matchedCount: 1, modifiedCount: 1 };
    }
    if (!upsert) return { matchedCount: 0, modifiedCount: 0 };
    const document = { ...replacement, _id: replacement._id ?? upsertSeed(filter)._id };
    this.putSync(schema, document, 'insert');
    return { matchedCount: 0, modifiedCount: 0, upsertedId: document._id };
  }

  private existingId(schema: TableSchema, id: string): string | undefined {
    const row = this.store.statement(this.store.writer, `SELECT id FROM ${schema.quotedName} WHERE id = ?`).get(id);
    return row === undefined ? undefined : textColumn(row, 'id');
  }

  private updateOneSync(schema: TableSchema, filter: Filter, update: Update, upsert: boolean): UpdateResult {
    const current = this.firstMatch(schema, filter);
    if (current) {
      this.putSync(schema, applyUpdate(current, update, false), 'upsert');
      return { matchedCount: 1, modifiedCount: 1 };
    }
    if (!upsert) return { matchedCount: 0, modifiedCount: 0 };
    const document = applyUpdate(asDocument<T>(upsertSeed(filter)), update, true);
    this.putSync(schema, document, 'insert');
    return { matchedCount: 0, modifiedCount: 0, upsertedId: document._id };
  }

  private updateManySync(schema: TableSchema, filter: Filter, update: Update): UpdateResult {
    const matches = [...this.scan(this.store.writer, schema, filter, {})];
    for (const document of matches) this.putSync(schema, applyUpdate(document, update, false), 'upsert');
    return { matchedCount: matches.length, modifiedCount: matches.length };
  }

  private deleteSync(schema: TableSchema, filter: Filter, limit: number | undefined): number {
    const ids = [...this.scan(this.store.writer, schema, filter, limit ? { limit } : {})].map(
      (document) => document._id,
    );
    const remove = this.store.statement(this.store.writer, `DELETE FROM ${schema.quotedName} WHERE id = ?`);
    for (const id of ids) remove.run(id);
    return ids.length;
  }
}

type PutMode = 'insert' | 'upsert' | 'insertIfAbsent';

/** Rows per multi-row statement, largest first: a run of n rows takes few statements of these sizes. */
const ROWS_PER_STATEMENT = [64, 16, 4, 1] as const;

/**
 * The statements that write a table's rows, built once per schema and row count: every projected
 * document goes through them, so their text is not rebuilt per write.
 */
type PutStatements = {
  /** The indexed fields, each as its path's parts, in column order. */
  fields: readonly (readonly string[])[];
  sql(mode: PutMode | 'delete', rows: number): string;
};

const putStatements = new WeakMap<TableSchema, PutStatements>();

const putStatementsOf = (schema: TableSchema): PutStatements => {
  let statements = putStatements.get(schema);
  if (!statements) {
    const paths = [...schema.columns.keys()];
    const columnList = ['id', 'doc', ...paths.map((path) => schema.columns.get(path)!)];
    const row = `(${columnList.map(() => '?').join(', ')})`;
    const conflict: Record<PutMode, string> = {
      insert: '',
      upsert: ` ON CONFLICT(id) DO UPDATE SET ${columnList
        .slice(1)
        .map((column) => `${column} = excluded.${column}`)
        .join(', ')}`,
      insertIfAbsent: ' ON CONFLICT(id) DO NOTHING',
    };
    const texts = new Map<string, string>();
    statements = {
      fields: paths.map((path) => path.split('.')),
      sql: (mode, rows) => {
        const key = `${mode} ${rows}`;
        let text = texts.get(key);
        if (text === undefined) {
          text =
            mode === 'delete'
              ? `DELETE FROM ${schema.quotedName} WHERE id IN (${Array.from({ length: rows }, () => '?').join(', ')})`
              : `INSERT INTO ${schema.quotedName} (${columnList.join(', ')}) VALUES ${Array.from({ length: rows }, () => row).join(', ')}${conflict[mode]}`;
          texts.set(key, text);
        }
        return text;
      },
    };
    putStatements.set(schema, statements);
  }
  return statements;
};

/** The value of an indexed field as its column holds it (see columns.ts). */
const fieldColumn = (collection: string, document: unknown, parts: readonly string[]): ColumnValue => {
  let value: unknown = document;
  for (const part of parts) {
    if (!isObject(value)) {
      value = undefined;
      break;
    }
    value = value[part];
  }
  const encoded = encodeScalar(value);
  if (encoded === undefined) throw new IndexedFieldTypeError(collection, parts.join('.'));
  return encoded;
};

/**
 * Consecutive writes of one kind by `_id`, sent as multi-row statements when the kind changes or
 * the run is flushed: a statement per row costs more in binding and stepping than the row itself.
 */
class RowRuns {
  private mode: PutMode | 'delete' | undefined;
  private readonly parameters: ColumnValue[] = [];
  private rows = 0;
  private readonly statements: PutStatements;

  constructor(
    private readonly store: SqliteReadStore,
    private readonly schema: TableSchema,
    private readonly name: string,
  ) {
    this.statements = putStatementsOf(schema);
  }

  put(mode: PutMode, document: Document): void {
    if (typeof document._id !== 'string') throw new Error(`Documents of ${this.name} need a string _id`);
    if (this.mode !== mode) this.flush();
    this.mode = mode;
    this.parameters.push(document._id, storedText(document));
    for (const parts of this.statements.fields) this.parameters.push(fieldColumn(this.name, document, parts));
    this.rows += 1;
    if (this.rows >= MAX_RUN) this.flush();
  }

  delete(id: string): void {
    if (this.mode !== 'delete') this.flush();
    this.mode = 'delete';
    this.parameters.push(id);
    this.rows += 1;
    if (this.rows >= MAX_RUN) this.flush();
  }

  flush(): void {
    const mode = this.mode;
    if (mode === undefined || this.rows === 0) return;
    const width = this.parameters.length / this.rows;
    let offset = 0;
    let left = this.rows;
    try {
      for (const size of ROWS_PER_STATEMENT) {
        if (left < size) continue;
        const statement = this.store.statement(this.store.writer, this.statements.sql(mode, size));
        while (left >= size) {
          statement.run(this.parameters.slice(offset, offset + size * width));
          offset += size * width;
          left -= size;
        }
      }
    } catch (error) {
      const code = errorCode(error);
      if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE') {
        const more = this.rows > 1 ? ` (or one of the ${this.rows - 1} written with it)` : '';
        throw new DuplicateKeyError(this.name, `${String(this.parameters[0])}${more}: ${errorMessage(error)}`);
      }
      throw error;
    } finally {
      this.parameters.length = 0;
      this.rows = 0;
      this.mode = undefined;
    }
  }
}

/** Rows gathered before a run is written, so a huge bulk write never holds all its parameters. */
const MAX_RUN = 1024;

type SortColumn = { column: string; direction: 1 | -1 };

/** The sort as columns, `id` last to break ties; undefined when a sorted field has no column. */
const sqlOrder = (schema: TableSchema, options: FindOptions): SortColumn[] | undefined => {
  const columns = columnLookup(schema);
  const order: SortColumn[] = [];
  for (const [field, direction] of Object.entries(options.sort ?? {})) {
    const column = columns(field);
    if (column === undefined) return undefined;
    order.push({ column, direction });
  }
  if (!order.some((sort) => sort.column === 'id')) order.push({ column: 'id', direction: 1 });
  return order;
};

/** The id of a filter that is exactly `{ _id: <string> }`. */
const onlyId = (filter: Filter): string | undefined => {
  const keys = Object.keys(filter);
  return keys.length === 1 && keys[0] === '_id' && typeof filter._id === 'string' ? filter._id : undefined;
};

const columnLookup =
  (schema: TableSchema) =>
  (path: string): string | undefined =>
    path === '_id' ? 'id' : schema.columns.get(path);

/**
 * Rows strictly after `after` in the order `(c1 d1, ..., cn dn)`: a lexicographic OR of
 * "equal on the first i-1 keys, after on key i". SQLite sorts NULL first ascending and last
 * descending, and `IS` compares NULL-safely.
 */
const keysetCondition = (
  order: readonly SortColumn[],
  after: ColumnValue[],
): { where: string; params: ColumnValue[] } => {
  const branches: string[] = [];
  const params: ColumnValue[] = [];
  order.forEach((sort, index) => {
    const parts: string[] = [];
    for (let previous = 0; previous < index; previous += 1) {
      parts.push(`${order[previous]!.column} IS ?`);
      params.push(after[previous]!);
    }
    const value = after[index]!;
    if (sort.direction === 1) {
      if (value === null) parts.push(`${sort.column} IS NOT NULL`);
      else {
        parts.push(`${sort.column} > ?`);
        params.push(value);
      }
    } else if (value === null) {
      parts.push('0');
    } else {
      parts.push(`(${sort.column} < ? OR ${sort.column} IS NULL)`);
      params.push(value);
    }
    branches.push(`(${parts.join(' AND ')})`);
  });
  return { where: branches.join(' OR '), params };
};
