import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createCommandContext } from '../commands/commandContext.ts';
import { handleCommand } from '../commands/handleCommand.ts';
import { timeOrderedUuid } from '../infra/eventstore/eventIds.ts';
import { SqliteReadStore } from '../infra/readstore/sqlite/sqliteReadStore.ts';
import { readModelPorts } from '../projections/readModelPorts.ts';
import { ReadModels } from '../projections/runtime/readModels.ts';
import { accountStreamName } from '../domain/account/account.ts';
import { accountDecider } from '../domain/account/accountDecider.ts';
import { SqliteEventStore } from '../infra/eventstore/sqliteEventStore.ts';
import { perSecond, printTable, timed, type Row } from './lib/report.ts';
import { tempDir } from './lib/tempDir.ts';

const metadata = { account: 'root', requestId: 'bench', at: new Date().toISOString(), schemaVersion: 1 };
const data = { account: 'someone', accountType: 'USER', email: 'someone@example.org', createdAt: metadata.at };

/** An `events` table shaped like the event store's, with the same file settings and the same (time-ordered) event ids, for raw inserts. */
export const rawEventTable = (path: string) => {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(
    'CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, stream TEXT NOT NULL, revision INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, recorded_at TEXT NOT NULL);' +
      'CREATE UNIQUE INDEX events_by_id ON events (event_id); CREATE UNIQUE INDEX events_by_stream ON events (stream, revision);',
  );
  const insert = db.prepare(
    'INSERT INTO events (event_id, stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertOne = (index: number) =>
    insert.run(
      timeOrderedUuid(),
      `raw-${index}`,
      0,
      'AccountCreated',
      JSON.stringify(data),
      JSON.stringify(metadata),
      metadata.at,
    );
  return { db, insertOne };
};

/** Rows per second inserting `count` rows 1000 per commit, stream names numbered from `from`. */
export const rawBatchRate = (raw: ReturnType<typeof rawEventTable>, from: number, count: number): number => {
  const start = process.hrtime.bigint();
  for (let first = 0; first < count; first += 1000) {
    raw.db
      .transaction(() => {
        for (let index = first; index < first + 1000; index += 1) raw.insertOne(from + index);
      })
      .immediate();
  }
  return perSecond(count, Number(process.hrtime.bigint() - start) / 1e6);
};

/**
 * The baseline the service's benchmarks compare against, measured in their own run: 100 000 raw
 * rows, 1000 per commit, in a scratch file.
 */
export const rawBaselineRate = (): { name: string; value: number } => {
  const dir = tempDir();
  const raw = rawEventTable(join(dir.path, 'raw.sqlite'));
  try {
    return { name: 'raw SQLite, 1000 rows per commit', value: rawBatchRate(raw, 0, 100_000) };
  } finally {
    raw.db.close();
    dir.dispose();
  }
};

/**
 * Event-store append rates against raw SQLite inserts of the same rows, same file settings, in the
 * same run. Durable appends (one commit each) are bounded by fsync; batched appends show the cost
 * of our bookkeeping (idempotence check, revision check, JSON) per event.
 */
export const runAppendRates = async (): Promise<void> => {
  const dir = tempDir();
  const rows: Row[] = [];
  try {
    const raw = rawEventTable(join(dir.path, 'raw.sqlite'));
    const single = 3000;
    const rawSingleMs = await timed(() => {
      for (let index = 0; index < single; index += 1) raw.db.transaction(() => raw.insertOne(index)).immediate();
    });
    const rawSingle = { name: 'raw SQLite, 1 row per commit', value: perSecond(single, rawSingleMs) };
    const batched = 100_000;
    const rawBatch = { name: 'raw SQLite, 1000 rows per commit', value: rawBatchRate(raw, single, batched) };
    raw.db.close();

    const store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const event = () => ({ id: timeOrderedUuid(), type: 'AccountCreated', data, metadata });
    const storeSingleMs = await timed(async () => {
      for (let index = 0; index < single; index += 1)
        await store.appendToStream(`one-${index}`, [event()], 'no_stream');
    });
    const storeBatchMs = await timed(async () => {
      for (let start = 0; start < batched; start += 1000) {
        await store.appendToStreams(
          Array.from({ length: 1000 }, (_, offset) => ({
            streamName: `bulk-${start + offset}`,
            events: [event()],
            expectedRevision: 'no_stream' as const,
          })),
        );
      }
    });
    const readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'));
    const context = createCommandContext({
      eventStore: store,
      ...readModelPorts(ReadModels.in(readStore)),
    });
    const commands = 2000;
    const now = new Date();
    const handlerMs = await timed(async () => {
      for (let index = 0; index < commands; index += 1) {
        const account = `bench${index}`;
        await handleCommand(context, accountDecider, accountStreamName(account), {
          type: 'CreateAccount',
          data: { account, accountType: 'USER', email: null },
          metadata: { now, account: 'root', requestId: 'b' },
        });
      }
    });
    await store.close();
    await readStore.close();

    rows.push({ ...rawSingle, unit: 'rows/s' });
    rows.push({
      name: 'event store append, 1 event per append',
      value: perSecond(single, storeSingleMs),
      unit: 'events/s',
      baseline: rawSingle,
    });
    rows.push({
      name: 'command handler, create account',
      value: perSecond(commands, handlerMs),
      unit: 'commands/s',
      baseline: rawSingle,
    });
    rows.push({ ...rawBatch, unit: 'rows/s' });
    rows.push({
      name: 'event store, 1000 streams per append',
      value: perSecond(batched, storeBatchMs),
      unit: 'events/s',
      baseline: rawBatch,
    });
    printTable('Event store appends (SQLite, WAL, synchronous=FULL)', rows);
  } finally {
    dir.dispose();
  }
};
