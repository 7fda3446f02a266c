import { expect } from 'chai';
import {
  DuplicateKeyError,
  type Collection,
  type CollectionSpec,
  type Document,
  type ReadStore,
} from '../../infra/readstore/readStore.ts';
import { uniqueName } from '../support/events.ts';

export type ReadStoreFixture = { store: ReadStore; dispose(): Promise<void> };

type Item = Document & {
  kind?: string | null;
  size?: number | string | boolean | null;
  flag?: boolean;
  name?: string;
  owner?: { account?: string };
  tags?: string[];
  note?: string;
  counter?: number;
};

/**
 * The behaviour every read-store adapter must have. Queries run both on indexed fields (`kind`,
 * `size`, `name`, `owner.account`) and on plain ones (`note`, `flag`, `tags`), so the SQLite
 * adapter's SQL path and its mingo fallback are both exercised. Every test uses its own collection.
 */
export const readStoreContract = (adapterName: string, open: () => Promise<ReadStoreFixture>): void => {
  describe(`ReadStore contract: ${adapterName}`, () => {
    let fixture: ReadStoreFixture;
    let store: ReadStore;
    let spec: CollectionSpec;
    let items: Collection<Item>;

    beforeEach(async () => {
      fixture = await open();
      store = fixture.store;
      spec = {
        name: uniqueName('contract_'),
        indexes: [{ fields: ['kind', 'size'] }, { fields: ['name'], unique: true }, { fields: ['owner.account'] }],
      };
      items = store.collection<Item>(spec);
    });
    afterEach(async () => {
      await store.dropCollection(spec.name);
      await fixture.dispose();
    });

    const ids = async (cursor: AsyncIterable<Document>): Promise<string[]> => {
      const found: string[] = [];
      for await (const document of cursor) found.push(document._id);
      return found;
    };
    const sortedIds = async (cursor: AsyncIterable<Document>) => (await ids(cursor)).sort();

    const seed = async () => {
      await items.bulkWrite(
        [
          {
            _id: 'a',
            kind: 'file',
            size: 10,
            flag: true,
            name: 'user.jdoe.a',
            owner: { account: 'jdoe' },
            tags: ['x'],
            note: 'alpha',
          },
          {
            _id: 'b',
            kind: 'file',
            size: 20,
            flag: false,
            name: 'user.jdoe.b',
            owner: { account: 'jdoe' },
            tags: ['x', 'y'],
          },
          { _id: 'c', kind: 'dataset', size: 5, name: 'data.c', owner: { account: 'root' }, note: 'gamma' },
          { _id: 'd', kind: 'dataset', size: '15', name: 'data_d' },
          { _id: 'e', kind: null, size: null, flag: true, name: 'user.jdoexa' },
          { _id: 'f', size: 1, name: 'f' },
        ].map((document) => ({ insertOne: { document } })),
      );
    };

    describe('writing and reading by id', () => {
      it('inserts, gets and refuses a second document with the same _id', async () => {
        await items.insertOne({ _id: 'one', kind: 'file', name: 'n1' });
        expect(await items.get('one')).to.deep.equal({ _id: 'one', kind: 'file', name: 'n1' });
        expect(await items.get('missing')).to.equal(null);
        let failure: unknown;
        try {
          await items.insertOne({ _id: 'one', name: 'n2' });
        } catch (error) {
          failure = error;
        }
        expect(failure).to.be.instanceOf(DuplicateKeyError);
      });

      it('reports a unique index violation on insert, replace and update as DuplicateKeyError', async () => {
        await items.insertOne({ _id: 'one', name: 'taken' });
        await items.insertOne({ _id: 'two', name: 'free' });
        const attempts = [
          () => items.insertOne({ _id: 'three', name: 'taken' }),
          () => items.replaceOne({ _id: 'two' }, { _id: 'two', name: 'taken' }),
          () => items.updateOne({ _id: 'two' }, { $set: { name: 'taken' } }),
        ];
        for (const attempt of attempts) {
          let failure: unknown;
          try {
            await attempt();
          } catch (error) {
            failure = error;
          }
          expect(failure).to.be.instanceOf(DuplicateKeyError);
        }
        expect((await items.get('two'))?.name).to.equal('free');
      });
    });

    describe('find', () => {
      beforeEach(seed);

      it('matches equality on indexed, dotted and plain fields', async () => {
        expect(await sortedIds(items.find({ kind: 'file' }))).to.deep.equal(['a', 'b']);
        expect(await sortedIds(items.find({ 'owner.account': 'jdoe' }))).to.deep.equal(['a', 'b']);
        expect(await sortedIds(items.find({ note: 'gamma' }))).to.deep.equal(['c']);
        expect(await sortedIds(items.find({ kind: 'dataset', size: 5 }))).to.deep.equal(['c']);
        expect(await sortedIds(items.find({ tags: 'y' }))).to.deep.equal(['b']);
      });

      it('answers every query alike through a sparse index, documents without its field included', async () => {
        const sparse = store.collection<Item>({
          name: spec.name,
          indexes: [...spec.indexes, { fields: ['note'], sparse: true }],
        });
        expect(await sortedIds(sparse.find({ note: 'gamma' }))).to.deep.equal(['c']);
        expect(await sortedIds(sparse.find({ note: { $gt: 'a' } }))).to.deep.equal(['a', 'c']);
        expect(await sortedIds(sparse.find({ note: null }))).to.deep.equal(['b', 'd', 'e', 'f']);
        expect(await ids(sparse.find({}, { sort: { note: 1, _id: 1 } }))).to.deep.equal(['b', 'd', 'e', 'f', 'a', 'c']);
        expect(await sparse.count({ note: { $exists: false } })).to.equal(4);
      });

      it('treats null as null or missing, and $ne as also matching missing', async () => {
        expect(await sortedIds(items.find({ kind: null }))).to.deep.equal(['e', 'f']);
        expect(await sortedIds(items.find({ kind: { $ne: 'file' } }))).to.deep.equal(['c', 'd', 'e', 'f']);
        expect(await sortedIds(items.find({ kind: { $ne: null } }))).to.deep.equal(['a', 'b', 'c', 'd']);
        expect(await sortedIds(items.find({ note: { $ne: 'alpha' } }))).to.deep.equal(['b', 'c', 'd', 'e', 'f']);
      });

      it('applies $in and $nin, including null in the list', async () => {
        expect(await sortedIds(items.find({ kind: { $in: ['dataset', null] } }))).to.deep.equal(['c', 'd', 'e', 'f']);
        expect(await sortedIds(items.find({ kind: { $nin: ['file', 'dataset'] } }))).to.deep.equal(['e', 'f']);
        expect(await sortedIds(items.find({ kind: { $nin: ['file', null] } }))).to.deep.equal(['c', 'd']);
        expect(await sortedIds(items.find({ kind: { $in: [] } }))).to.deep.equal([]);
      });

      it('compares ranges only within a type, as MongoDB does', async () => {
        expect(await sortedIds(items.find({ size: { $gt: 5 } }))).to.deep.equal(['a', 'b']);
        expect(await sortedIds(items.find({ size: { $gte: 5, $lt: 20 } }))).to.deep.equal(['a', 'c']);
        expect(await sortedIds(items.find({ size: { $lte: '2' } }))).to.deep.equal(['d']);
        expect(await sortedIds(items.find({ name: { $gt: 'user.jdoe.a' } }))).to.deep.equal(['b', 'e']);
      });

      it('never lets a boolean equal a number', async () => {
        expect(await sortedIds(items.find({ flag: true }))).to.deep.equal(['a', 'e']);
        expect(await sortedIds(items.find({ flag: 1 }))).to.deep.equal([]);
        expect(await sortedIds(items.find({ size: true }))).to.deep.equal([]);
      });

      it('matches regular expressions, anchored or not', async () => {
        expect(await sortedIds(items.find({ name: { $regex: '^user\\.jdoe\\.' } }))).to.deep.equal(['a', 'b']);
        expect(await sortedIds(items.find({ name: { $regex: '^user\\.jdoe.*a$' } }))).to.deep.equal(['a', 'e']);
        expect(await sortedIds(items.find({ name: { $regex: 'data[._]' } }))).to.deep.equal(['c', 'd']);
        expect(await sortedIds(items.find({ name: { $regex: '^DATA', $options: 'i' } }))).to.deep.equal(['c', 'd']);
        expect(await sortedIds(items.find({ name: { $regex: '^f|^data\\.' } }))).to.deep.equal(['c', 'f']);
        expect(await sortedIds(items.find({ note: { $regex: 'amm' } }))).to.deep.equal(['c']);
      });

      it('applies $exists', async () => {
        expect(await sortedIds(items.find({ note: { $exists: true } }))).to.deep.equal(['a', 'c']);
        expect(await sortedIds(items.find({ kind: { $exists: false } }))).to.deep.equal(['f']);
      });

      it('combines conditions with $or and $and', async () => {
        expect(await sortedIds(items.find({ $or: [{ kind: 'dataset' }, { note: 'alpha' }] }))).to.deep.equal([
          'a',
          'c',
          'd',
        ]);
        expect(await sortedIds(items.find({ $and: [{ kind: 'file' }, { flag: false }] }))).to.deep.equal(['b']);
        expect(
          await sortedIds(
            items.find({ $or: [{ 'owner.account': 'root' }, { size: { $gt: 15 } }], kind: { $ne: null } }),
          ),
        ).to.deep.equal(['b', 'c']);
      });

      it('sorts, skips and limits on indexed and plain fields', async () => {
        expect(await ids(items.find({ kind: { $in: ['file', 'dataset'] } }, { sort: { name: 1 } }))).to.deep.equal([
          'c',
          'd',
          'a',
          'b',
        ]);
        expect(await ids(items.find({}, { sort: { name: -1 }, skip: 1, limit: 2 }))).to.deep.equal(['b', 'a']);
        expect(await ids(items.find({ kind: 'file' }, { sort: { note: -1 } }))).to.deep.equal(['a', 'b']);
        expect(await ids(items.find({ flag: { $exists: true } }, { sort: { name: 1 }, limit: 2 }))).to.deep.equal([
          'a',
          'b',
        ]);
        expect(await ids(items.find({}, { sort: { kind: 1, size: -1 } }))).to.deep.equal([
          'f',
          'e',
          'd',
          'c',
          'b',
          'a',
        ]);
      });

      it('selects some fields of the matching documents, in order, a missing one as null', async () => {
        expect(
          await items.select({ kind: { $in: ['file', 'dataset'] } }, ['kind', 'size', 'name'], {
            sort: { name: 1 },
            skip: 1,
            limit: 2,
          }),
        ).to.deep.equal([
          { _id: 'd', kind: 'dataset', size: '15', name: 'data_d' },
          { _id: 'a', kind: 'file', size: 10, name: 'user.jdoe.a' },
        ]);
        expect(
          await items.select({ name: { $in: ['f', 'user.jdoexa'] } }, ['kind', 'size'], { sort: { _id: 1 } }),
        ).to.deep.equal([
          { _id: 'e', kind: null, size: null },
          { _id: 'f', kind: null, size: 1 },
        ]);
        expect(await items.select({ kind: 'file' }, ['flag', 'note', 'owner'], { sort: { _id: 1 } })).to.deep.equal([
          { _id: 'a', flag: true, note: 'alpha', owner: { account: 'jdoe' } },
          { _id: 'b', flag: false, note: null, owner: { account: 'jdoe' } },
        ]);
        expect(await items.select({ note: 'gamma' }, ['kind'])).to.deep.equal([{ _id: 'c', kind: 'dataset' }]);
      });

      it('finds one and counts', async () => {
        expect((await items.findOne({ kind: 'file' }, { sort: { size: -1 } }))?._id).to.equal('b');
        expect(await items.findOne({ kind: 'nothing' })).to.equal(null);
        expect(await items.count()).to.equal(6);
        expect(await items.count({ kind: 'file' })).to.equal(2);
        expect(await items.count({ note: { $exists: true } })).to.equal(2);
      });
    });

    describe('streaming', () => {
      it('streams more documents than one page, in order, with ties and nulls in the sort key', async () => {
        const total = 1234;
        await items.bulkWrite(
          Array.from({ length: total }, (_, index) => ({
            insertOne: {
              document: {
                _id: `doc${String(index).padStart(5, '0')}`,
                kind: index % 7 === 0 ? null : `k${index % 3}`,
                size: index,
                name: `n${index}`,
              },
            },
          })),
        );
        const streamed: Item[] = [];
        for await (const document of items.find({}, { sort: { kind: 1 } })) streamed.push(document);
        expect(streamed).to.have.length(total);
        expect(new Set(streamed.map((d) => d._id)).size).to.equal(total);
        const kinds = streamed.map((d) => d.kind ?? '');
        expect(kinds).to.deep.equal([...kinds].sort());

        const descending = await ids(items.find({ size: { $gte: 100 } }, { sort: { size: -1 }, skip: 10, limit: 600 }));
        expect(descending).to.have.length(600);
        expect(descending[0]).to.equal(`doc${String(total - 11).padStart(5, '0')}`);
        expect(await items.count({ kind: 'k1' })).to.equal(streamed.filter((d) => d.kind === 'k1').length);
      });
    });

    describe('updates', () => {
      it('applies $set, $unset, $inc, $push, $pull and $addToSet, also on dotted paths', async () => {
        await items.insertOne({ _id: 'u', name: 'u', counter: 1, tags: ['a'], owner: { account: 'jdoe' }, note: 'n' });
        await items.updateOne({ _id: 'u' }, { $set: { 'owner.account': 'root', kind: 'file' }, $unset: { note: '' } });
        await items.updateOne({ _id: 'u' }, { $inc: { counter: 2 }, $push: { tags: 'b' } });
        await items.updateOne({ _id: 'u' }, { $addToSet: { tags: 'b' } });
        await items.updateOne({ _id: 'u' }, { $addToSet: { tags: 'c' } });
        await items.updateOne({ _id: 'u' }, { $pull: { tags: 'a' } });
        expect(await items.get('u')).to.deep.equal({
          _id: 'u',
          name: 'u',
          counter: 3,
          tags: ['b', 'c'],
          owner: { account: 'root' },
          kind: 'file',
        });
        expect(await sortedIds(items.find({ 'owner.account': 'root' }))).to.deep.equal(['u']);
      });

      it('upserts from the filter and applies $setOnInsert only when inserting', async () => {
        const first = await items.updateOne(
          { _id: 'x', kind: 'file' },
          { $inc: { counter: 1 }, $setOnInsert: { note: 'created' } },
          { upsert: true },
        );
        expect(first.upsertedId).to.equal('x');
        await items.updateOne(
          { _id: 'x', kind: 'file' },
          { $inc: { counter: 1 }, $setOnInsert: { note: 'again' } },
          { upsert: true },
        );
        expect(await items.get('x')).to.deep.equal({ _id: 'x', kind: 'file', counter: 2, note: 'created' });
        const missed = await items.updateOne({ _id: 'nope' }, { $set: { kind: 'file' } });
        expect(missed.matchedCount).to.equal(0);
        expect(await items.get('nope')).to.equal(null);
      });

      it('inserts a document in bulk only when its _id is free ($setOnInsert alone, upserting)', async () => {
        await items.insertOne({ _id: 'kept', kind: 'file', name: 'old' });
        await items.bulkWrite([
          {
            updateOne: {
              filter: { _id: 'kept' },
              update: { $setOnInsert: { kind: 'dataset', name: 'new' } },
              upsert: true,
            },
          },
          {
            updateOne: {
              filter: { _id: 'fresh' },
              update: { $setOnInsert: { kind: 'dataset', name: 'new' } },
              upsert: true,
            },
          },
        ]);
        expect(await items.get('kept')).to.deep.equal({ _id: 'kept', kind: 'file', name: 'old' });
        expect(await items.get('fresh')).to.deep.equal({ _id: 'fresh', kind: 'dataset', name: 'new' });
        expect(await sortedIds(items.find({ kind: 'dataset' }))).to.deep.equal(['fresh']);
      });

      it('replaces whole documents, upserting when asked', async () => {
        await items.replaceOne({ _id: 'r' }, { _id: 'r', kind: 'file', name: 'r1' }, { upsert: true });
        await items.replaceOne({ _id: 'r' }, { _id: 'r', kind: 'dataset' });
        expect(await items.get('r')).to.deep.equal({ _id: 'r', kind: 'dataset' });
        expect(await sortedIds(items.find({ kind: 'file' }))).to.deep.equal([]);
      });

      it('updates and deletes many, and deletes one', async () => {
        await seed();
        const updated = await items.updateMany({ kind: 'file' }, { $set: { note: 'touched' } });
        expect(updated.matchedCount).to.equal(2);
        expect(await sortedIds(items.find({ note: 'touched' }))).to.deep.equal(['a', 'b']);
        expect(await items.deleteOne({ kind: 'dataset' })).to.equal(1);
        expect(await items.deleteMany({ kind: { $in: ['file', 'dataset'] } })).to.equal(3);
        expect(await sortedIds(items.find({}))).to.deep.equal(['e', 'f']);
      });

      it('runs bulk operations in order', async () => {
        await items.bulkWrite([
          { insertOne: { document: { _id: 'b1', counter: 1, name: 'b1' } } },
          { updateOne: { filter: { _id: 'b1' }, update: { $inc: { counter: 1 } } } },
          { replaceOne: { filter: { _id: 'b2' }, replacement: { _id: 'b2', counter: 10, name: 'b2' }, upsert: true } },
          { updateMany: { filter: { counter: { $gte: 2 } }, update: { $set: { kind: 'big' } } } },
          { deleteOne: { filter: { _id: 'b2' } } },
        ]);
        expect(await items.find({}).toArray()).to.deep.equal([{ _id: 'b1', counter: 2, name: 'b1', kind: 'big' }]);
      });
    });

    describe('transactions', () => {
      it('commits every write of the transaction together and sees its own writes inside', async () => {
        await store.transaction(async (transaction) => {
          const inside = transaction.collection<Item>(spec);
          await inside.insertOne({ _id: 't1', name: 't1' });
          await inside.updateOne({ _id: 't1' }, { $set: { kind: 'file' } });
          expect((await inside.get('t1'))?.kind).to.equal('file');
        });
        expect(await items.get('t1')).to.deep.equal({ _id: 't1', name: 't1', kind: 'file' });
      });

      it('writes nothing when the transaction fails', async () => {
        let failure: unknown;
        try {
          await store.transaction(async (transaction) => {
            await transaction.collection<Item>(spec).insertOne({ _id: 't2', name: 't2' });
            throw new Error('boom');
          });
        } catch (error) {
          failure = error;
        }
        expect((failure as Error).message).to.equal('boom');
        expect(await items.get('t2')).to.equal(null);
      });
    });

    describe('collections', () => {
      it('lists and drops collections', async () => {
        await items.insertOne({ _id: 'z', name: 'z' });
        expect(await store.listCollections()).to.include(spec.name);
        await store.dropCollection(spec.name);
        expect(await store.listCollections()).not.to.include(spec.name);
        expect(await items.count()).to.equal(0);
      });
    });
  });
};
