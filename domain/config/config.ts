import type { Command, Event } from '../shared/event.ts';
import { ConfigNotFound } from '../shared/errors.ts';

/** All configuration lives in one stream: it is small and changes rarely. */
export const CONFIG_STREAM = 'config';

export type ConfigOptionSet = Event<'ConfigOptionSet', { section: string; option: string; value: string }>;
export type ConfigOptionRemoved = Event<'ConfigOptionRemoved', { section: string; option: string }>;
export type ConfigSectionRemoved = Event<'ConfigSectionRemoved', { section: string }>;
export type ConfigEvent = ConfigOptionSet | ConfigOptionRemoved | ConfigSectionRemoved;

export type Config = { status: 'Configured'; sections: Readonly<Record<string, Readonly<Record<string, string>>>> };

export const initialConfig = (): Config => ({ status: 'Configured', sections: {} });

export const evolveConfig = (state: Config, event: ConfigEvent): Config => {
  switch (event.type) {
    case 'ConfigOptionSet': {
      const section = { ...(state.sections[event.data.section] ?? {}), [event.data.option]: event.data.value };
      return { ...state, sections: { ...state.sections, [event.data.section]: section } };
    }
    case 'ConfigOptionRemoved': {
      const { [event.data.option]: _removed, ...options } = state.sections[event.data.section] ?? {};
      const { [event.data.section]: _old, ...others } = state.sections;
      return { ...state, sections: Object.keys(options).length > 0 ? { ...others, [event.data.section]: options } : others };
    }
    case 'ConfigSectionRemoved': {
      const { [event.data.section]: _removed, ...sections } = state.sections;
      return { ...state, sections };
    }
    default:
      return state;
  }
};

/**
 * Values are stored as text, as Rucio stores them (`str(value)`), and typed again when read
 * (configValue.ts).
 */
export type SetConfigOptions = Command<'SetConfigOptions', { options: readonly { section: string; option: string; value: string }[] }>;
export type RemoveConfigOption = Command<'RemoveConfigOption', { section: string; option: string }>;
export type RemoveConfigSection = Command<'RemoveConfigSection', { section: string }>;
export type ConfigCommand = SetConfigOptions | RemoveConfigOption | RemoveConfigSection;

export const setConfigOptions = ({ data }: SetConfigOptions, state: Config): ConfigEvent[] =>
  data.options
    .filter(({ section, option, value }) => state.sections[section]?.[option] !== value)
    .map(({ section, option, value }) => ({ type: 'ConfigOptionSet', data: { section, option, value } }));

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
    default: {
      const unknown: never = command;
      throw new Error(`Unknown config command ${(unknown as ConfigCommand).type}`);
    }
  }
};

export const configDecider = { name: 'config', initialState: initialConfig, evolve: evolveConfig, decide: decideConfig };
