import { ensureRootAccount } from '../../commands/bootstrap.ts';
import { createCommandContext } from '../../commands/commandContext.ts';
import { allProjections } from '../../projections/index.ts';
import { readModelPorts } from '../../projections/readModelPorts.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import type { ServiceConfig } from '../../infra/config.ts';
import { openStores } from '../../infra/stores.ts';

/** Creates the root account and identity from DMS_ROOT_* when they do not exist yet. */
export const bootstrapCommand = async (config: ServiceConfig): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  try {
    const outcome = await ensureRootAccount(
      createCommandContext({ eventStore, ...readModelPorts(new ReadModels(readStore, allProjections)) }),
      {
        username: config.rootUsername,
        password: config.rootPassword,
        email: config.rootEmail,
      },
      new Date(),
    );
    console.log(
      outcome === 'created'
        ? `created the root account with userpass identity ${config.rootUsername}`
        : 'the root account exists already',
    );
    return 0;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
