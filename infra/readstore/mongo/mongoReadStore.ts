import {
  MongoClient,
  MongoServerError,
  type AnyBulkWriteOperation,
  type ClientSession,
  type Collection as MongoCollection,
  type Db,
  type Filter as MongoFilter,
} from 'mongodb';
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
    return new MongoBackedCollection<T>(this.db.collection<T>(spec.name), this.ensure(spec), undefined);
  }

  async transaction<R>(work: (transaction: ReadStoreTransaction) => Promise<R>): Promise<R> {
    const session = this.client.startSession();
    try {
      let result: R | undefined;
      await session.withTransaction(async () => {
        result = await work({
          collection: <T extends Document>(spec: CollectionSpec) =>
            new MongoBackedCollection<T>(this.db.collection<T>(spec.name), this.ensure(spec), session),
        });
      });
      return result as R;
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
        for (const index of spec.indexes) {
          await this.db
            .collection(spec.name)
            .createIndex(Object.fromEntries(index.fields.map((field) => [field, 1])), {
              unique: index.unique ?? false,
            });
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

class MongoBackedCollection<T extends Document> implements Collection<T> {
  readonly name: string;

  constructor(
    private readonly collection: MongoCollection<T>,
    private readonly ready: Promise<void>,
    private readonly session: ClientSession | undefined,
  ) {
    this.name = collection.collectionName;
  }

  async get(id: string): Promise<T | null> {
    await this.ready;
    return (await this.collection.findOne({ _id: id } as MongoFilter<T>, this.options())) as T | null;
  }

  async findOne(filter: Filter, options: FindOptions = {}): Promise<T | null> {
    await this.ready;
    return (await this.collection.findOne(filter as MongoFilter<T>, {
      ...this.options(),
      ...findOptions(options),
    })) as T | null;
  }

  find(filter: Filter, options: FindOptions = {}): Cursor<T> {
    const open = async () => {
      await this.ready;
      return this.collection.find(filter as MongoFilter<T>, {
        ...this.options(),
        ...findOptions(options),
        batchSize: 500,
      });
    };
    return {
      async *[Symbol.asyncIterator]() {
        for await (const document of await open()) yield document as T;
      },
      toArray: async () => (await (await open()).toArray()) as T[],
    };
  }

  async count(filter: Filter = {}): Promise<number> {
    await this.ready;
    return this.collection.countDocuments(filter as MongoFilter<T>, this.options());
  }

  async insertOne(document: T): Promise<void> {
    await this.translate(async () => {
      await this.collection.insertOne(document as never, this.options());
    });
  }

  async replaceOne(filter: Filter, replacement: T, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    return this.translate(async () =>
      toUpdateResult(
        // An upsert whose filter names no _id takes the replacement's own _id, as the SQLite adapter does.
        await this.collection.replaceOne(
          filter as MongoFilter<T>,
          ('_id' in filter ? withoutId(replacement) : replacement) as never,
          {
            ...this.options(),
            upsert: options.upsert ?? false,
          },
        ),
      ),
    );
  }

  async updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    return this.translate(async () =>
      toUpdateResult(
        await this.collection.updateOne(filter as MongoFilter<T>, update as never, {
          ...this.options(),
          upsert: options.upsert ?? false,
        }),
      ),
    );
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    return this.translate(async () =>
      toUpdateResult(await this.collection.updateMany(filter as MongoFilter<T>, update as never, this.options())),
    );
  }

  async deleteOne(filter: Filter): Promise<number> {
    await this.ready;
    return (await this.collection.deleteOne(filter as MongoFilter<T>, this.options())).deletedCount;
  }

  async deleteMany(filter: Filter): Promise<number> {
    await this.ready;
    return (await this.collection.deleteMany(filter as MongoFilter<T>, this.options())).deletedCount;
  }

  async bulkWrite(operations: readonly BulkOperation<T>[]): Promise<void> {
    if (operations.length === 0) return;
    await this.translate(async () => {
      await this.collection.bulkWrite(operations.map(toMongoOperation) as AnyBulkWriteOperation<T>[], {
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

const toMongoOperation = <T extends Document>(operation: BulkOperation<T>): unknown => {
  if ('replaceOne' in operation && '_id' in operation.replaceOne.filter) {
    return { replaceOne: { ...operation.replaceOne, replacement: withoutId(operation.replaceOne.replacement) } };
  }
  return operation;
};
