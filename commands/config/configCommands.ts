import { CONFIG_STREAM, type Config } from '../../domain/config/config.ts';
import { configDecider, type ConfigCommand } from '../../domain/config/configDecider.ts';
import { ACCOUNT_PERMISSIONS, requirePermission, type Caller } from '../../domain/permission/policy.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { nameSchemaOf, type NameSchema } from '../../domain/shared/names.ts';
import { loadCaller } from '../caller.ts';
import { handleCommand, loadAggregate, type CommandContext } from '../handleCommand.ts';

/** The whole configuration, read from its stream (for facts commands need, such as defaults). */
export const loadConfig = (context: CommandContext): Promise<Config> =>
  loadAggregate(context, configDecider, CONFIG_STREAM);

/** The policy schema scopes and DID names follow (`policy.schema`), for the commands that create them. */
export const loadNameSchema = async (context: CommandContext): Promise<NameSchema> =>
  nameSchemaOf(settingValue((await loadConfig(context)).sections, SETTINGS.policySchema));

const onConfig = (context: CommandContext, command: ConfigCommand) =>
  handleCommand(context, configDecider, CONFIG_STREAM, command);

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
  return onConfig(context, { type: 'SetConfigOptions', data, metadata });
};

export const removeConfigOption = async (
  context: CommandContext,
  data: { section: string; option: string },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requireConfigPermission(caller, `remove option ${data.option} from section ${data.section}`);
  return onConfig(context, { type: 'RemoveConfigOption', data, metadata });
};

export const removeConfigSection = async (
  context: CommandContext,
  data: { section: string },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requireConfigPermission(caller, `remove section ${data.section}`);
  return onConfig(context, { type: 'RemoveConfigSection', data, metadata });
};
