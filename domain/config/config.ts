import { eventTypes, type Event } from '../shared/event.ts';

/** All configuration lives in one stream: it is small and changes rarely. */
export const CONFIG_STREAM = 'config';

export type ConfigOptionSet = Event<'ConfigOptionSet', { section: string; option: string; value: string }>;
export type ConfigOptionRemoved = Event<'ConfigOptionRemoved', { section: string; option: string }>;
export type ConfigSectionRemoved = Event<'ConfigSectionRemoved', { section: string }>;
export type ConfigEvent = ConfigOptionSet | ConfigOptionRemoved | ConfigSectionRemoved;

export const CONFIG_EVENT_TYPES = eventTypes<ConfigEvent>({
  ConfigOptionSet: true,
  ConfigOptionRemoved: true,
  ConfigSectionRemoved: true,
});

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
      return {
        ...state,
        sections: Object.keys(options).length > 0 ? { ...others, [event.data.section]: options } : others,
      };
    }
    case 'ConfigSectionRemoved': {
      const { [event.data.section]: _removed, ...sections } = state.sections;
      return { ...state, sections };
    }
    default:
      return state;
  }
};
