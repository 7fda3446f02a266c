import {
  MongoClient,
  MongoServerError,
  type AnyBulkWriteOperation,
  type ClientSession,
  type Collection as MongoCollection,
  type Db,
  type UpdateFilter,
} from 'mongodb';
import { asDocument, selectedOf } from '../documents.ts';
import {
  DuplicateKeyError,
  type BulkOperation,
  type Collection,
  type CollectionSpec,
  type Cursor,
  type Document,
  type Filter,
  type FindOptions,
  type ReadStore,
  type ReadStoreTransaction,
  type Selected,
  type Update,
  type UpdateResult,
} from '../readStore.ts';

/**
 * The scaled-out read store: a MongoDB replica set (transactions need one) through the official
 * driver. The port is MongoDB-shaped, so this adapter mostly passes calls through; it creates the
 * declared indexes once per collection and turns error 11000 into DuplicateKeyError.
 */
export class MongoReadStore implements ReadStore {
  private readonly client: MongoClient;
  private readonly db: Db;
  private readonly ensured = new Map<string, Promise<void>>();

  /** `url` names the database in its path, e.g. mongodb://h1,h2/dms?replicaSet=rs0 (default dms). */
  constructor(url: string) {
    this.client = new MongoClient(url);
    this.db = this.client.db();
  }

  collection<T extends Document = Document>(spec: CollectionSpec): Collection<T> {
    return new MongoBackedCollection<T>(this.db.collection(spec.name), this.ensure(spec), undefined);
  }

  async transaction<R>(work: (transaction: ReadStoreTransaction) => Promise<R>): Promise<R> {
    const session = this.client.startSession();
    try {
      // The driver answers with what the work answered (the last try's, when it retried).
      return await session.withTransaction(() =>
        work({
          collection: <T extends Document>(spec: CollectionSpec) =>
            new MongoBackedCollection<T>(this.db.collection(spec.name), this.ensure(spec), session),
        }),
      );
    } finally {
      await session.endSession();
    }
  }

  async listCollections(): Promise<string[]> {
    const collections = await this.db.listCollections({}, { nameOnly: true }).toArray();
    return collections.map((collection) => collection.name).sort();
  }

  async dropCollection(name: string): Promise<void> {
    this.ensured.delete(name);
    try {
      await this.db.dropCollection(name);
    } catch (error) {
      if (!(error instanceof MongoServerError && error.codeName === 'NamespaceNotFound')) throw error;
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /** Index creation is idempotent; it runs once per collection and process. */
  private ensure(spec: CollectionSpec): Promise<void> {
    let ensured = this.ensured.get(spec.name);
    if (!ensured) {
      ensured = (async () => {
        const existing = await this.db.listCollections({ name: spec.name }, { nameOnly: true }).toArray();
        if (existing.length === 0) await this.db.createCollection(spec.name).catch(ignoreExists);
        const collection = this.db.collection(spec.name);
        const declared = new Set<string>();
        for (const index of spec.indexes) {
          declared.add(
            await collection.createIndex(Object.fromEntries(index.fields.map((field) => [field, 1])), {
              unique: index.unique ?? false,
              // Named apart from a plain index on the same fields, which then goes as undeclared.
              ...(index.sparse
                ? {
                    name: `${index.fields.map((field) => `${field}_1`).join('_')}_sparse`,
                    partialFilterExpression: { [index.fields[0]!]: { $exists: true } },
                  }
                : {}),
            }),
          );
        }
        // An index the collection no longer declares would still cost every write: it goes.
        for (const index of await collection.listIndexes().toArray()) {
          const name: unknown = index.name;
          if (typeof name === 'string' && name !== '_id_' && !declared.has(name)) await collection.dropIndex(name);
        }
      })();
      this.ensured.set(spec.name, ensured);
    }
    return ensured;
  }
}

const ignoreExists = (error: unknown): void => {
  if (!(error instanceof MongoServerError && error.codeName === 'NamespaceExists')) throw error;
};

/**
 * One collection through the driver, which sees it as a collection of the port's untyped
 * documents (string ids, any fields): filters pass as they are (MongoDB-shaped already), updates
 * through `toMongoUpdate`, and documents come back as the collection's type through `asDocument`,
 * as in the SQLite adapter.
 */
class MongoBackedCollection<T extends Document> implements Collection<T> {
  readonly name: string;

  constructor(
    private readonly collection: MongoCollection<Document>,
    private readonly ready: Promise<void>,
    private readonly session: ClientSession | undefined,
  ) {
    this.name = collection.collectionName;
  }

  async get(id: string): Promise<T | null> {
    await this.ready;
    return documentOrNull<T>(await this.collection.findOne({ _id: id }, this.options()));
  }

  async findOne(filter: Filter, options: FindOptions = {}): Promise<T | null> {
    await this.ready;
    return documentOrNull<T>(
      await this.collection.findOne(filter, {
        ...this.options(),
        ...findOptions(options),
      }),
    );
  }

  find(filter: Filter, options: FindOptions = {}): Cursor<T> {
    const open = async () => {
      await this.ready;
      return this.collection.find(filter, {
        ...this.options(),
        ...findOptions(options),
        batchSize: 500,
      });
    };
    return {
      async *[Symbol.asyncIterator]() {
        for await (const document of await open()) yield asDocument<T>(document);
      },
      toArray: async () => (await (await open()).toArray()).map((document) => asDocument<T>(document)),
    };
  }

  async select<K extends keyof T & string>(
    filter: Filter,
    fields: readonly K[],
    options: FindOptions = {},
  ): Promise<Selected<T, K>[]> {
    await this.ready;
    const documents = await this.collection
      .find(filter, {
        ...this.options(),
        ...findOptions(options),
        projection: Object.fromEntries(fields.map((field) => [field, 1])),
      })
      .toArray();
    return documents.map((document) => selectedOf(asDocument<T>(document), fields));
  }

  async count(filter: Filter = {}): Promise<number> {
    await this.ready;
    return this.collection.countDocuments(filter, this.options());
  }

  async insertOne(document: T): Promise<void> {
    await this.translate(async () => {
      await this.collection.insertOne(document, this.options());
    });
  }

  async replaceOne(filter: Filter, replacement: T, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    return this.translate(async () =>
      toUpdateResult(
        // An upsert whose filter names no _id takes the replacement's own _id, as the SQLite adapter does.
        await this.collection.replaceOne(filter, '_id' in filter ? withoutId(replacement) : replacement, {
          ...this.options(),
          upsert: options.upsert ?? false,
        }),
      ),
    );
  }

  async updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    return this.translate(async () =>
      toUpdateResult(
        await this.collection.updateOne(filter, toMongoUpdate(update), {
          ...this.options(),
          upsert: options.upsert ?? false,
        }),
      ),
    );
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    return this.translate(async () =>
      toUpdateResult(await this.collection.updateMany(filter, toMongoUpdate(update), this.options())),
    );
  }

  async deleteOne(filter: Filter): Promise<number> {
    await this.ready;
    return (await this.collection.deleteOne(filter, this.options())).deletedCount;
  }

  async deleteMany(filter: Filter): Promise<number> {
    await this.ready;
    return (await this.collection.deleteMany(filter, this.options())).deletedCount;
  }

  async bulkWrite(operations: readonly BulkOperation<T>[]): Promise<void> {
    if (operations.length === 0) return;
    await this.translate(async () => {
      await this.collection.bulkWrite(operations.map(toMongoOperation), {
        ...this.options(),
        ordered: true,
      });
    });
  }

  private options(): { session?: ClientSession } {
    return this.session ? { session: this.session } : {};
  }

  private async translate<R>(work: () => Promise<R>): Promise<R> {
    await this.ready;
    try {
      return await work();
    } catch (error) {
      if (error instanceof MongoServerError && error.code === 11000)
        throw new DuplicateKeyError(this.name, error.message);
      throw error;
    }
  }
}

const findOptions = (options: FindOptions) => ({
  ...(options.sort ? { sort: { ...options.sort } } : {}),
  ...(options.skip ? { skip: options.skip } : {}),
  ...(options.limit ? { limit: options.limit } : {}),
});

const withoutId = <T extends Document>(document: T): Omit<T, '_id'> => {
  const { _id, ...rest } = document;
  return rest;
};

const toUpdateResult = (result: {
  matchedCount: number;
  modifiedCount: number;
  upsertedId?: unknown;
}): UpdateResult => ({
  matchedCount: result.matchedCount,
  modifiedCount: result.modifiedCount,
  ...(result.upsertedId != null ? { upsertedId: String(result.upsertedId) } : {}),
});

const documentOrNull = <T extends Document>(document: Document | null): T | null =>
  document === null ? null : asDocument<T>(document);

/**
 * The port's update as the driver's. The port speaks MongoDB's update language over fields no
 * schema names; the driver types each operator by the fields of the collection's schema (`$push`
 * only on array fields, say), which a schema of untyped fields cannot satisfy. The update is
 * handed over as it is, which is what the driver sends anyway.
 */
const toMongoUpdate = (update: Update): UpdateFilter<Document> =>
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- MongoDB's update syntax over untyped fields (see above)
  update as UpdateFilter<Document>;

const toMongoOperation = <T extends Document>(operation: BulkOperation<T>): AnyBulkWriteOperation<Document> => {
  if ('replaceOne' in operation && '_id' in operation.replaceOne.filter) {
    return { replaceOne: { ...operation.replaceOne, replacement: withoutId(operation.replaceOne.replacement) } };
  }
  if ('updateOne' in operation)
    return { updateOne: { ...operation.updateOne, update: toMongoUpdate(operation.updateOne.update) } };
  if ('updateMany' in operation)
    return { updateMany: { ...operation.updateMany, update: toMongoUpdate(operation.updateMany.update) } };
  return operation;
};
