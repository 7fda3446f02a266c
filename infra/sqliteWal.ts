import type Database from 'better-sqlite3';
import { errorCode } from './typeGuards.ts';

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Puts a connection in WAL mode, waiting for its turn. The switch takes an exclusive lock, and
 * when several processes open a new file at once SQLite can answer SQLITE_BUSY at once, without
 * calling the busy handler (another connection is recovering or switching the same file), so
 * the busy timeout alone does not cover it. The connections are opened synchronously at start,
 * so the waits between tries are short synchronous sleeps, up to `timeoutMs` in all.
 */
export const enterWalMode = (connection: Database.Database, timeoutMs = 5000): void => {
  const deadline = Date.now() + timeoutMs;
  for (let delayMs = 1; ; delayMs = Math.min(delayMs * 2, 50)) {
    try {
      connection.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if (!(errorCode(error)?.startsWith('SQLITE_BUSY') ?? false) || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, delayMs);
    }
  }
};
