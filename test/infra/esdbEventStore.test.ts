import { EsdbEventStore } from '../../infra/eventstore/esdbEventStore.ts';
import { eventStoreContract } from './eventStore.contract.ts';

const esdbUrl = process.env.ESDB_URL;

if (esdbUrl) {
  eventStoreContract('EventStoreDB', async () => {
    const store = new EsdbEventStore(esdbUrl);
    return { store, dispose: () => store.close() };
  });
} else {
  describe('EventStore contract: EventStoreDB', () => {
    it('runs against a server named by ESDB_URL', function () {
      console.log('      skipped: ESDB_URL is not set, so no EventStoreDB server can be reached from this run');
      this.skip();
    });
  });
}
