import { expect } from 'chai';
import { ConfigurationInvalidError, loadServiceConfig } from '../../infra/serviceConfig.ts';
import { openStores } from '../../infra/stores.ts';
import { expectRejection } from '../support/expectRejection.ts';
import { makeTempDir } from '../support/tempDir.ts';

describe('Event store configuration', () => {
  it('refuses an EventStoreDB event store without REDIS_URL, naming the variable', () => {
    let failure: unknown;
    try {
      loadServiceConfig({ DMS_EVENT_STORE: 'esdb://eventstore:2113?tls=false' });
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(ConfigurationInvalidError);
    expect((failure as ConfigurationInvalidError).problems).to.have.length(1);
    expect((failure as ConfigurationInvalidError).problems[0]).to.match(
      /^REDIS_URL=undefined: required when DMS_EVENT_STORE is an EventStoreDB URL/,
    );
  });

  it('accepts an EventStoreDB event store with REDIS_URL, and SQLite without it', () => {
    const scaledOut = loadServiceConfig({
      DMS_EVENT_STORE: 'esdb://eventstore:2113?tls=false',
      REDIS_URL: 'redis://redis:6379',
    });
    expect(scaledOut.eventStore).to.deep.equal({ kind: 'esdb', url: 'esdb://eventstore:2113?tls=false' });
    expect(scaledOut.redisUrl).to.equal('redis://redis:6379');
    expect(loadServiceConfig({}).eventStore).to.deep.equal({ kind: 'sqlite' });
  });

  it('refuses to open an EventStoreDB store from a configuration made without a Redis', async () => {
    const dir = makeTempDir();
    try {
      const config = {
        ...loadServiceConfig({ DMS_DATA_DIR: dir.path }),
        eventStore: { kind: 'esdb' as const, url: 'esdb://127.0.0.1:1?tls=false' },
        redisUrl: undefined,
      };
      const failure = await expectRejection(openStores(config), ConfigurationInvalidError);
      expect(failure.message).to.include('REDIS_URL');
    } finally {
      dir.dispose();
    }
  });
});
