import { ensureRootAccount } from '../../commands/account/rootAccount.ts';
import { createCommandContext } from '../../commands/commandContext.ts';
import { readModelPorts } from '../../projections/readModelPorts.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { openStores } from '../../infra/stores.ts';

/** Creates the root account and identity from DMS_ROOT_* when they do not exist yet. */
export const bootstrapCommand = async (config: ServiceConfig): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  const readModels = await ReadModels.open(config, readStore);
  try {
    const outcome = await ensureRootAccount(
      createCommandContext({ eventStore, ...readModelPorts(readModels) }),
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
    await readModels.close();
    await readStore.close();
  }
};
