import { expect } from 'chai';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { eventHash } from '../../infra/eventstore/eventHashes.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { verifyHashChains } from '../../infra/eventstore/hashChains.ts';
import { EventImportError, exportEventLog, importEventLog } from '../../infra/eventstore/eventLog.ts';
import { newEvent } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';

describe('Hash chains', () => {
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

  const aHistory = async () => {
    await store.appendToStream('did-s:a', [
      newEvent('DidCreated', { name: 'a' }),
      newEvent('DidMetadataSet', { colour: 'red' }),
    ]);
    await store.appendToStream('did-s:b', [newEvent('DidCreated', { name: 'b' })]);
    await store.appendToStream('did-s:a', [newEvent('DidClosed', {})]);
  };
  const tamper = (sql: string) => {
    const raw = new Database(path);
    raw.exec(sql);
    raw.close();
  };

  describe('verify', () => {
    it('holds for a history as the store wrote it', async () => {
      await aHistory();
      const report = await verifyHashChains(store, { batchSize: 2 });
      const [newest] = await store.readEventsAt([4n]);
      expect(report).to.deep.equal({
        events: 4,
        streams: 2,
        hashed: 4,
        unhashed: 0,
        truncatedStreams: 0,
        logChain: {
          mode: 'stored',
          startsAt: 1n,
          unchained: 0,
          chained: 4,
          head: { position: 4n, logHash: newest!.logHash, events: 4 },
        },
      });
    });

    it('names the edited event: its stream, revision and position', async () => {
      await aHistory();
      tamper(`UPDATE events SET data = '{"colour":"blue"}' WHERE position = 2`);
      const { firstBreak } = await verifyHashChains(store);
      expect(firstBreak).to.include({ streamName: 'did-s:a', revision: 1n, position: 2n, reason: 'hash-mismatch' });
    });

    it('names the edited event in the log chain when it was given its matching stream hash too', async () => {
      await aHistory();
      const [created, metadataSet] = await store.readStream('did-s:a');
      const forged = { ...metadataSet!, data: { colour: 'blue' } };
      const forgedHash = eventHash(created!.metadata.hash!, forged);
      tamper(`UPDATE events SET data = '{"colour":"blue"}', hash = '${forgedHash}' WHERE position = 2`);
      const { firstBreak } = await verifyHashChains(store);
      expect(firstBreak).to.include({
        streamName: 'did-s:a',
        revision: 1n,
        position: 2n,
        reason: 'log-chain-mismatch',
      });
    });

    it('names the next event of the stream when the edited event was given its matching hash, in a log without the log chain', async () => {
      await aHistory();
      const [created, metadataSet] = await store.readStream('did-s:a');
      const forged = { ...metadataSet!, data: { colour: 'blue' } };
      const forgedHash = eventHash(created!.metadata.hash!, forged);
      tamper(
        `UPDATE events SET log_hash = NULL; UPDATE events SET data = '{"colour":"blue"}', hash = '${forgedHash}' WHERE position = 2`,
      );
      const { firstBreak } = await verifyHashChains(store);
      expect(firstBreak).to.include({ streamName: 'did-s:a', revision: 2n, position: 4n, reason: 'hash-mismatch' });
    });

    it('names a stream with an event taken out, in a log without the log chain', async () => {
      await aHistory();
      tamper('UPDATE events SET log_hash = NULL; DELETE FROM events WHERE position = 2');
      const { firstBreak } = await verifyHashChains(store);
      expect(firstBreak).to.include({ streamName: 'did-s:a', revision: 2n, position: 4n, reason: 'missing-events' });
    });

    it('counts events written before hashing and starts the chain at the first hashed one', async () => {
      await aHistory();
      tamper('UPDATE events SET log_hash = NULL; UPDATE events SET hash = NULL WHERE position IN (1, 2)');
      const report = await verifyHashChains(store);
      expect(report.firstBreak).to.include({ position: 4n, reason: 'hash-mismatch' });
      // Had the store been written before hashing, its first hashed event would chain from the start.
      await store.close();
      tamper('DELETE FROM events WHERE position = 4');
      store = new SqliteEventStore(path);
      await store.appendToStream('did-s:a', [newEvent('DidClosed', {})]);
      const { logChain, ...counts } = await verifyHashChains(store);
      expect(counts).to.deep.equal({ events: 4, streams: 2, hashed: 2, unhashed: 2, truncatedStreams: 0 });
      expect(logChain).to.include({ startsAt: 5n, unchained: 3, chained: 1 });
    });

    it('refuses an unhashed event after hashed ones: a hash was taken away', async () => {
      await aHistory();
      tamper('UPDATE events SET hash = NULL WHERE position = 4');
      expect((await verifyHashChains(store)).firstBreak).to.include({ position: 4n, reason: 'unhashed-after-hashed' });
    });
  });

  describe('export and import', () => {
    const linesOf = async (source: SqliteEventStore): Promise<string[]> => {
      let text = '';
      for await (const chunk of exportEventLog(source, { batchSize: 2 })) text += chunk;
      return text.trim().split('\n');
    };
    async function* fromList(lines: readonly string[]): AsyncGenerator<string> {
      yield* lines;
    }
    const intoFreshStore = async (lines: readonly string[]) => {
      const target = new SqliteEventStore(join(dir.path, `copy-${Math.random()}.sqlite`));
      try {
        const report = await importEventLog(target, fromList(lines), { chunkSize: 3 });
        return { report, events: await target.readAll({ maxCount: 100 }) };
      } finally {
        await target.close();
      }
    };

    it('copies every event with its position and hash into an empty store', async () => {
      await aHistory();
      const { report, events } = await intoFreshStore(await linesOf(store));
      expect(report).to.deep.equal({ events: 4, streams: 2, movedPositions: 0, unhashed: 0 });
      const strip = ({ recordedAt: _recordedAt, ...event }: Record<string, unknown>) => event;
      expect(events.map(strip)).to.deep.equal((await store.readAll({ maxCount: 100 })).map(strip));
    });

    it('refuses a store that is not empty', async () => {
      await aHistory();
      let failure: unknown;
      try {
        await importEventLog(store, fromList(await linesOf(store)));
      } catch (error) {
        failure = error;
      }
      expect(failure)
        .to.be.instanceOf(EventImportError)
        .with.property('message')
        .match(/not empty/);
    });

    it('refuses a log edited after its export before writing the edited event', async () => {
      await aHistory();
      const lines = await linesOf(store);
      lines[3] = lines[3]!.replace('"DidClosed"', '"DidReopened"');
      const target = new SqliteEventStore(join(dir.path, 'copy.sqlite'));
      let failure: unknown;
      try {
        await importEventLog(target, fromList(lines), { chunkSize: 1 });
      } catch (error) {
        failure = error;
      }
      expect(failure)
        .to.be.instanceOf(EventImportError)
        .with.property('message')
        .match(/^Line 4: stream did-s:a, revision 2/);
      expect(await target.readAll({ maxCount: 100 })).to.have.length(3);
      await target.close();
    });

    it('refuses a log with a whole stream taken out of its middle, at the line after it', async () => {
      await aHistory();
      const lines = await linesOf(store);
      let failure: unknown;
      try {
        await intoFreshStore([...lines.slice(0, 2), ...lines.slice(3)]);
      } catch (error) {
        failure = error;
      }
      expect(failure)
        .to.be.instanceOf(EventImportError)
        .with.property('message')
        .match(/^Line 3: the log chain: .* between position 2 and it/);
    });

    it('gives hashes to events exported before hashing', async () => {
      await aHistory();
      const lines = (await linesOf(store)).map((line) => {
        const event = JSON.parse(line) as { metadata: Record<string, unknown>; logHash?: string };
        delete event.metadata.hash;
        delete event.logHash;
        return JSON.stringify(event);
      });
      const { report, events } = await intoFreshStore(lines);
      expect(report.unhashed).to.equal(4);
      expect(events.every((event) => typeof event.metadata.hash === 'string')).to.equal(true);
    });
  });
});
