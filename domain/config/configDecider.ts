import { unknownCommand, type Decider } from '../shared/decider.ts';
import { ConfigNotFound, ConfigurationError } from '../shared/errors.ts';
import type { Command } from '../shared/event.ts';
import { evolveConfig, initialConfig, type Config, type ConfigEvent } from './config.ts';
import { settingProblem } from './settings.ts';

/**
 * Values are stored as text, as Rucio stores them (`str(value)`), and typed again when read
 * (configValue.ts). An option the service reads takes only what its declaration allows
 * (settings.ts); the others are free-form.
 */
export type SetConfigOptions = Command<
  'SetConfigOptions',
  { options: readonly { section: string; option: string; value: string }[] }
>;
export type RemoveConfigOption = Command<'RemoveConfigOption', { section: string; option: string }>;
export type RemoveConfigSection = Command<'RemoveConfigSection', { section: string }>;
export type ConfigCommand = SetConfigOptions | RemoveConfigOption | RemoveConfigSection;

export const setConfigOptions = ({ data }: SetConfigOptions, state: Config): ConfigEvent[] => {
  for (const { section, option, value } of data.options) {
    const problem = settingProblem(section, option, value);
    if (problem)
      throw new ConfigurationError(
        `Could not set value '${value.slice(0, 200)}' for section '${section}' option '${option}': ${problem}`,
      );
  }
  return data.options
    .filter(({ section, option, value }) => state.sections[section]?.[option] !== value)
    .map(({ section, option, value }) => ({ type: 'ConfigOptionSet', data: { section, option, value } }));
};

export const removeConfigOption = ({ data }: RemoveConfigOption, state: Config): ConfigEvent[] => {
  if (state.sections[data.section]?.[data.option] === undefined) {
    throw new ConfigNotFound(`No configuration found for section '${data.section}' option '${data.option}'`);
  }
  return [{ type: 'ConfigOptionRemoved', data: { section: data.section, option: data.option } }];
};

export const removeConfigSection = ({ data }: RemoveConfigSection, state: Config): ConfigEvent[] => {
  if (!state.sections[data.section]) throw new ConfigNotFound(`No configuration found for section '${data.section}'`);
  return [{ type: 'ConfigSectionRemoved', data: { section: data.section } }];
};

export const decideConfig = (command: ConfigCommand, state: Config): ConfigEvent[] => {
  switch (command.type) {
    case 'SetConfigOptions':
      return setConfigOptions(command, state);
    case 'RemoveConfigOption':
      return removeConfigOption(command, state);
    case 'RemoveConfigSection':
      return removeConfigSection(command, state);
    default:
      return unknownCommand('config', command);
  }
};

export const configDecider: Decider<Config, ConfigCommand, ConfigEvent> = {
  name: 'config',
  initialState: initialConfig,
  evolve: evolveConfig,
  decide: decideConfig,
};
