import { cliIdentity } from '../cliIdentity.ts';
import { revokeAccountSessions } from '../../commands/account/accountCommands.ts';
import { createCommandContext } from '../../commands/commandContext.ts';
import type { ServiceConfig } from '../../infra/config.ts';
import { openStores } from '../../infra/stores.ts';
import { allProjections } from '../../projections/index.ts';
import { readModelPorts } from '../../projections/readModelPorts.ts';
import { CheckpointWatcher } from '../../projections/runtime/checkpointWatcher.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';

/** How long the command waits for a running projector to apply the revocation. */
const WAIT_MS = 10_000;

/**
 * `dms admin revoke-tokens <account>`: as root, ends every session of the account (the same
 * command as `DELETE /admin/accounts/{account}/tokens`), then waits for the projections to show
 * it, after which no API process accepts those tokens.
 */
export const revokeTokensCommand = async (config: ServiceConfig, account: string): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  try {
    const readModels = new ReadModels(readStore, allProjections);
    await readModels.refresh();
    const context = createCommandContext({ eventStore, ...readModelPorts(readModels) });
    const { position } = await revokeAccountSessions(
      context,
      { account },
      { now: new Date(), account: 'root', requestId: 'cli-revoke-tokens', identity: cliIdentity() },
    );
    const applied =
      position === undefined ||
      (await new CheckpointWatcher(
        readStore,
        allProjections.map((projection) => projection.name),
      ).waitFor(position, WAIT_MS));
    console.log(
      applied
        ? `revoked every token of ${account}`
        : `recorded the revocation of ${account}'s tokens; it takes effect when the projections apply it (is a projector running?)`,
    );
    return 0;
  } catch (error) {
    if (error instanceof Error && 'exceptionClass' in error) {
      console.error(`${String(error.exceptionClass)}: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
