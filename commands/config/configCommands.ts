import {
  CONFIG_STREAM,
  evolveConfig,
  initialConfig,
  removeConfigOption as decideRemoveOption,
  removeConfigSection as decideRemoveSection,
  setConfigOptions as decideSetOptions,
  type Config,
  type ConfigEvent,
} from '../../domain/config/config.ts';
import { ACCOUNT_PERMISSIONS, requirePermission, type Caller } from '../../domain/permission/policy.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { handleCommand, type Aggregate, type CommandContext } from '../handleCommand.ts';

export const configAggregate: Aggregate<Config, ConfigEvent> = { name: 'config', initialState: initialConfig, evolve: evolveConfig };

const onConfig = (context: CommandContext, metadata: CommandMetadata, decide: (state: Config) => ConfigEvent[]) =>
  handleCommand(context, { streamName: CONFIG_STREAM, aggregate: configAggregate, decide }, { metadata });

/** Reading and writing the configuration are both for admins (Rucio's perm_config). */
export const requireConfigPermission = (caller: Caller, what: string): void =>
  requirePermission(ACCOUNT_PERMISSIONS.config(caller), caller, what);

export const setConfigOptions = async (
  context: CommandContext,
  data: { options: readonly { section: string; option: string; value: string }[] },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requireConfigPermission(caller, 'set configuration options');
  return onConfig(context, metadata, (state) => decideSetOptions({ type: 'SetConfigOptions', data, metadata }, state));
};

export const removeConfigOption = async (context: CommandContext, data: { section: string; option: string }, metadata: CommandMetadata) => {
  const caller = await loadCaller(context, metadata.account);
  requireConfigPermission(caller, `remove option ${data.option} from section ${data.section}`);
  return onConfig(context, metadata, (state) => decideRemoveOption({ type: 'RemoveConfigOption', data, metadata }, state));
};

export const removeConfigSection = async (context: CommandContext, data: { section: string }, metadata: CommandMetadata) => {
  const caller = await loadCaller(context, metadata.account);
  requireConfigPermission(caller, `remove section ${data.section}`);
  return onConfig(context, metadata, (state) => decideRemoveSection({ type: 'RemoveConfigSection', data, metadata }, state));
};
