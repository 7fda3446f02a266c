import type { CommandContext } from '../commands/commandContext.ts';
import type { ConfigSections } from '../domain/config/settings.ts';
import type { Logger } from '../infra/logger.ts';
import { configSections } from '../projections/config/configQueries.ts';
import type { ReadModels } from '../projections/runtime/readModels.ts';

/**
 * What a daemon role works with: the command layer (the only way it changes anything), the read
 * models for the facts its workflow needs, the configuration, and a logger. Built once per process
 * by bin/runtime.ts; workers never see the HTTP layer.
 */
export type WorkerContext = Readonly<{
  commands: CommandContext;
  readModels: ReadModels;
  logger: Logger;
  /** The configuration (`/config`) as the read models show it now. */
  settings(): Promise<ConfigSections>;
}>;

export const createWorkerContext = (commands: CommandContext, readModels: ReadModels, logger: Logger): WorkerContext => ({
  commands,
  readModels,
  logger,
  settings: () => configSections(readModels),
});
