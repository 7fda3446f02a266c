import { settingValue, type ConfigSections, type Setting } from '../../domain/config/settings.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { configSectionsCollection, type ConfigSectionDocument } from './configProjection.ts';

/** Every configuration section with its options as stored (text), from the config read model. */
export const configSections = async (readModels: ReadModels): Promise<ConfigSections> => {
  const sections: Record<string, Readonly<Record<string, string>>> = {};
  for await (const document of readModels.collection<ConfigSectionDocument>(configSectionsCollection).find({})) {
    sections[document.section] = document.options;
  }
  return sections;
};

const sectionsCollection = (readModels: ReadModels) =>
  readModels.collection<ConfigSectionDocument>(configSectionsCollection);

/** Every section, by name. */
export const configSectionsByName = (readModels: ReadModels): AsyncIterable<ConfigSectionDocument> =>
  sectionsCollection(readModels).find({}, { sort: { _id: 1 } });

export const configSection = (readModels: ReadModels, section: string): Promise<ConfigSectionDocument | null> =>
  sectionsCollection(readModels).get(section);

/** One option's stored text; undefined when the section or the option is missing. */
export const configOption = async (
  readModels: ReadModels,
  section: string,
  option: string,
): Promise<string | undefined> => {
  const options = (await configSection(readModels, section))?.options;
  return options && Object.hasOwn(options, option) ? options[option] : undefined;
};

/** One declared setting's value in force (domain/config/settings.ts), from its section alone. */
export const configSetting = async <T>(readModels: ReadModels, setting: Setting<T>): Promise<T> => {
  const options = (await configSection(readModels, setting.section))?.options;
  return settingValue(options ? { [setting.section]: options } : {}, setting);
};
