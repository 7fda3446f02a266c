import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { EnvironmentError } from './environmentError.ts';

/**
 * One writer per data directory. What only one process may do with a data directory takes a
 * lock there first, before anything is opened or started:
 *
 * - `projector-<group>`: applying events to a projection group's read models (`dms serve`,
 *   `dms projector`, each for the groups it runs: two projectors may share a directory when they
 *   run different groups);
 * - `redis`: running the directory's private redis-server (`dms serve`, `dms worker` without
 *   REDIS_URL), so `redis/url` only ever names the Redis of the process that holds it.
 *
 * The lock is the operating system's own (an exclusive SQLite transaction held open on
 * `locks/<name>.lock`, a POSIX record lock underneath): it is taken atomically, and released by
 * the kernel when its holder exits, however it dies, so there is nothing to recover by hand and
 * no process id that could be reused. Beside it, `locks/<name>.json` says who holds it (pid,
 * host, command, start, URL), for the refusal of the next one. `dms api` processes take no lock:
 * they only append events and read, which SQLite lets several processes do.
 */
export type LockName = `projector-${string}` | 'redis';

/** The lock of a projection group's writer. */
export const projectorLock = (group: string): LockName => `projector-${group}`;

export type LockHolder = Readonly<{
  pid: number;
  host: string;
  /** `dms serve`, `dms projector`, `dms worker`. */
  command: string;
  startedAt: string;
  /** The API's base URL, once it listens. */
  url?: string;
}>;

export type DataDirLock = Readonly<{
  name: LockName;
  /** Records the API's URL for whoever is refused next. */
  describe(url: string): void;
  /** Lets the next process in (also done by the kernel if this one dies). */
  release(): void;
}>;

const WHAT = (lock: LockName): string =>
  lock === 'redis'
    ? 'runs its private redis-server'
    : `applies its events to the read models of projection group ${lock.slice('projector-'.length)}`;

const REMEDY = (lock: LockName): string =>
  lock === 'redis'
    ? 'A data directory takes one private redis-server; set REDIS_URL to share a Redis between workers instead.'
    : 'A data directory takes one projector per projection group (`dms serve`, or `dms projector --groups`); `dms api` processes may share it.';

export class DataDirInUseError extends EnvironmentError {
  constructor(
    readonly dataDir: string,
    readonly lock: LockName,
    readonly holder: LockHolder | undefined,
  ) {
    const who = holder
      ? `\`${holder.command}\` (pid ${holder.pid} on ${holder.host}${holder.url ? `, API ${holder.url}` : ''}, started ${holder.startedAt})`
      : 'another process';
    const stop = holder
      ? `stop it first (kill ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`})`
      : 'stop it first';
    super(
      `The data directory ${dataDir} is in use: ${who} ${WHAT(lock)} there. ${REMEDY(lock)} ` +
        `To start this one, ${stop}, or give it another DMS_DATA_DIR.`,
    );
    this.name = 'DataDirInUseError';
  }
}

const lockDir = (dataDir: string) => join(dataDir, 'locks');

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const readHolder = (file: string): LockHolder | undefined => {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (!isRecord(parsed)) return undefined;
    const { pid, host, command, startedAt, url } = parsed;
    if (typeof pid !== 'number' || typeof host !== 'string' || typeof command !== 'string') return undefined;
    if (typeof startedAt !== 'string') return undefined;
    return { pid, host, command, startedAt, ...(typeof url === 'string' ? { url } : {}) };
  } catch {
    return undefined;
  }
};

/** The lock file's exclusive transaction, open; undefined when another connection holds it. */
const tryExclusive = (lockFile: string): Database.Database | undefined => {
  // No busy timeout: a held lock is an answer, not a wait.
  const database = new Database(lockFile, { timeout: 0 });
  try {
    database.exec('BEGIN EXCLUSIVE');
    return database;
  } catch (error) {
    database.close();
    if (isRecord(error) && error.code === 'SQLITE_BUSY') return undefined;
    throw error;
  }
};

/** Takes the lock, or throws DataDirInUseError naming the process that holds it. */
export const lockDataDir = (dataDir: string, name: LockName, command: string): DataDirLock => {
  mkdirSync(lockDir(dataDir), { recursive: true });
  const lockFile = join(lockDir(dataDir), `${name}.lock`);
  const holderFile = join(lockDir(dataDir), `${name}.json`);
  const database = tryExclusive(lockFile);
  if (!database) throw new DataDirInUseError(dataDir, name, readHolder(holderFile));
  let holder: LockHolder = { pid: process.pid, host: hostname(), command, startedAt: new Date().toISOString() };
  writeFileSync(holderFile, `${JSON.stringify(holder)}\n`);
  let held = true;
  return {
    name,
    describe(url) {
      if (!held) return;
      holder = { ...holder, url };
      writeFileSync(holderFile, `${JSON.stringify(holder)}\n`);
    },
    release() {
      if (!held) return;
      held = false;
      rmSync(holderFile, { force: true });
      database.exec('ROLLBACK');
      database.close();
    },
  };
};

/** Whether some process holds the lock now (taken and let go at once to find out). */
export const isDataDirLocked = (dataDir: string, name: LockName): boolean => {
  const lockFile = join(lockDir(dataDir), `${name}.lock`);
  if (!existsSync(lockFile)) return false;
  const database = tryExclusive(lockFile);
  if (!database) return true;
  database.exec('ROLLBACK');
  database.close();
  return false;
};
