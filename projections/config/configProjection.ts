import type { ConfigEvent } from '../../domain/config/config.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';

/** One document per configuration section; values stay text as stored. */
export type ConfigSectionDocument = Projected<{ section: string; options: Record<string, string> }>;

export const configSectionsCollection: CollectionSpec = { name: 'config_sections', indexes: [] };

export const configProjection: Projection<ConfigEvent> = {
  name: 'config',
  version: 1,
  collections: [configSectionsCollection],
  handles: { ConfigOptionSet: true, ConfigOptionRemoved: true, ConfigSectionRemoved: true },
  async apply(event, context) {
    const sections = context.collection<ConfigSectionDocument>(configSectionsCollection);
    await sections.update(event.data.section, (document) => {
      switch (event.type) {
        case 'ConfigOptionSet':
          return {
            _id: event.data.section,
            section: event.data.section,
            options: { ...(document?.options ?? {}), [event.data.option]: event.data.value },
          };
        case 'ConfigOptionRemoved': {
          if (!document) return undefined;
          const { [event.data.option]: _removed, ...options } = document.options;
          return Object.keys(options).length > 0 ? { ...document, options } : null;
        }
        case 'ConfigSectionRemoved':
          return null;
      }
    });
  },
};
