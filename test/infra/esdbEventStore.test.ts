import { expect } from 'chai';
import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { AtomicAppendsUnavailableError, type AtomicAppendCheck } from '../../infra/eventstore/esdbAppendPath.ts';
import { EsdbEventStore } from '../../infra/eventstore/esdbEventStore.ts';
import { openEsdbEventStore } from '../../infra/eventstore/esdbEventStoreOpening.ts';
import { JSON_KEYS_PROPERTY } from '../../infra/eventstore/esdbMetadata.ts';
import { finishLeftSteps, leftStepsCheck } from '../../infra/eventstore/leftSteps.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { writeLeftStep } from '../support/leftStep.ts';
import { expectRejection } from '../support/expectRejection.ts';
import { eventStoreContract } from './eventStore.contract.ts';
import { skipBecause } from '../support/skip.ts';

/**
 * The KurrentDB adapter against the server ESDB_URL names (no server can run on the development
 * machine, so without it these are skipped and say so): the contract suite on its atomic
 * multi-stream appends where the server offers them (KurrentDB 25.1 and later), and otherwise the
 * refusal to start that an older server gets.
 *
 *   ESDB_URL='kurrentdb://127.0.0.1:2113?tls=false' npx mocha test/infra/esdbEventStore.test.ts
 */

const esdbUrl = process.env.ESDB_URL;

/** What the server offers, asked once for the whole file. */
const askServer = async (url: string): Promise<AtomicAppendCheck> => {
  try {
    const { store, check } = await EsdbEventStore.connect(url);
    await store.close();
    return check;
  } catch (error) {
    if (error instanceof AtomicAppendsUnavailableError) return error.check;
    throw error;
  }
};

const skipped = (title: string, reason: string): void => {
  describe(title, () => {
    it('runs against a server named by ESDB_URL', function () {
      skipBecause(this, reason);
    });
  });
};

if (!esdbUrl) {
  skipped(
    'EventStore contract: KurrentDB, atomic multi-stream appends',
    'ESDB_URL is not set, so no EventStoreDB or KurrentDB server can be reached from this run',
  );
} else {
  const check = await askServer(esdbUrl);

  if (check.atomic) {
    eventStoreContract('KurrentDB, atomic multi-stream appends', async () => {
      const { store } = await EsdbEventStore.connect(esdbUrl);
      return { store, dispose: () => store.close() };
    });
    describe('EsdbEventStore on the atomic path', () => atomicPathTests(esdbUrl));
  } else {
    describe('EsdbEventStore on a server without atomic appends', () => {
      it('refuses to open, naming the server and the version needed', async () => {
        const refusal = await expectRejection(openEsdbEventStore(esdbUrl), AtomicAppendsUnavailableError);
        expect(refusal.message).to.include(check.reason).and.to.include('KurrentDB 25.1');
      });
    });
  }
}

function atomicPathTests(url: string): void {
  let store: EsdbEventStore;
  let raw: KurrentDBClient;

  beforeEach(async () => {
    store = (await EsdbEventStore.connect(url)).store;
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
    expect(read!.metadata.step, 'no step mark').to.equal(undefined);
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

  it('completes a step the stepped protocol left half written, and then starts', async () => {
    const step = await writeLeftStep(store, 1);
    expect((await leftStepsCheck(store, step.journal)).clean).to.equal(false);
    expect(await finishLeftSteps(store, { journal: step.journal })).to.deep.equal({
      open: 1,
      completed: 1,
      abandoned: [],
    });
    for (const stream of step.streams)
      expect((await store.readStream(stream.streamName)).map((event) => event.id)).to.deep.equal(
        stream.events.map((event) => event.id),
      );
    expect(await leftStepsCheck(store, step.journal)).to.deep.equal({ clean: true });
  });
}
