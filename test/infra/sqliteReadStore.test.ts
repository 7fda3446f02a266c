import { expect } from 'chai';
import fc from 'fast-check';
import { join } from 'node:path';
import { compileFilter } from '../../infra/readstore/documents.ts';
import { ReadStoreBusyError, type Document } from '../../infra/readstore/readStore.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { uniqueName } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { readStoreContract } from './readStore.contract.ts';

readStoreContract('SQLite', async () => {
  const dir = makeTempDir();
  const store = new SqliteReadStore(join(dir.path, 'read.sqlite'));
  return {
    store,
    dispose: async () => {
      await store.close();
      dir.dispose();
    },
  };
});

describe('SqliteReadStore specifics', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let store: SqliteReadStore;
  beforeEach(() => {
    dir = makeTempDir();
    store = new SqliteReadStore(join(dir.path, 'read.sqlite'));
  });
  afterEach(async () => {
    await store.close();
    dir.dispose();
  });

  it('adds a column for a newly declared index and fills it from the stored documents', async () => {
    const name = uniqueName('evolve_');
    await store.collection({ name, indexes: [] }).insertOne({ _id: '1', kind: 'file' });
    const indexed = store.collection({ name, indexes: [{ fields: ['kind'] }] });
    expect((await indexed.find({ kind: 'file' }).toArray()).map((d) => d._id)).to.deep.equal(['1']);
    const plan = store.reader.prepare(`EXPLAIN QUERY PLAN SELECT id FROM "${name}" WHERE "f:kind" = 'file'`).all() as {
      detail: string;
    }[];
    expect(plan.map((row) => row.detail).join(' ')).to.match(/USING (COVERING )?INDEX/);
  });

  it('drops an index the collection no longer declares, when a store next opens it', async () => {
    const name = uniqueName('shrink_');
    await store.collection({ name, indexes: [{ fields: ['kind'] }, { fields: ['size'] }] }).insertOne({ _id: '1' });
    await store.close();
    store = new SqliteReadStore(join(dir.path, 'read.sqlite'));
    await store.collection({ name, indexes: [{ fields: ['kind'] }] }).count();
    const indexes = store.reader.prepare(`PRAGMA index_list("${name}")`).all() as { name: string; origin: string }[];
    expect(indexes.filter((index) => index.origin === 'c').map((index) => index.name)).to.deep.equal([`${name}__kind`]);
  });

  it('takes a write between two transactions of another connection, and gives up with ReadStoreBusyError past its wait', async () => {
    const name = uniqueName('busy_');
    const spec = { name, indexes: [] };
    await store.collection(spec).insertOne({ _id: 'first' });
    const other = new SqliteReadStore(join(dir.path, 'read.sqlite'), { writeWaitMs: 200 });
    try {
      let release = (): void => undefined;
      const holding = store.transaction(async (transaction) => {
        await transaction.collection(spec).insertOne({ _id: 'held' });
        await new Promise<void>((resolve) => (release = resolve));
      });
      let failure: unknown;
      try {
        await other.collection(spec).insertOne({ _id: 'refused' });
      } catch (error) {
        failure = error;
      }
      expect(failure).to.be.instanceOf(ReadStoreBusyError);
      // Let go only once the other write is waiting: it gets in as soon as the lock is free.
      const waiting = other.collection(spec).insertOne({ _id: 'after' });
      release();
      await holding;
      await waiting;
      expect((await other.collection(spec).find({}).toArray()).map((d) => d._id).sort()).to.deep.equal([
        'after',
        'first',
        'held',
      ]);
    } finally {
      await other.close();
    }
  });

  it('keeps documents without the first field out of a sparse index, and queries on a value still use it', async () => {
    const name = uniqueName('sparse_');
    const guids = store.collection({ name, indexes: [{ fields: ['guid'], sparse: true }] });
    await guids.bulkWrite(
      [{ _id: 'a', guid: 'g1' }, { _id: 'b' }, { _id: 'c', guid: null }].map((document) => ({
        insertOne: { document },
      })),
    );
    const entries = store.reader
      .prepare(`SELECT count(*) AS n FROM "${name}" INDEXED BY "${name}__guid__sparse" WHERE "f:guid" IS NOT NULL`)
      .get() as { n: number };
    expect(entries.n).to.equal(1);
    const plan = store.reader.prepare(`EXPLAIN QUERY PLAN SELECT id FROM "${name}" WHERE "f:guid" = 'g1'`).all() as {
      detail: string;
    }[];
    expect(plan.map((row) => row.detail).join(' ')).to.include(`${name}__guid__sparse`);
    expect((await guids.find({ guid: 'g1' }).toArray()).map((d) => d._id)).to.deep.equal(['a']);
  });

  it('stores a document without its _id, which the row key holds, and reads it back whole, older rows too', async () => {
    const name = uniqueName('stored_');
    const items = store.collection({ name, indexes: [{ fields: ['kind'] }] });
    const documents = [
      { _id: 'first', kind: 'a', nested: { _id: 'first' } },
      { kind: 'b', _id: 'last' },
      { kind: 'c', _id: 'middle', size: 1 },
      { _id: 'alone' },
      { _id: 'quo"ted\\', kind: 'd' },
    ];
    await items.bulkWrite(documents.map((document) => ({ insertOne: { document } })));
    const stored = store.reader.prepare(`SELECT id, doc FROM "${name}" ORDER BY id`).all() as {
      id: string;
      doc: string;
    }[];
    expect(
      stored.map((row) => JSON.parse(row.doc) as Record<string, unknown>).every((doc) => !('_id' in doc)),
    ).to.equal(true);
    // A row written before, with its _id inside the JSON, reads the same.
    store.writer
      .prepare(`INSERT INTO "${name}" (id, doc, "f:kind") VALUES (?, ?, ?)`)
      .run('old', '{"_id":"old","kind":"e"}', 'e');
    for (const document of [...documents, { _id: 'old', kind: 'e' }])
      expect(await items.get(document._id)).to.deep.equal(document);
    expect((await items.find({ kind: 'e' }).toArray())[0]).to.deep.equal({ _id: 'old', kind: 'e' });
    expect(Object.keys((await items.get('last'))!)[0]).to.equal('_id');
  });

  it('refuses to index a field that holds an array', async () => {
    const tagged = store.collection({ name: uniqueName('array_'), indexes: [{ fields: ['tags'] }] });
    let failure: unknown;
    try {
      await tagged.insertOne({ _id: '1', tags: ['a'] });
    } catch (error) {
      failure = error;
    }
    expect((failure as Error).name).to.equal('IndexedFieldTypeError');
  });

  it('serves committed data to readers while a transaction is open', async () => {
    const spec = { name: uniqueName('isolation_'), indexes: [] };
    const outside = store.collection(spec);
    await outside.insertOne({ _id: 'before' });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const transaction = store.transaction(async (tx) => {
      await tx.collection(spec).insertOne({ _id: 'inside' });
      await held;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await outside.find({}).toArray()).map((d) => d._id)).to.deep.equal(['before']);
    release();
    await transaction;
    expect((await outside.find({}).toArray()).map((d) => d._id).sort()).to.deep.equal(['before', 'inside']);
  });

  /**
   * Differential check of the SQL translation: for random documents and random filters over
   * indexed and plain fields, SQLite must answer exactly what mingo (MongoDB's semantics) answers.
   */
  it('answers random filters exactly as MongoDB semantics (mingo) would', async () => {
    const scalar = fc.oneof(
      fc.constantFrom('a', 'b', 'ab', 'user.x', 'user_x', ''),
      fc.integer({ min: -3, max: 3 }),
      fc.constantFrom(0.5, true, false, null),
    );
    const documentArb = fc.record(
      { x: scalar, y: scalar, plain: scalar, nested: fc.record({ z: scalar }, { requiredKeys: [] }) },
      { requiredKeys: [] },
    );
    const field = fc.constantFrom('x', 'y', 'plain', 'nested.z');
    const condition = fc.oneof(
      scalar,
      scalar.map((v) => ({ $eq: v })),
      scalar.map((v) => ({ $ne: v })),
      fc.array(scalar, { maxLength: 3 }).map((v) => ({ $in: v })),
      fc.array(scalar, { maxLength: 3 }).map((v) => ({ $nin: v })),
      fc.tuple(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), scalar).map(([op, v]) => ({ [op]: v })),
      fc.constantFrom('^a', '^user\\.', 'b$', '^us.r', '^a|^u').map((v) => ({ $regex: v })),
      fc.boolean().map((v) => ({ $exists: v })),
    );
    const leaf = fc.tuple(field, condition).map(([f, c]) => ({ [f]: c }));
    const filterArb = fc.oneof(
      leaf,
      fc.array(leaf, { minLength: 1, maxLength: 3 }).map((parts) => ({ $or: parts })),
      fc.array(leaf, { minLength: 1, maxLength: 3 }).map((parts) => ({ $and: parts })),
      fc.tuple(leaf, leaf).map(([a, b]) => ({ ...a, ...b })),
    );

    const spec = { name: uniqueName('differential_'), indexes: [{ fields: ['x', 'y'] }, { fields: ['nested.z'] }] };
    const collection = store.collection(spec);
    const documents: Document[] = fc
      .sample(documentArb, { numRuns: 80, seed: 42 })
      .map((document, index) => ({ _id: `d${index}`, ...document }));
    await collection.bulkWrite(documents.map((document) => ({ insertOne: { document } })));

    await fc.assert(
      fc.asyncProperty(filterArb, async (filter) => {
        const expected = documents
          .filter(compileFilter(filter))
          .map((d) => d._id)
          .sort();
        const actual = (await collection.find(filter).toArray()).map((d) => d._id).sort();
        expect(actual, JSON.stringify(filter)).to.deep.equal(expected);
        expect(await collection.count(filter)).to.equal(expected.length);
      }),
      { numRuns: 400, seed: 7 },
    );
  });
});
