/**
 * The read-store port: a small MongoDB-shaped document API. Read models live in collections of
 * JSON documents keyed by a string `_id`. The MongoDB adapter hands everything to the official
 * driver; the SQLite adapter stores documents as JSON and turns declared index fields into
 * indexed columns (infra/readstore/sqlite). One contract suite (test/infra/readStore.contract.ts)
 * runs against both.
 */

export type Document = { _id: string; [field: string]: unknown };

/** A MongoDB query filter: `$eq $ne $in $nin $gt $gte $lt $lte $regex $exists $or $and`, dotted paths. */
export type Filter = Readonly<Record<string, unknown>>;

export type SortSpec = Readonly<Record<string, 1 | -1>>;

/** MongoDB update operators: `$set $unset $inc $push $pull $addToSet`, plus `$setOnInsert` for upserts. */
export type Update = Readonly<{
  $set?: Record<string, unknown>;
  $unset?: Record<string, unknown>;
  $inc?: Record<string, number>;
  $push?: Record<string, unknown>;
  $pull?: Record<string, unknown>;
  $addToSet?: Record<string, unknown>;
  $setOnInsert?: Record<string, unknown>;
}>;

export type FindOptions = Readonly<{
  sort?: SortSpec;
  skip?: number;
  limit?: number;
}>;

export type IndexSpec = Readonly<{
  /** Field paths in index order. Indexed fields hold scalars (string, number, boolean, null). */
  fields: readonly string[];
  unique?: boolean;
  /**
   * Only documents whose first field holds a value are in the index (SQLite: that column IS NOT
   * NULL; MongoDB: the field exists), so documents without it cost no entry. For a field most
   * documents leave out (a file's GUID, an expiry) that only queries comparing it with a value
   * look up: they still use the index; a query for its absence reads the table.
   */
  sparse?: boolean;
}>;

export type CollectionSpec = Readonly<{
  /** Physical collection name; projections add their generation suffix (projections/naming.ts). */
  name: string;
  indexes: readonly IndexSpec[];
}>;

export type UpdateResult = Readonly<{ matchedCount: number; modifiedCount: number; upsertedId?: string }>;

export type BulkOperation<T extends Document = Document> =
  | Readonly<{ insertOne: { document: T } }>
  | Readonly<{ replaceOne: { filter: Filter; replacement: T; upsert?: boolean } }>
  | Readonly<{ updateOne: { filter: Filter; update: Update; upsert?: boolean } }>
  | Readonly<{ updateMany: { filter: Filter; update: Update } }>
  | Readonly<{ deleteOne: { filter: Filter } }>
  | Readonly<{ deleteMany: { filter: Filter } }>;

/** Some top-level fields of a document and its `_id`; a field the document lacks is null. */
export type Selected<T extends Document, K extends keyof T & string> = { _id: string } & { [P in K]: T[P] | null };

/** Streams matching documents in pages; memory stays flat however many match. */
export interface Cursor<T> extends AsyncIterable<T> {
  toArray(): Promise<T[]>;
}

export interface Collection<T extends Document = Document> {
  readonly name: string;
  get(id: string): Promise<T | null>;
  findOne(filter: Filter, options?: FindOptions): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Cursor<T>;
  /**
   * Some fields of the matching documents (a page of them: use a limit), in `find`'s order. The
   * SQLite adapter answers from its index columns, without reading the documents, when every
   * field is indexed: what a listing reads for each of many rows.
   */
  select<K extends keyof T & string>(
    filter: Filter,
    fields: readonly K[],
    options?: FindOptions,
  ): Promise<Selected<T, K>[]>;
  count(filter?: Filter): Promise<number>;
  /** Throws DuplicateKeyError when `_id` or a unique index is taken. */
  insertOne(document: T): Promise<void>;
  replaceOne(filter: Filter, replacement: T, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateMany(filter: Filter, update: Update): Promise<UpdateResult>;
  deleteOne(filter: Filter): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
  /** Applies the operations in order; atomic in the SQLite adapter. */
  bulkWrite(operations: readonly BulkOperation<T>[]): Promise<void>;
}

export interface ReadStoreTransaction {
  /** The collection as seen inside the transaction: reads include its own uncommitted writes. */
  collection<T extends Document = Document>(spec: CollectionSpec): Collection<T>;
}

export interface ReadStore {
  /** Creates the collection and its indexes when missing; reads see committed data. */
  collection<T extends Document = Document>(spec: CollectionSpec): Collection<T>;
  /** Runs `work` atomically: all of its writes commit together or none does. */
  transaction<R>(work: (transaction: ReadStoreTransaction) => Promise<R>): Promise<R>;
  listCollections(): Promise<string[]>;
  dropCollection(name: string): Promise<void>;
  close(): Promise<void>;
}

export class DuplicateKeyError extends Error {
  constructor(
    readonly collection: string,
    detail: string,
  ) {
    super(`Duplicate key in ${collection}: ${detail}`);
    this.name = 'DuplicateKeyError';
  }
}

/**
 * The store could not take a write in time: another writer held it (SQLite: a connection that
 * kept the file's write lock past the wait). Nothing was written; the same write may be tried again.
 */
export class ReadStoreBusyError extends Error {
  constructor(
    readonly place: string,
    readonly waitedMs: number,
  ) {
    super(`The read store ${place} stayed locked by another writer for ${waitedMs} ms`);
    this.name = 'ReadStoreBusyError';
  }
}
