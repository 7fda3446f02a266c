import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { openStores } from '../../infra/stores.ts';
import { transferStatus } from '../../projections/request/transferStatus.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { printTable } from './table.ts';

const counts = (states: Readonly<Record<string, number | undefined>>): string =>
  Object.entries(states)
    .map(([state, count]) => `${state} ${count}`)
    .join(', ') || 'none';

/**
 * Prints the transfers as the read models show them: active requests per state and per link, the
 * oldest request waiting in each state, and the failures of the last hour. `--json` prints the
 * same as one document.
 */
export const transfersStatusCommand = async (
  config: ServiceConfig,
  options: Readonly<{ json?: boolean; wide?: boolean }> = {},
): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  const readModels = await ReadModels.open(config, readStore);
  try {
    await readModels.refresh();
    const status = await transferStatus(readModels, new Date());
    if (options.json) {
      console.log(JSON.stringify(status, null, 2));
      return 0;
    }
    console.log(`requests: ${counts(status.states)}`);
    if (status.links.length > 0) {
      printTable(
        [
          ['source', 'destination', 'requests'],
          ...status.links.map((link) => [link.source, link.destination, counts(link.states)]),
        ],
        options,
      );
    }
    for (const oldest of status.oldestWaiting) {
      console.log(
        `oldest ${oldest.state}: ${oldest.scope}:${oldest.name} to ${oldest.destination}, requested ${oldest.requestedAt} (${oldest.requestId})`,
      );
    }
    const failed = status.failuresLastHour;
    console.log(`last hour: archived failures ${counts(failed.archived)}`);
    for (const link of failed.transfersFailed)
      console.log(`  ${link.files} transfers failed ${link.source} -> ${link.destination} (${link.activity})`);
    return 0;
  } finally {
    await eventStore.close();
    await readModels.close();
    await readStore.close();
  }
};
