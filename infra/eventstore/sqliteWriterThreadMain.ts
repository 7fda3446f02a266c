import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage, isRecord } from '../typeGuards.ts';
import { appendFailureOf, parseStreamAppends } from './forwardedAppends.ts';
import { SqliteLogWriter } from './sqliteLogWriter.ts';
import type { StreamAppend } from './eventStore.ts';
import { enterWalMode } from '../sqliteWal.ts';

/**
 * The thread that writes the SQLite event log for a store opened with `writerThread`
 * (sqliteEventStore.ts, sqliteWriterThread.ts): it commits each group it is sent, fsync included,
 * and answers each caller's results or failure. The store has created the schema already.
 */
const port = parentPort!;
const settings = isRecord(workerData) ? workerData : {};
if (typeof settings.path !== 'string') throw new Error('The log writer thread needs the path of the log');
const db = new Database(settings.path);
db.pragma('busy_timeout = 5000');
enterWalMode(db);
// FULL: the WAL is synced at every commit, so an acknowledged append survives a power cut.
db.pragma('synchronous = FULL');
if (typeof settings.autocheckpointPages === 'number') db.pragma(`wal_autocheckpoint = ${settings.autocheckpointPages}`);
const writer = new SqliteLogWriter(db);

const parseGroup = (value: unknown): StreamAppend[][] | undefined => {
  if (!Array.isArray(value)) return undefined;
  const group: StreamAppend[][] = [];
  for (const item of value) {
    const appends = parseStreamAppends(item);
    if (!appends) return undefined;
    group.push(appends);
  }
  return group;
};

/** Groups received and not yet committed: what arrived during a commit makes the next one. */
const queued: { id: number; group: StreamAppend[][] }[] = [];
let transaction = 0;

const commitQueued = (): void => {
  const batch = queued.splice(0);
  if (batch.length === 0) return;
  transaction += 1;
  const started = process.hrtime.bigint();
  let outcomes: ReturnType<SqliteLogWriter['commitGroup']>;
  try {
    outcomes = writer.commitGroup(batch.flatMap((item) => item.group));
  } catch (error) {
    for (const { id } of batch) port.postMessage({ id, failed: errorMessage(error) });
    return;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  let next = 0;
  for (const { id, group } of batch) {
    const own = outcomes
      .slice(next, (next += group.length))
      .map((outcome) => ('results' in outcome ? outcome : { failure: appendFailureOf(outcome.error) }));
    port.postMessage({ id, outcomes: own, transaction, seconds });
  }
};

port.on('message', (message: unknown) => {
  if (message === 'stop') {
    // Whatever was sent before is committed and answered first.
    commitQueued();
    writer.close();
    port.close();
    return;
  }
  if (!isRecord(message) || typeof message.id !== 'number') return;
  const group = parseGroup(message.group);
  if (!group) {
    port.postMessage({ id: message.id, failed: 'malformed appends' });
    return;
  }
  queued.push({ id: message.id, group });
  // After every message already waiting has been received: one transaction, one fsync for all.
  if (queued.length === 1) setImmediate(commitQueued);
});
