import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDataDirLocked } from '../dataDirLock.ts';

/**
 * The embedded mode's private redis-server listens on a port chosen at start. Its address is
 * written into the data directory while it runs, by the process holding the directory's `redis`
 * lock (infra/dataDirLock.ts), so commands such as `dms workers status` find it without REDIS_URL.
 */
const fileOf = (dataDir: string): string => join(dataDir, 'redis', 'url');

export const rememberRedisUrl = (dataDir: string, url: string): void => writeFileSync(fileOf(dataDir), `${url}\n`);

export const forgetRedisUrl = (dataDir: string): void => rmSync(fileOf(dataDir), { force: true });

/**
 * REDIS_URL when set, else the running private server's address, else undefined: also when the
 * file was left by a process that died (nobody holds the data directory's `redis` lock), as its
 * Redis died with it.
 */
export const findRedisUrl = (configured: string | undefined, dataDir: string): string | undefined => {
  if (configured) return configured;
  if (!isDataDirLocked(dataDir, 'redis')) return undefined;
  try {
    return readFileSync(fileOf(dataDir), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
};
