import { expect } from 'chai';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { verifyHashChains } from '../../infra/eventstore/hashChains.ts';
import {
  AnchorError,
  parseAnchor,
  signAnchor,
  takeAnchor,
  trustAnchor,
  type LogAnchor,
} from '../../infra/eventstore/logAnchor.ts';
import { newEvent } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * The log chain and anchors (infra/eventstore/logChain.ts, logAnchor.ts): every cut the streams'
 * chains cannot see is named, by the log chain inside the log and by an anchor at its end.
 */
describe('The log chain', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let path: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = makeTempDir();
    path = join(dir.path, 'events.sqlite');
    store = new SqliteEventStore(path);
  });
  afterEach(async () => {
    await store.close();
    dir.dispose();
  });

  /** Positions 1-6: an account whose sessions are revoked last, a DID stream and a scope between. */
  const aHistory = async () => {
    await store.appendToStream('account-jdoe', [newEvent('AccountCreated', { account: 'jdoe' })]);
    await store.appendToStream('did-s:a', [newEvent('DidCreated', { name: 'a' })]);
    await store.appendToStream('account-jdoe', [newEvent('AccountSessionsRevoked', {})]);
    await store.appendToStream('scope-s', [newEvent('ScopeAdded', { scope: 's' })]);
    await store.appendToStream('did-s:a', [newEvent('DidMetadataSet', { colour: 'red' })]);
    await store.appendToStream('did-s:a', [newEvent('DidClosed', {})]);
  };
  const tamper = (sql: string) => {
    const raw = new Database(path);
    raw.exec(sql);
    raw.close();
  };

  describe('inside the log', () => {
    it("names the next event when a stream's last event is removed from the middle of the log", async () => {
      await aHistory();
      tamper('DELETE FROM events WHERE position = 3');
      const { firstBreak } = await verifyHashChains(store);
      expect(firstBreak).to.include({ streamName: 'scope-s', position: 4n, reason: 'log-chain-mismatch' });
      expect(firstBreak!.detail).to.match(/between position 2 and it/);
    });

    it('names the next event when a whole stream is removed', async () => {
      await aHistory();
      tamper("DELETE FROM events WHERE stream = 'scope-s'");
      const { firstBreak } = await verifyHashChains(store);
      expect(firstBreak).to.include({ streamName: 'did-s:a', position: 5n, reason: 'log-chain-mismatch' });
      expect(firstBreak!.detail).to.match(/between position 3 and it/);
    });

    it('names the first moved event of a reordered log', async () => {
      await aHistory();
      tamper(
        'UPDATE events SET position = -position WHERE position IN (3, 4); UPDATE events SET position = 4 WHERE position = -3; UPDATE events SET position = 3 WHERE position = -4',
      );
      const { firstBreak } = await verifyHashChains(store);
      expect(firstBreak).to.include({ streamName: 'scope-s', position: 3n, reason: 'log-chain-mismatch' });
    });

    it('names the first event whose log hash was taken away', async () => {
      await aHistory();
      tamper('UPDATE events SET log_hash = NULL WHERE position >= 5');
      expect((await verifyHashChains(store)).firstBreak).to.include({
        position: 5n,
        reason: 'unchained-after-chained',
      });
    });

    it('names the first event of a chain whose first events were removed', async () => {
      await aHistory();
      tamper('DELETE FROM events WHERE position = 1');
      // The log chain names the first event left, before the account's stream (now starting at revision 1) does.
      expect((await verifyHashChains(store)).firstBreak).to.include({ position: 2n, reason: 'log-chain-mismatch' });
    });
  });

  describe('against an anchor', () => {
    const anchored = async (anchor: LogAnchor) => verifyHashChains(store, { anchor });

    it('holds for the log the anchor was taken of, and for the events written since', async () => {
      await aHistory();
      const anchor = await takeAnchor(store, 'stored');
      await store.appendToStream('scope-t', [newEvent('ScopeAdded', { scope: 't' })]);
      const report = await anchored(anchor);
      expect(report.firstBreak).to.equal(undefined);
      expect(report.anchor).to.deep.include({ position: 6n, points: 1, matched: 1 });
    });

    it('names a cut tail: the last event of a stream removed at the end of the log', async () => {
      await aHistory();
      const anchor = await takeAnchor(store, 'stored');
      tamper('DELETE FROM events WHERE position = 6');
      // Alone, every chain still holds: a chain cannot see its own end cut off.
      expect((await verifyHashChains(store)).firstBreak).to.equal(undefined);
      const { firstBreak } = await anchored(anchor);
      expect(firstBreak).to.include({ position: 6n, reason: 'cut-tail' });
      expect(firstBreak!.detail).to.match(/the log ends at position 5, .* the events after position 5 were removed/);
    });

    it('names a removed range at the end of the log', async () => {
      await aHistory();
      const anchor = await takeAnchor(store, 'stored');
      tamper('DELETE FROM events WHERE position >= 3');
      const { firstBreak } = await anchored(anchor);
      expect(firstBreak).to.include({ position: 6n, reason: 'cut-tail' });
      expect(firstBreak!.detail).to.match(/the log ends at position 2/);
    });

    it('names the anchored position when the tail was cut and new events were written after it', async () => {
      await aHistory();
      const anchor = await takeAnchor(store, 'stored');
      await store.close();
      tamper('DELETE FROM events WHERE position >= 5');
      store = new SqliteEventStore(path);
      await store.appendToStream('scope-t', [newEvent('ScopeAdded', { scope: 't' })]);
      // The store chains the new event to the cut log: the chain holds, the anchor does not.
      expect((await verifyHashChains(store)).firstBreak).to.equal(undefined);
      expect((await anchored(anchor)).firstBreak).to.include({ position: 6n, reason: 'anchor-mismatch' });
    });

    it('names a log rewritten with every hash recomputed', async () => {
      await aHistory();
      const anchor = await takeAnchor(store, 'stored');
      // Rewrite: copy the log without the revocation into a fresh store, then put the copy in place.
      const copyPath = join(dir.path, 'rewritten.sqlite');
      const copy = new SqliteEventStore(copyPath);
      for (const event of await store.readAll({ maxCount: 100 })) {
        if (event.type === 'AccountSessionsRevoked') continue;
        await copy.appendToStream(event.streamName, [event]);
      }
      await copy.appendToStream('scope-t', [newEvent('ScopeAdded', { scope: 't' })]);
      await copy.close();
      await store.close();
      store = new SqliteEventStore(copyPath);
      expect((await verifyHashChains(store)).firstBreak).to.equal(undefined);
      const { firstBreak } = await anchored(anchor);
      expect(firstBreak).to.include({ position: 6n, reason: 'anchor-mismatch' });
      expect(firstBreak!.detail).to.match(/is not the one anchored/);
    });
  });

  describe('anchors', () => {
    const key = Buffer.from('an operator key kept elsewhere');

    it('refuses to anchor a log whose newest event was written before the log chain', async () => {
      await aHistory();
      tamper('UPDATE events SET log_hash = NULL');
      let failure: unknown;
      try {
        await takeAnchor(store, 'stored');
      } catch (error) {
        failure = error;
      }
      expect(failure)
        .to.be.instanceOf(AnchorError)
        .with.property('message')
        .match(/has no log hash/);
    });

    it('trusts a signed anchor read back with its key', async () => {
      await aHistory();
      const signed = parseAnchor(JSON.stringify(signAnchor(await takeAnchor(store, 'stored'), key)));
      expect(() => trustAnchor(signed, key, 'stored')).not.to.throw();
    });

    it('refuses a signed anchor whose head was changed, or checked with another key or none', async () => {
      await aHistory();
      const signed = signAnchor(await takeAnchor(store, 'stored'), key);
      const moved = { ...signed, head: { ...signed.head, position: 5 } };
      expect(() => trustAnchor(moved, key, 'stored')).to.throw(AnchorError, /signature does not match/);
      expect(() => trustAnchor(signed, Buffer.from('another key of this length'), 'stored')).to.throw(
        AnchorError,
        /signature does not match/,
      );
      expect(() => trustAnchor(signed, undefined, 'stored')).to.throw(AnchorError, /signed: give its key/);
      const { signature: _signature, ...unsigned } = signed;
      expect(() => trustAnchor(unsigned, key, 'stored')).to.throw(AnchorError, /not signed/);
    });

    it('refuses text that is not an anchor, naming the field', () => {
      expect(() => parseAnchor('{"format":"dms-log-anchor/1","log_chain":"stored"}')).to.throw(AnchorError, /taken_at/);
      expect(() => parseAnchor('not json')).to.throw(AnchorError, /not JSON/);
    });
  });

  describe('computed, as on EventStoreDB', () => {
    const computed = (anchor?: LogAnchor) =>
      verifyHashChains(store, { logChain: 'computed', ...(anchor ? { anchor } : {}) });

    it('keeps checkpoints in the anchor and matches every one of them', async () => {
      await aHistory();
      const anchor = await takeAnchor(store, 'computed', { checkpointEvery: 2 });
      expect(anchor.checkpoints.map((point) => point.position)).to.deep.equal([2, 4]);
      expect(anchor.head).to.include({ position: 6, events: 6 });
      const report = await computed(anchor);
      expect(report.firstBreak).to.equal(undefined);
      expect(report.anchor).to.deep.include({ points: 3, matched: 3 });
    });

    it('names a cut tail', async () => {
      await aHistory();
      const anchor = await takeAnchor(store, 'computed', { checkpointEvery: 2 });
      tamper('DELETE FROM events WHERE position = 6');
      expect((await computed(anchor)).firstBreak).to.include({ position: 6n, reason: 'cut-tail' });
    });

    it("names the checkpoint after a stream's removed last event, and the one before that still matched", async () => {
      await aHistory();
      const anchor = await takeAnchor(store, 'computed', { checkpointEvery: 2 });
      tamper('DELETE FROM events WHERE position = 3');
      const { firstBreak } = await computed(anchor);
      expect(firstBreak).to.include({ position: 4n, reason: 'anchor-mismatch' });
      expect(firstBreak!.detail).to.match(/still matched the anchor at position 2/);
    });

    it('leaves the step bookkeeping streams out, whose old events $maxAge removes', async () => {
      await aHistory();
      await store.appendToStream('steps-journal', [newEvent('StepOpened', {})]);
      const anchor = await takeAnchor(store, 'computed');
      tamper("DELETE FROM events WHERE stream = 'steps-journal'");
      expect((await computed(anchor)).firstBreak).to.equal(undefined);
    });
  });
});
