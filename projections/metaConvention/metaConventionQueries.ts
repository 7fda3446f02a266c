import type { ReadModels } from '../runtime/readModels.ts';
import { metaConventionsCollection, type MetaConventionDocument } from './metaConventionsProjection.ts';

/** What the meta convention routes read: the keys, and one key's convention. */

const conventions = (readModels: ReadModels) =>
  readModels.collection<MetaConventionDocument>(metaConventionsCollection);

/** Every key with a convention, by key: a short JSON list in Rucio, so gathered whole. */
export const conventionKeys = async (readModels: ReadModels): Promise<string[]> => {
  const keys: string[] = [];
  for await (const convention of conventions(readModels).find({}, { sort: { _id: 1 } })) keys.push(convention.key);
  return keys;
};

export const findConvention = (readModels: ReadModels, key: string): Promise<MetaConventionDocument | null> =>
  conventions(readModels).get(key);
