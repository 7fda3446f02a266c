import { expect } from 'chai';
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { CHAIN_START, eventHash } from '../../infra/eventstore/eventHashes.ts';
import {
  EventIdConflictError,
  WrongExpectedRevisionError,
  type RecordedEvent,
} from '../../infra/eventstore/eventStore.ts';
import { verifyHashChains } from '../../infra/eventstore/hashChains.ts';
import { LOG_CHAIN_START, logHash } from '../../infra/eventstore/logChain.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import {
  appendFailureOf,
  errorOfAppendFailure,
  ForwardingEventStore,
  parseAppendFailure,
  parseAppendResults,
  parseStreamAppends,
  type AppendChannel,
} from '../../infra/eventstore/forwardedAppends.ts';
import { deserialize, serialize } from 'node:v8';
import { newEvent, uniqueName } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { eventStoreContract } from './eventStore.contract.ts';

eventStoreContract('SQLite', async () => {
  const dir = makeTempDir();
  const store = new SqliteEventStore(join(dir.path, 'events.sqlite'), { pollIntervalMs: 20 });
  return {
    store,
    dispose: async () => {
      await store.close();
      dir.dispose();
    },
  };
});

eventStoreContract('SQLite with background WAL checkpoints', async () => {
  const dir = makeTempDir();
  const store = new SqliteEventStore(join(dir.path, 'events.sqlite'), {
    pollIntervalMs: 20,
    backgroundCheckpoints: true,
  });
  return {
    store,
    dispose: async () => {
      await store.close();
      dir.dispose();
    },
  };
});

/** As `dms serve` writes the log: commits on a thread of their own (sqliteWriterThread.ts). */
eventStoreContract('SQLite, committing on a writer thread', async () => {
  const dir = makeTempDir();
  const store = new SqliteEventStore(join(dir.path, 'events.sqlite'), {
    pollIntervalMs: 20,
    backgroundCheckpoints: true,
    writerThread: true,
  });
  return {
    store,
    dispose: async () => {
      await store.close();
      dir.dispose();
    },
  };
});

/**
 * An API worker of a `dms serve` cluster: it reads the file through its own connection and sends
 * appends to the writer; here the channel is the structured clone the cluster's IPC applies, both
 * ways, with the parsing the primary and the worker do (bin/cluster/).
 */
eventStoreContract('SQLite, appends forwarded to another connection', async () => {
  const dir = makeTempDir();
  const path = join(dir.path, 'events.sqlite');
  const writer = new SqliteEventStore(path, { pollIntervalMs: 20 });
  const crossing = <T>(value: T): unknown => deserialize(serialize(value));
  const channel: AppendChannel = {
    append: async (appends) => {
      const received = parseStreamAppends(crossing(appends));
      if (!received) throw new Error('malformed appends');
      let answer: unknown;
      try {
        answer = crossing(await writer.appendToStreams(received));
      } catch (error) {
        const failure = parseAppendFailure(crossing(appendFailureOf(error)));
        throw failure ? errorOfAppendFailure(failure) : error;
      }
      const results = parseAppendResults(answer);
      if (!results) throw new Error('malformed results');
      return results;
    },
  };
  const reader = new SqliteEventStore(path, { pollIntervalMs: 20 });
  const store = new ForwardingEventStore(reader, channel);
  return {
    store,
    dispose: async () => {
      await store.close();
      await writer.close();
      dir.dispose();
    },
  };
});

describe('SqliteEventStore specifics', () => {
  let dir: ReturnType<typeof makeTempDir>;
  beforeEach(() => (dir = makeTempDir()));
  afterEach(() => dir.dispose());

  it('commits in WAL mode with synchronous=FULL, so an acknowledged append is on disk', async () => {
    const path = join(dir.path, 'events.sqlite');
    const store = new SqliteEventStore(path);
    expect(store.synchronousLevel()).to.equal(2);
    await store.appendToStream('durable-1', [newEvent('A')]);
    await store.close();

    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).to.equal('wal');
    raw.close();
    const reopened = new SqliteEventStore(path);
    expect((await reopened.readStream('durable-1')).map((e) => e.type)).to.deep.equal(['A']);
    await reopened.close();
  });

  it('writes nothing of a multi-stream append when one stream conflicts', async () => {
    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const taken = uniqueName('taken-');
    await store.appendToStream(taken, [newEvent('A')]);
    const fresh = uniqueName('fresh-');
    let failure: unknown;
    try {
      await store.appendToStreams([
        { streamName: fresh, events: [newEvent('B')], expectedRevision: 'no_stream' },
        { streamName: taken, events: [newEvent('C')], expectedRevision: 'no_stream' },
      ]);
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(WrongExpectedRevisionError);
    expect(await store.readStream(fresh)).to.deep.equal([]);
    expect(await store.headPosition()).to.equal(1n);
    await store.close();
  });

  it('commits appends of the same tick together, failing only the one with a stale revision', async () => {
    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const taken = uniqueName('taken-');
    await store.appendToStream(taken, [newEvent('A')]);
    const streams = [uniqueName('g-'), uniqueName('g-'), uniqueName('g-')];
    const before = store.commitStats();
    const outcomes = await Promise.allSettled([
      store.appendToStream(streams[0]!, [newEvent('One')], 'no_stream'),
      store.appendToStream(taken, [newEvent('Stale')], 'no_stream'),
      store.appendToStream(streams[1]!, [newEvent('Two')], 'no_stream'),
      store.appendToStreams([{ streamName: streams[2]!, events: [newEvent('Three'), newEvent('Four')] }]),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    // One transaction, one fsync, for the four callers.
    const after = store.commitStats();
    expect([after.commits - before.commits, after.appends - before.appends]).to.deep.equal([1, 4]);
    expect((outcomes[1] as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedRevisionError);
    expect(await store.readStream(taken)).to.have.length(1);
    expect((await store.readAll({ maxCount: 10 })).map((event) => event.type)).to.deep.equal([
      'A',
      'One',
      'Two',
      'Three',
      'Four',
    ]);
    await store.close();
  });

  it('on a writer thread, commits appends of the same tick together, failing only the stale one', async () => {
    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'), { writerThread: true });
    const taken = uniqueName('taken-');
    await store.appendToStream(taken, [newEvent('A')]);
    const before = store.commitStats();
    const outcomes = await Promise.allSettled([
      store.appendToStream(uniqueName('next-'), [newEvent('One')], 'no_stream'),
      store.appendToStream(taken, [newEvent('Stale')], 'no_stream'),
      store.appendToStreams([{ streamName: uniqueName('next-'), events: [newEvent('Two'), newEvent('Three')] }]),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    // The refusal keeps its class across the thread: the command handler decides again on it.
    expect((outcomes[1] as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedRevisionError);
    const after = store.commitStats();
    expect([after.commits - before.commits, after.appends - before.appends]).to.deep.equal([1, 3]);
    expect(await store.readStream(taken)).to.have.length(1);
    expect((await store.readAll({ maxCount: 10 })).map((event) => event.type)).to.deep.equal([
      'A',
      'One',
      'Two',
      'Three',
    ]);
    await store.close();
  });

  it('on a writer thread, commits a large group after the small ones before it, in their order', async () => {
    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'), { writerThread: true });
    const small = uniqueName('small-');
    const large = uniqueName('large-');
    const first = store.appendToStream(small, [newEvent('Small')]);
    // The small group is on its way to the thread; the large one (written on this thread) waits for it.
    await new Promise((resolve) => setImmediate(resolve));
    const second = store.appendToStream(
      large,
      Array.from({ length: 200 }, () => newEvent('Large')),
    );
    const [one, two] = await Promise.all([first, second]);
    expect(two.position).to.equal(one.position + 200n);
    expect(await store.readStream(large)).to.have.length(200);
    await store.close();
  });

  it('refuses a batch of which only some event ids are stored', async () => {
    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const stream = uniqueName('partial-');
    const stored = newEvent('A');
    await store.appendToStream(stream, [stored]);
    let failure: unknown;
    try {
      await store.appendToStream(stream, [stored, newEvent('B')]);
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(EventIdConflictError);
    expect(await store.readStream(stream)).to.have.length(1);
    await store.close();
  });

  it('copies committed pages into the database file from the background checkpointer', async () => {
    const path = join(dir.path, 'events.sqlite');
    const store = new SqliteEventStore(path, { backgroundCheckpoints: true });
    const sizeBefore = statSync(path).size;
    const stream = uniqueName('checkpointed');
    await store.appendToStream(
      stream,
      Array.from({ length: 500 }, () => newEvent('Padded', { padding: 'x'.repeat(2000) })),
    );
    // The writer's own automatic checkpoint is pushed to 64 MiB, so only the worker thread can grow the file.
    const deadline = Date.now() + 5000;
    while (statSync(path).size <= sizeBefore + 500 * 2000 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(statSync(path).size).to.be.greaterThan(sizeBefore + 500 * 2000);
    await store.close();
    const reopened = new SqliteEventStore(path);
    expect(await reopened.readStream(stream)).to.have.length(500);
    await reopened.close();
  });

  it('closes stores with background checkpoints in a process that has nothing else to wait for', () => {
    const fixture = join(import.meta.dirname, '..', 'fixtures', 'closeStoresAndExit.ts');
    const result = spawnSync(process.execPath, ['--import', 'tsx', fixture, dir.path], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(result.stderr).to.equal('');
    expect(result.stdout.trim()).to.equal('closed');
    expect(result.status).to.equal(0);
  });

  describe('hashes', () => {
    const expectChainedFrom = (start: string, events: readonly RecordedEvent[]): void => {
      let previous = start;
      for (const event of events) {
        expect(event.metadata.hash, `hash of revision ${event.revision}`).to.equal(eventHash(previous, event));
        previous = event.metadata.hash!;
      }
    };

    it('chains appends to one stream committed together in one tick', async () => {
      const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
      const stream = uniqueName('group-');
      await Promise.all([
        store.appendToStream(stream, [newEvent('A')]),
        store.appendToStream(stream, [newEvent('B'), newEvent('C')]),
        store.appendToStreams([{ streamName: stream, events: [newEvent('D')] }]),
      ]);
      const events = await store.readStream(stream);
      expect(events.map((event) => event.type)).to.deep.equal(['A', 'B', 'C', 'D']);
      expectChainedFrom(CHAIN_START, events);
      await store.close();
    });

    it('chains the next append to what stayed when a caller of the same commit was refused', async () => {
      const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
      const stream = uniqueName('rolled-back-');
      const other = uniqueName('taken-');
      await store.appendToStream(other, [newEvent('Taken')]);
      const outcomes = await Promise.allSettled([
        store.appendToStream(stream, [newEvent('A')]),
        // Writes to `stream` first, then fails on `other`: its savepoint takes B away again.
        store.appendToStreams([
          { streamName: stream, events: [newEvent('B')] },
          { streamName: other, events: [newEvent('Stale')], expectedRevision: 'no_stream' },
        ]),
        store.appendToStream(stream, [newEvent('C')]),
      ]);
      expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
      const events = await store.readStream(stream);
      expect(events.map((event) => event.type)).to.deep.equal(['A', 'C']);
      expectChainedFrom(CHAIN_START, events);
      // The log chain went back with the savepoint too: C follows A in it.
      const log = await store.readAll({ maxCount: 10 });
      expect(log.map((event) => event.type)).to.deep.equal(['Taken', 'A', 'C']);
      expect((await verifyHashChains(store)).firstBreak).to.equal(undefined);
      await store.close();
    });

    it('opens a file written before hashing: its events stay unhashed and new ones start a chain', async () => {
      const path = join(dir.path, 'events.sqlite');
      const old = new Database(path);
      old.exec(`
        CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, stream TEXT NOT NULL,
          revision INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, recorded_at TEXT NOT NULL);
        CREATE UNIQUE INDEX events_by_id ON events (event_id);
        CREATE UNIQUE INDEX events_by_stream ON events (stream, revision);
      `);
      const before = newEvent('Old');
      old
        .prepare(
          'INSERT INTO events (event_id, stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, 0, ?, ?, ?, ?)',
        )
        .run(before.id, 'old-1', before.type, '{}', JSON.stringify(before.metadata), new Date().toISOString());
      old.close();

      const store = new SqliteEventStore(path);
      await store.appendToStream('old-1', [newEvent('New')], 0n);
      const [unhashed, hashed] = await store.readStream('old-1');
      expect(unhashed!.metadata).to.deep.equal(before.metadata);
      expectChainedFrom(CHAIN_START, [hashed!]);
      // The log chain starts at the first event written after, too.
      expect(unhashed!.logHash).to.equal(undefined);
      expect(hashed!.logHash).to.equal(logHash(LOG_CHAIN_START, hashed!.metadata.hash!));
      await store.close();
    });
  });
});
