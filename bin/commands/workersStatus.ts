import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { findRedisUrl } from '../../infra/queue/redisUrlFile.ts';
import { openStores } from '../../infra/stores.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { daemonStatus } from '../../workers/daemonStatus.ts';
import { allRoles } from '../../workers/roles.ts';
import { printTable, wrapLine } from './table.ts';

/**
 * Prints every daemon role: its trigger (events, or the interval `/config` gives), its queue
 * (waiting, active, delayed, failed, completed jobs: `wait act delay fail done`) and its last cycle: when, how long, what it
 * did and what it skipped, or the error it failed with. `--json` prints the same as one document.
 */
export const workersStatusCommand = async (
  config: ServiceConfig,
  options: Readonly<{ json?: boolean; wide?: boolean }> = {},
): Promise<number> => {
  const redisUrl = findRedisUrl(config.redisUrl, config.dataDir);
  if (!redisUrl) {
    console.error(
      'No Redis to ask: set REDIS_URL, or start `dms serve` (which runs a private redis-server) with this DMS_DATA_DIR.',
    );
    return 1;
  }
  const { eventStore, readStore } = await openStores(config);
  const readModels = await ReadModels.open(config, readStore);
  try {
    await readModels.refresh();
    const rows = await daemonStatus(redisUrl, config.queuePrefix, readModels, allRoles);
    if (options.json) {
      console.log(JSON.stringify(rows, null, 2));
      return 0;
    }
    // Short headers keep the table within 100 columns: the jobs waiting, active, delayed, failed and
    // completed; the last cycle's start (today's in UTC as a time) and length, what it did and skipped.
    const now = new Date().toISOString();
    const table = [['role', 'trigger', 'wait', 'act', 'delay', 'fail', 'done', 'last run', 'did', 'skip']];
    for (const row of rows) {
      const last = row.lastCycle;
      const { waiting, active, delayed, failed, completed } = row.counts;
      table.push([
        row.role,
        row.trigger,
        ...[waiting, active, delayed, failed, completed].map(String),
        last ? `${shortTime(last.startedAt, now)} ${last.durationMs} ms` : 'never',
        last && !last.error ? String(last.done) : '-',
        last && !last.error ? String(last.skipped) : '-',
      ]);
    }
    printTable(table, options);
    const say = (line: string) => wrapLine(line, options).forEach((part) => console.log(part));
    for (const row of rows) {
      if (row.lastCycle?.error) say(`  ${row.role} failed: ${row.lastCycle.error}`);
      if (row.lastCycle?.detail) say(`  ${row.role} did: ${row.lastCycle.detail}`);
      for (const skipped of row.lastCycle?.skippedSample ?? [])
        say(`  ${row.role} skipped ${skipped.what}: ${skipped.reason}`);
      if (row.nextRunAt) say(`  ${row.role} next runs at ${row.nextRunAt}`);
    }
    return 0;
  } finally {
    await eventStore.close();
    await readModels.close();
    await readStore.close();
  }
};

/** An ISO time as `07:25:27Z` when it is today (UTC), else `2026-11-20 07:25:27Z`: narrower than ISO. */
const shortTime = (iso: string, now: string): string => {
  const [day, time] = [iso.slice(0, 10), iso.slice(11, 19)];
  return day === now.slice(0, 10) ? `${time}Z` : `${day} ${time}Z`;
};
