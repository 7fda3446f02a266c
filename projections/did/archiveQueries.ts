import { didKey, type DidRef } from '../../domain/did/did.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { archiveContentsCollection, type ArchiveContentDocument } from './archiveContentsProjection.ts';

/** What the archives read model answers: an archive's constituents, and the archives of files. */

/** An archive's constituents, in order, streamed from the read model (none for a file that is no archive). */
export const archiveContent = (
  readModels: ReadModels,
  scope: string,
  name: string,
): AsyncIterable<ArchiveContentDocument> =>
  readModels
    .collection<ArchiveContentDocument>(archiveContentsCollection)
    .find({ archiveKey: didKey(scope, name) }, { sort: { archiveKey: 1, _id: 1 } });

/** The archives holding each of the given files, by the file's `scope:name` (files in none are left out). */
export const archivesHolding = async (
  readModels: ReadModels,
  childKeys: readonly string[],
): Promise<Map<string, DidRef[]>> => {
  const archives = new Map<string, DidRef[]>();
  if (childKeys.length === 0) return archives;
  for (const row of await readModels
    .collection<ArchiveContentDocument>(archiveContentsCollection)
    .find({ childKey: { $in: [...childKeys] } })
    .toArray()) {
    const list = archives.get(row.childKey) ?? [];
    list.push({ scope: row.archiveScope, name: row.archiveName });
    archives.set(row.childKey, list);
  }
  return archives;
};
