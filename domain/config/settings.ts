import { DOMAIN_AREAS } from '../areas.ts';
import type { Setting } from './settingKinds.ts';

export { settingValue, type ConfigSections, type Setting } from './settingKinds.ts';

/**
 * Every option the service reads, by the name code reads it with (`SETTINGS.undertakerInterval`).
 * Each area declares its own, in its folder (`undertakerSettings.ts`, `conveyorSettings.ts`, ...,
 * with the kinds of option of settingKinds.ts), and names them in its declaration; this is their
 * fold over the list of areas (domain/areas.ts), so a name declared twice does not load.
 */
export const SETTINGS = DOMAIN_AREAS.settings;

const SETTING_BY_OPTION: ReadonlyMap<string, Setting<unknown>> = new Map(
  Object.values(SETTINGS).map((setting: Setting<unknown>) => [`${setting.section}\u0000${setting.option}`, setting]),
);

/** The declared setting of an option; undefined for free-form options. */
export const declaredSetting = (section: string, option: string): Setting<unknown> | undefined =>
  SETTING_BY_OPTION.get(`${section}\u0000${option}`);

/** Why the text cannot be stored for the option (what it takes), or undefined when it can. */
export const settingProblem = (section: string, option: string, value: string): string | undefined => {
  const setting = declaredSetting(section, option);
  return setting && !setting.accepts(value) ? `expected ${setting.allowed}` : undefined;
};
