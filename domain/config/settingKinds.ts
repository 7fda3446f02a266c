import { pythonPatternProblem } from '../shared/pythonRegex.ts';
import { configValueFromText } from './configValue.ts';

/**
 * The configuration options the service itself reads (`/config`), each declared once with its
 * section, option, type, range and default. The declaration is the one source of both sides: a
 * value `PUT` or `POST /config` would store is refused (`ConfigurationError`, with what the option
 * takes) unless `parse` takes it, and every reader (a command, a query, a daemon) reads the typed
 * value through `settingValue`, so what `GET /config` shows is what is in force. Options nothing
 * declares stay free-form, as Rucio's configuration is. Section and option names are Rucio's where
 * Rucio has them.
 */
export type Setting<T> = Readonly<{
  section: string;
  option: string;
  defaultValue: T;
  /** What the option takes, in words: the refusal of anything else says it. */
  allowed: string;
  /**
   * The typed value of the stored text; undefined for the empty text of a text option (the
   * default applies) and for text the option does not take (refused when stored; one stored
   * before the option was declared gives the default too).
   */
  parse(text: string): T | undefined;
  /** Whether the text may be stored (the empty text of a text option may: it means the default). */
  accepts(text: string): boolean;
}>;

/** Configuration sections as stored: section → option → text. */
export type ConfigSections = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** Text, checked by `valid` when given (an empty text means the default). */
export const text = (
  section: string,
  option: string,
  defaultValue: string,
  allowed = 'any text',
  valid: (value: string) => boolean = () => true,
): Setting<string> => ({
  section,
  option,
  defaultValue,
  allowed,
  parse: (value) => (value === '' || !valid(value) ? undefined : value),
  accepts: (value) => value === '' || valid(value),
});

/** A value of a kind other than text: `parse` says what it takes, and nothing else may be stored. */
export const typed = <T>(
  section: string,
  option: string,
  defaultValue: T,
  allowed: string,
  parse: (text: string) => T | undefined,
): Setting<T> => ({ section, option, defaultValue, allowed, parse, accepts: (value) => parse(value) !== undefined });

/** A number within bounds (Rucio's `config_get_float` with a range check). */
export const number = (
  section: string,
  option: string,
  defaultValue: number,
  min: number,
  max: number,
): Setting<number> =>
  typed(section, option, defaultValue, `a number from ${min} to ${max}`, (value) => {
    const parsed = configValueFromText(value);
    return typeof parsed === 'number' && parsed >= min && parsed <= max ? parsed : undefined;
  });

/** A whole number within bounds (Rucio's `config_get_int` with a range check): counts and sizes. */
export const integer = (
  section: string,
  option: string,
  defaultValue: number,
  min: number,
  max: number,
): Setting<number> =>
  typed(section, option, defaultValue, `a whole number from ${min} to ${max}`, (value) => {
    const parsed = configValueFromText(value);
    return typeof parsed === 'number' && Number.isInteger(parsed) && parsed >= min && parsed <= max
      ? parsed
      : undefined;
  });

export const flag = (section: string, option: string, defaultValue: boolean): Setting<boolean> =>
  typed(section, option, defaultValue, 'True or False (or 1 or 0)', (value) => {
    const parsed = configValueFromText(value);
    return typeof parsed === 'boolean' ? parsed : parsed === 1 ? true : parsed === 0 ? false : undefined;
  });

/** One of a few names. */
export const choice = (
  section: string,
  option: string,
  defaultValue: string,
  names: readonly string[],
): Setting<string> =>
  text(section, option, defaultValue, `one of ${names.join(', ')}`, (value) => names.includes(value));

/** Comma-separated Python regular expressions, each runnable on RE2 (domain/shared/pythonRegex.ts). */
export const patternList = (section: string, option: string): Setting<readonly string[]> => {
  const patterns = (value: string) =>
    value
      .split(',')
      .map((pattern) => pattern.trim())
      .filter(Boolean);
  return {
    section,
    option,
    defaultValue: [],
    allowed: 'regular expressions separated by commas, without backreferences or lookarounds (RE2)',
    parse: (value) => {
      const list = patterns(value);
      return list.every((pattern) => pythonPatternProblem(pattern) === undefined) ? list : undefined;
    },
    accepts: (value) => patterns(value).every((pattern) => pythonPatternProblem(pattern) === undefined),
  };
};

/** The value of a setting in stored configuration sections. */
export const settingValue = <T>(sections: ConfigSections, setting: Setting<T>): T => {
  const stored = sections[setting.section]?.[setting.option];
  return stored === undefined ? setting.defaultValue : (setting.parse(stored) ?? setting.defaultValue);
};
