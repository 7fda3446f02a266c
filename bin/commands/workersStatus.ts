import { settingValue } from '../../domain/config/settings.ts';
import type { ServiceConfig } from '../../infra/config.ts';
import { findRedisUrl } from '../../infra/queue/redisUrlFile.ts';
import { openStores } from '../../infra/stores.ts';
import { configSections } from '../../projections/config/configQueries.ts';
import { allProjections } from '../../projections/index.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { reactsTo } from '../../workers/role.ts';
import { RoleStatusStore } from '../../workers/roleStatus.ts';
import { allRoles } from '../../workers/roles.ts';
import { printTable } from './table.ts';

/**
 * Prints every daemon role: its trigger (events, or the interval `/config` gives), its queue
 * (waiting, active, delayed, failed, completed jobs) and its last cycle: when, how long, what it
 * did and what it skipped, or the error it failed with. `--json` prints the same as one document.
 */
export const workersStatusCommand = async (
  config: ServiceConfig,
  options: Readonly<{ json?: boolean }> = {},
): Promise<number> => {
  const redisUrl = findRedisUrl(config.redisUrl, config.dataDir);
  if (!redisUrl) {
    console.error(
      'No Redis to ask: set REDIS_URL, or start `dms serve` (which runs a private redis-server) with this DMS_DATA_DIR.',
    );
    return 1;
  }
  const { eventStore, readStore } = await openStores(config);
  const status = new RoleStatusStore(redisUrl, config.queuePrefix);
  try {
    const readModels = new ReadModels(readStore, allProjections);
    await readModels.refresh();
    const sections = await configSections(readModels);
    const roles = await status.statusOf(allRoles);
    const rows = roles.map((role) => {
      const definition = allRoles.find((candidate) => candidate.name === role.role)!;
      const shown =
        definition.kind === 'scheduled'
          ? (definition.settings ?? []).map((setting) => `${setting.option} ${String(settingValue(sections, setting))}`)
          : [];
      const trigger =
        definition.kind === 'scheduled'
          ? `every ${settingValue(sections, definition.interval)} s${shown.length > 0 ? ` (${shown.join(', ')})` : ''}`
          : reactsTo(definition).join(', ');
      return { ...role, trigger };
    });
    if (options.json) {
      console.log(JSON.stringify(rows, null, 2));
      return 0;
    }
    const table = [['role', 'trigger', 'waiting', 'active', 'delayed', 'failed', 'completed', 'last cycle']];
    for (const row of rows) {
      const last = row.lastCycle;
      const lastText = !last
        ? 'never ran'
        : `${last.startedAt} (${last.durationMs} ms): ${last.error ? `failed: ${last.error}` : `did ${last.done}, skipped ${last.skipped}`}`;
      const { waiting, active, delayed, failed, completed } = row.counts;
      table.push([
        row.role,
        row.trigger,
        String(waiting),
        String(active),
        String(delayed),
        String(failed),
        String(completed),
        lastText,
      ]);
    }
    printTable(table);
    for (const row of rows) {
      if (row.lastCycle?.detail) console.log(`  ${row.role} did: ${row.lastCycle.detail}`);
      for (const skipped of row.lastCycle?.skippedSample ?? [])
        console.log(`  ${row.role} skipped ${skipped.what}: ${skipped.reason}`);
      if (row.nextRunAt) console.log(`  ${row.role} next runs at ${row.nextRunAt}`);
    }
    return 0;
  } finally {
    await status.close();
    await eventStore.close();
    await readStore.close();
  }
};
