import { expect } from 'chai';
import { WrongExpectedRevisionError, type EventStore, type RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import { CHAIN_START, eventHash } from '../../infra/eventstore/eventHashes.ts';
import { newEvent, uniqueName } from '../support/events.ts';

export type EventStoreFixture = {
  store: EventStore;
  dispose(): Promise<void>;
};

/**
 * The behaviour every event store adapter must have. Run by sqliteEventStore.test.ts always, and
 * by esdbEventStore.test.ts when ESDB_URL is set (KurrentDB's atomic multi-stream appends).
 * Every test writes to streams of its own.
 */
export const eventStoreContract = (adapterName: string, open: () => Promise<EventStoreFixture>): void => {
  describe(`EventStore contract: ${adapterName}`, () => {
    let fixture: EventStoreFixture;
    let store: EventStore;

    beforeEach(async () => {
      fixture = await open();
      store = fixture.store;
    });
    afterEach(async () => fixture.dispose());

    const expectWrongRevision = async (promise: Promise<unknown>): Promise<void> => {
      try {
        await promise;
      } catch (error) {
        expect(error).to.be.instanceOf(WrongExpectedRevisionError);
        return;
      }
      expect.fail('the append should have been refused');
    };

    describe('appendToStream', () => {
      it('creates a stream with revisions from 0 and growing global positions', async () => {
        const stream = uniqueName('contract-');
        const result = await store.appendToStream(stream, [newEvent('A'), newEvent('B')], 'no_stream');
        expect(result.nextExpectedRevision).to.equal(1n);

        const events = await store.readStream(stream);
        expect(events.map((e) => e.type)).to.deep.equal(['A', 'B']);
        expect(events.map((e) => e.revision)).to.deep.equal([0n, 1n]);
        expect(events[1]!.position > events[0]!.position).to.equal(true);
        expect(result.position).to.equal(events[1]!.position);
      });

      it('keeps data and metadata as given', async () => {
        const stream = uniqueName('contract-');
        const event = newEvent('Shaped', { name: 'f1', nested: { bytes: 12, list: [1, 'two', null] } });
        await store.appendToStream(stream, [event]);
        const [read] = await store.readStream(stream);
        expect(read!.id).to.equal(event.id);
        expect(read!.streamName).to.equal(stream);
        expect(read!.data).to.deep.equal(event.data);
        const { hash, ...metadata } = read!.metadata;
        expect(metadata).to.deep.equal(event.metadata);
        expect(hash).to.be.a('string');
        expect(read!.recordedAt).to.be.instanceOf(Date);
      });

      it('refuses no_stream when the stream exists', async () => {
        const stream = uniqueName('contract-');
        await store.appendToStream(stream, [newEvent('A')], 'no_stream');
        await expectWrongRevision(store.appendToStream(stream, [newEvent('B')], 'no_stream'));
        expect(await store.readStream(stream)).to.have.length(1);
      });

      it('refuses stream_exists when the stream does not exist', async () => {
        const stream = uniqueName('contract-');
        await expectWrongRevision(store.appendToStream(stream, [newEvent('A')], 'stream_exists'));
        expect(await store.readStream(stream)).to.deep.equal([]);
      });

      it('accepts an exact expected revision and refuses a stale one', async () => {
        const stream = uniqueName('contract-');
        const first = await store.appendToStream(stream, [newEvent('A')], 'no_stream');
        await store.appendToStream(stream, [newEvent('B')], first.nextExpectedRevision);
        await expectWrongRevision(store.appendToStream(stream, [newEvent('C')], first.nextExpectedRevision));
        await store.appendToStream(stream, [newEvent('C')], 'stream_exists');
        await store.appendToStream(stream, [newEvent('D')], 'any');
        expect((await store.readStream(stream)).map((e) => e.type)).to.deep.equal(['A', 'B', 'C', 'D']);
      });

      it('lets exactly one of two racing appends at the same revision win', async () => {
        const stream = uniqueName('contract-');
        const first = await store.appendToStream(stream, [newEvent('A')], 'no_stream');
        const outcomes = await Promise.allSettled([
          store.appendToStream(stream, [newEvent('B1')], first.nextExpectedRevision),
          store.appendToStream(stream, [newEvent('B2')], first.nextExpectedRevision),
        ]);
        expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(1);
        const rejected = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
        expect(rejected.reason).to.be.instanceOf(WrongExpectedRevisionError);
        expect(await store.readStream(stream)).to.have.length(2);
      });

      it('treats a repeated append of the same event ids as already done', async () => {
        const stream = uniqueName('contract-');
        await store.appendToStream(stream, [newEvent('Before')], 'no_stream');
        const batch = [newEvent('A'), newEvent('B')];
        const first = await store.appendToStream(stream, batch, 0n);
        const again = await store.appendToStream(stream, batch, 0n);
        expect(again.nextExpectedRevision).to.equal(first.nextExpectedRevision);
        expect((await store.readStream(stream)).map((e) => e.type)).to.deep.equal(['Before', 'A', 'B']);
      });
    });

    describe('appendToStreams', () => {
      it('appends to several streams and reports each result', async () => {
        const one = uniqueName('contract-');
        const two = uniqueName('contract-');
        const results = await store.appendToStreams([
          { streamName: one, events: [newEvent('A')], expectedRevision: 'no_stream' },
          { streamName: two, events: [newEvent('B'), newEvent('C')], expectedRevision: 'no_stream' },
        ]);
        expect(results.map((r) => r.nextExpectedRevision)).to.deep.equal([0n, 1n]);
        expect(await store.readStream(one)).to.have.length(1);
        expect(await store.readStream(two)).to.have.length(2);
      });

      it('keeps data and metadata as given in every stream', async () => {
        const one = uniqueName('contract-');
        const two = uniqueName('contract-');
        const first = newEvent('A', { name: 'f1', nested: { bytes: 12, list: [1, 'two', null] } });
        const second = newEvent('B', { adler32: '0cc737eb' });
        const caused = { ...second, metadata: { ...second.metadata, causationId: first.id, schemaVersion: 2 } };
        await store.appendToStreams([
          { streamName: one, events: [first], expectedRevision: 'no_stream' },
          { streamName: two, events: [caused], expectedRevision: 'no_stream' },
        ]);
        for (const [stream, given] of [
          [one, first],
          [two, caused],
        ] as const) {
          const [read] = await store.readStream(stream);
          expect(read!.id).to.equal(given.id);
          expect(read!.data).to.deep.equal(given.data);
          const { hash, ...metadata } = read!.metadata;
          expect(metadata).to.deep.equal(given.metadata);
          expect(hash).to.be.a('string');
        }
      });

      it('writes nothing to any stream when one of them is refused', async () => {
        const taken = uniqueName('contract-');
        await store.appendToStream(taken, [newEvent('A')], 'no_stream');
        const fresh = uniqueName('contract-');
        await expectWrongRevision(
          store.appendToStreams([
            { streamName: fresh, events: [newEvent('B')], expectedRevision: 'no_stream' },
            { streamName: taken, events: [newEvent('C')], expectedRevision: 'no_stream' },
          ]),
        );
        expect(await store.readStream(fresh)).to.deep.equal([]);
        expect((await store.readStream(taken)).map((event) => event.type)).to.deep.equal(['A']);
      });

      it('treats a repeated multi-stream append of the same event ids as already done', async () => {
        const one = uniqueName('contract-');
        const two = uniqueName('contract-');
        const appends = [
          { streamName: one, events: [newEvent('A')], expectedRevision: 'no_stream' as const },
          { streamName: two, events: [newEvent('B'), newEvent('C')], expectedRevision: 'no_stream' as const },
        ];
        const first = await store.appendToStreams(appends);
        const again = await store.appendToStreams(appends);
        expect(again.map((r) => r.nextExpectedRevision)).to.deep.equal(first.map((r) => r.nextExpectedRevision));
        expect((await store.readStream(one)).map((e) => e.type)).to.deep.equal(['A']);
        expect((await store.readStream(two)).map((e) => e.type)).to.deep.equal(['B', 'C']);
      });
    });

    describe('hashes', () => {
      /** Recomputes every hash of the stream from the one before it. */
      const expectChained = (events: readonly RecordedEvent[]): void => {
        let previous = CHAIN_START;
        for (const event of events) {
          expect(event.metadata.hash, `hash of revision ${event.revision}`).to.equal(eventHash(previous, event));
          previous = event.metadata.hash!;
        }
      };

      it('chains each event of a stream to the one before it, across appends', async () => {
        const stream = uniqueName('contract-');
        await store.appendToStream(stream, [newEvent('A', { n: 1 }), newEvent('B', { n: 2 })], 'no_stream');
        await store.appendToStream(stream, [newEvent('C', { nested: { z: 1, a: [true, null] } })], 1n);
        await store.appendToStream(stream, [newEvent('D')], 'any');
        const events = await store.readStream(stream);
        expect(events).to.have.length(4);
        expectChained(events);
      });

      it('keeps the chain of a multi-stream append per stream', async () => {
        const one = uniqueName('contract-');
        const two = uniqueName('contract-');
        await store.appendToStream(one, [newEvent('Before')]);
        await store.appendToStreams([
          { streamName: one, events: [newEvent('A')], expectedRevision: 0n },
          { streamName: two, events: [newEvent('B'), newEvent('C')], expectedRevision: 'no_stream' },
        ]);
        expectChained(await store.readStream(one));
        expectChained(await store.readStream(two));
      });

      it('answers a repeated append with the hashes of the first one', async () => {
        const stream = uniqueName('contract-');
        await store.appendToStream(stream, [newEvent('Before')], 'no_stream');
        const batch = [newEvent('A'), newEvent('B')];
        await store.appendToStream(stream, batch, 0n);
        const first = (await store.readStream(stream)).map((event) => event.metadata.hash);
        await store.appendToStream(stream, batch, 0n);
        expect((await store.readStream(stream)).map((event) => event.metadata.hash)).to.deep.equal(first);
      });

      it('ignores a hash given with an appended event', async () => {
        const stream = uniqueName('contract-');
        const event = newEvent('A');
        await store.appendToStream(stream, [{ ...event, metadata: { ...event.metadata, hash: 'forged' } }]);
        const [read] = await store.readStream(stream);
        expect(read!.metadata.hash).to.equal(eventHash(CHAIN_START, { ...read!, metadata: event.metadata }));
      });
    });

    describe('readEventsAt', () => {
      it('reads the events at the given positions in position order, leaving out positions without one', async () => {
        const stream = uniqueName('contract-');
        await store.appendToStream(
          stream,
          ['A', 'B', 'C', 'D'].map((type) => newEvent(type)),
        );
        const events = await store.readStream(stream);
        const wanted = [events[3]!.position, events[0]!.position, events[2]!.position];
        const read = await store.readEventsAt([...wanted, (await store.headPosition()) + 1_000_000n]);
        expect(read.map((event) => event.type)).to.deep.equal(['A', 'C', 'D']);
        expect(read.map((event) => event.revision)).to.deep.equal([0n, 2n, 3n]);
        expect(read[0]!.metadata.hash).to.equal(events[0]!.metadata.hash);
        expect(await store.readEventsAt([])).to.deep.equal([]);
      });
    });

    describe('streamRevision', () => {
      it('answers no_stream for a missing stream, then the revision of its last event', async () => {
        const stream = uniqueName('contract-');
        expect(await store.streamRevision(stream)).to.equal('no_stream');
        await store.appendToStream(stream, [newEvent('A'), newEvent('B')], 'no_stream');
        expect(await store.streamRevision(stream)).to.equal(1n);
        await store.appendToStream(stream, [newEvent('C')], 1n);
        expect(await store.streamRevision(stream)).to.equal(2n);
      });
    });

    describe('readStream', () => {
      it('reads from a revision and at most maxCount events; a missing stream reads empty', async () => {
        const stream = uniqueName('contract-');
        await store.appendToStream(
          stream,
          ['A', 'B', 'C', 'D'].map((t) => newEvent(t)),
        );
        const page = await store.readStream(stream, { fromRevision: 1n, maxCount: 2 });
        expect(page.map((e) => e.type)).to.deep.equal(['B', 'C']);
        expect(await store.readStream(uniqueName('missing-'))).to.deep.equal([]);
      });
    });

    describe('readAll and headPosition', () => {
      it('reads every stream in global order after a position', async () => {
        const one = uniqueName('contract-');
        const two = uniqueName('contract-');
        const start = await store.headPosition();
        await store.appendToStream(one, [newEvent('A1')]);
        await store.appendToStream(two, [newEvent('B1')]);
        await store.appendToStream(one, [newEvent('A2')]);
        const mine = (await store.readAll({ after: start, maxCount: 10_000 })).filter((e) =>
          [one, two].includes(e.streamName),
        );
        expect(mine.map((e) => e.type)).to.deep.equal(['A1', 'B1', 'A2']);
        expect(await store.headPosition()).to.equal(mine[2]!.position);
        const afterFirst = await store.readAll({ after: mine[0]!.position, maxCount: 1 });
        expect(afterFirst[0]!.position > mine[0]!.position).to.equal(true);
      });
    });

    describe('subscribeToAll', () => {
      it('catches up from a checkpoint, then delivers new events live', async () => {
        const stream = uniqueName('contract-');
        await store.appendToStream(stream, [newEvent('Old1'), newEvent('Old2')]);
        const [old1] = await store.readStream(stream);
        const subscription = store.subscribeToAll({ after: old1!.position, batchSize: 10 });
        const received: RecordedEvent[] = [];
        const done = (async () => {
          for await (const batch of subscription) {
            received.push(...batch.events.filter((e) => e.streamName === stream));
            if (received.some((e) => e.type === 'Live')) return;
          }
        })();
        // Let the subscription catch up before the live append.
        await waitUntil(() => received.length >= 1);
        await store.appendToStream(stream, [newEvent('Live')]);
        await done;
        await subscription.close();
        expect(received.map((e) => e.type)).to.deep.equal(['Old2', 'Live']);
      });

      it('delivers only the types asked for, and reads the log through the others, up to its head', async () => {
        const stream = uniqueName('contract-');
        const wanted = uniqueName('Wanted');
        const from = await store.headPosition();
        await store.appendToStream(stream, [newEvent('Other'), newEvent(wanted), newEvent('Other')]);
        const head = await store.headPosition();
        const subscription = store.subscribeToAll({ after: from, batchSize: 10, eventTypes: new Set([wanted]) });
        const received: RecordedEvent[] = [];
        let through = from;
        for await (const batch of subscription) {
          received.push(...batch.events);
          expect(batch.through >= (batch.events.at(-1)?.position ?? 0n)).to.equal(true);
          through = batch.through;
          if (through >= head) break;
        }
        await subscription.close();
        expect(received.map((event) => event.type)).to.deep.equal([wanted]);
        expect(through >= head).to.equal(true);
      });

      it('ends its iteration when closed while waiting', async () => {
        const subscription = store.subscribeToAll({ after: await store.headPosition() });
        const iteration = (async () => {
          let batches = 0;
          for await (const batch of subscription) batches += batch.events.length >= 0 ? 1 : 0;
          return batches;
        })();
        await new Promise((resolve) => setTimeout(resolve, 50));
        await subscription.close();
        expect(await iteration).to.be.a('number');
      });
    });
  });
};

export const waitUntil = async (condition: () => boolean, timeoutMs = 5000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
