import { MongoReadStore } from '../../infra/readstore/mongo/mongoReadStore.ts';
import { readStoreContract } from './readStore.contract.ts';
import { skipBecause } from '../support/skip.ts';

const mongoUrl = process.env.MONGODB_URL;

if (mongoUrl) {
  readStoreContract('MongoDB', async () => {
    const store = new MongoReadStore(mongoUrl);
    return { store, dispose: () => store.close() };
  });
} else {
  describe('ReadStore contract: MongoDB', () => {
    it('runs against a replica set named by MONGODB_URL', function () {
      skipBecause(this, 'MONGODB_URL is not set, so no MongoDB server can be reached from this run');
    });
  });
}
