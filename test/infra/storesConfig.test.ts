import { expect } from 'chai';
import { ConfigurationInvalidError, loadServiceConfig } from '../../infra/serviceConfig.ts';

describe('Event store configuration', () => {
  it('accepts an EventStoreDB or KurrentDB event store without REDIS_URL: appends take no leases', () => {
    for (const url of ['esdb://eventstore:2113?tls=false', 'kurrentdb+discover://node1:2113']) {
      const scaledOut = loadServiceConfig({ DMS_EVENT_STORE: url });
      expect(scaledOut.eventStore).to.deep.equal({ kind: 'esdb', url });
      expect(scaledOut.redisUrl).to.equal(undefined);
    }
    expect(loadServiceConfig({}).eventStore).to.deep.equal({ kind: 'sqlite' });
  });

  it('refuses an event store that is neither sqlite nor a server URL, naming the variable', () => {
    let failure: unknown;
    try {
      loadServiceConfig({ DMS_EVENT_STORE: 'postgres://db/events' });
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(ConfigurationInvalidError);
    expect((failure as ConfigurationInvalidError).problems[0]).to.match(/^DMS_EVENT_STORE=/);
  });
});
