import { expect } from 'chai';
import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { Redis } from 'ioredis';
import type { AppendPath } from '../../infra/eventstore/esdbAppendPath.ts';
import { EsdbEventStore } from '../../infra/eventstore/esdbEventStore.ts';
import { JSON_KEYS_PROPERTY } from '../../infra/eventstore/esdbMetadata.ts';
import { SteppedEventStore } from '../../infra/eventstore/steppedEventStore.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { expectRejection } from '../support/expectRejection.ts';
import { eventStoreContract } from './eventStore.contract.ts';

/**
 * The EventStoreDB / KurrentDB adapter against the server ESDB_URL names (no server can run on
 * the development machine, so without it these are skipped and say so). Both paths of
 * multi-stream appends run: atomic where the server offers it (KurrentDB 25.1 and later), and the
 * stepped protocol, forced, on any server, with the run's Redis.
 *
 *   ESDB_URL='kurrentdb://127.0.0.1:2113?tls=false' npx mocha test/infra/esdbEventStore.test.ts
 */

const esdbUrl = process.env.ESDB_URL;

/** What the server offers, asked once for the whole file. */
const askServer = async (url: string): Promise<AppendPath> => {
  const { store, path } = await EsdbEventStore.connect(url, 'auto');
  await store.close();
  return path;
};

const skipped = (title: string, reason: string): void => {
  describe(title, () => {
    it('runs against a server named by ESDB_URL', function () {
      console.log(`      skipped: ${reason}`);
      this.skip();
    });
  });
};

const deleteKeys = async (redis: Redis, prefix: string): Promise<void> => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
};

if (!esdbUrl) {
  const reason = 'ESDB_URL is not set, so no EventStoreDB or KurrentDB server can be reached from this run';
  skipped('EventStore contract: KurrentDB, atomic multi-stream appends', reason);
  skipped('EventStore contract: EventStoreDB or KurrentDB, stepped protocol', reason);
} else {
  const path = await askServer(esdbUrl);

  if (path.kind === 'atomic') {
    eventStoreContract('KurrentDB, atomic multi-stream appends', async () => {
      const { store } = await EsdbEventStore.connect(esdbUrl, 'auto');
      return { store, dispose: () => store.close() };
    });
    describe('EsdbEventStore on the atomic path', () => atomicPathTests(esdbUrl));
  } else {
    skipped('EventStore contract: KurrentDB, atomic multi-stream appends', `the server at ESDB_URL: ${path.reason}`);
  }

  eventStoreContract('EventStoreDB or KurrentDB, stepped protocol', async () => {
    const redisUrl = process.env.REDIS_URL;
    if (!redisUrl) throw new Error('REDIS_URL is set by the root hooks');
    const redis = new Redis(redisUrl);
    const prefix = uniqueName('esdb-steps-');
    const { store: inner, path: forced } = await EsdbEventStore.connect(esdbUrl, 'stepped');
    expect(forced.kind).to.equal('stepped');
    const store = await SteppedEventStore.open(inner, { redis, keyPrefix: prefix, recoveryIntervalMs: 0 });
    return {
      store,
      dispose: async () => {
        await store.close();
        await deleteKeys(redis, prefix);
        await redis.quit();
      },
    };
  });
}

function atomicPathTests(url: string): void {
  let store: EsdbEventStore;
  let raw: KurrentDBClient;

  beforeEach(async () => {
    store = (await EsdbEventStore.connect(url, 'auto')).store;
    raw = KurrentDBClient.connectionString(url.replace(/^esdb/, 'kurrentdb'));
  });

  afterEach(async () => {
    await store.close();
    await raw.dispose();
  });

  it('stores the metadata of a multi-stream append as flat strings and reads it back as given', async () => {
    const one = uniqueName('atomic-');
    const two = uniqueName('atomic-');
    const event = newEvent('Registered', { bytes: 12 });
    await store.appendToStreams([
      { streamName: one, events: [event], expectedRevision: 'no_stream' },
      { streamName: two, events: [newEvent('Attached')], expectedRevision: 'no_stream' },
    ]);
    for await (const resolved of raw.readStream(one)) {
      const stored = resolved.event?.metadata as Record<string, unknown>;
      expect(stored.schemaVersion).to.equal('1');
      expect(stored[JSON_KEYS_PROPERTY]).to.equal('["schemaVersion"]');
    }
    const [read] = await store.readStream(one);
    const { hash: _hash, ...metadata } = read!.metadata;
    expect(metadata).to.deep.equal(event.metadata);
    expect(read!.metadata.step, 'no step mark: the append was atomic').to.equal(undefined);
  });

  it('refuses, writing nothing, streams whose names differ only in letter case', async () => {
    const name = uniqueName('did-user.a:File');
    const appends = [name, name.toLowerCase()].map((streamName) => ({
      streamName,
      events: [newEvent('Registered')],
      expectedRevision: 'no_stream' as const,
    }));
    const refusal = await expectRejection(store.appendToStreams(appends), Error);
    expect(refusal.message).to.match(/differ only in letter case/);
    expect(await store.streamRevision(name)).to.equal('no_stream');
    expect(await store.streamRevision(name.toLowerCase())).to.equal('no_stream');
  });
}
