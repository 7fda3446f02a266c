import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The embedded mode's private redis-server listens on a port chosen at start. Its address is
 * written into the data directory while it runs, so commands such as `dms workers status` find
 * it without REDIS_URL.
 */
const fileOf = (dataDir: string): string => join(dataDir, 'redis', 'url');

export const rememberRedisUrl = (dataDir: string, url: string): void => writeFileSync(fileOf(dataDir), `${url}\n`);

export const forgetRedisUrl = (dataDir: string): void => rmSync(fileOf(dataDir), { force: true });

/** REDIS_URL when set, else the running private server's address, else undefined. */
export const findRedisUrl = (configured: string | undefined, dataDir: string): string | undefined => {
  if (configured) return configured;
  try {
    return readFileSync(fileOf(dataDir), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
};
