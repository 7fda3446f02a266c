import type { ConfigSections } from '../../domain/config/settings.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { configSectionsCollection, type ConfigSectionDocument } from './config.ts';

/** Every configuration section with its options as stored (text), from the config read model. */
export const configSections = async (readModels: ReadModels): Promise<ConfigSections> => {
  const sections: Record<string, Readonly<Record<string, string>>> = {};
  for await (const document of readModels.collection<ConfigSectionDocument>(configSectionsCollection).find({})) {
    sections[document.section] = document.options;
  }
  return sections;
};
