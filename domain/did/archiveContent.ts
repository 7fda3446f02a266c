import { DataIdentifierNotFound, FileAlreadyExists, UnsupportedOperation } from '../shared/errors.ts';
import type { Command } from '../shared/event.ts';
import { fileEntryOf, type AttachCandidate } from './didContent.ts';
import { didKey, type ContentEntry, type Did, type DidEvent, type DidRef } from './did.ts';

/**
 * Archives (Rucio's `__add_files_to_archive`): a file whose name ends like an archive's (`.zip`,
 * `.tar.gz`, ...) takes files as its content, its constituents. Constituents are files of their
 * own, marked `constituent`, that need no replica: `list_replicas` finds them inside the replicas
 * of their archives. The archive keeps its constituents on its own stream, each constituent its
 * mark on its own, and a dataset holding an archive is marked `is_archive`.
 */

/** Rucio's `is_archive`: the archive extensions, optionally followed by `.<digits>` parts (its `.` before `gz`, `Z` and `bz2` matches any character, as Rucio's does). */
const ARCHIVE_NAME = /^.*\.(zip|zipx|tar.gz|tgz|tar.Z|tar.bz2|tbz2)(\.\d+)*$/i;

export const isArchiveName = (name: string): boolean => ARCHIVE_NAME.test(name);

/** Files to put into an archive, each with its facts as the archive's decision sees them. */
export type AddArchiveContent = Command<
  'AddArchiveContent',
  { scope: string; name: string; children: readonly AttachCandidate[]; ignoreDuplicates: boolean }
>;

/** Marks a file a constituent of `archive` (it exists by now: a missing one was registered first). */
export type MarkConstituent = Command<'MarkConstituent', { scope: string; name: string; archive: DidRef }>;

/**
 * Marks a dataset `is_archive` because `archive` is attached to it. The dataset was read as a
 * parent from a read model that may lag: a dataset no longer holding the archive is left alone.
 */
export type MarkDatasetArchive = Command<'MarkDatasetArchive', { scope: string; name: string; archive: DidRef }>;

export type ArchiveCommand = AddArchiveContent | MarkConstituent | MarkDatasetArchive;

const notFound = (scope: string, name: string) =>
  new DataIdentifierNotFound(`Data identifier '${scope}:${name}' not found`);

const notAFile = (scope: string, name: string, didType: string) =>
  new UnsupportedOperation(`Data identifier ${scope}:${name} of type ${didType} cannot be added to an archive`);

export const addArchiveContent = ({ data, metadata }: AddArchiveContent, state: Did): DidEvent[] => {
  if (state.status !== 'Live') throw notFound(data.scope, data.name);
  if (state.record.didType !== 'FILE' || !isArchiveName(data.name))
    throw new UnsupportedOperation(`Data identifier '${data.scope}:${data.name}' is not an archive file`);
  const archiveKey = didKey(data.scope, data.name);
  const entries = new Map<string, ContentEntry>();
  const duplicates: string[] = [];
  for (const { request, facts } of data.children) {
    const key = didKey(request.scope, request.name);
    if (key === archiveKey) throw new UnsupportedOperation('Self-append is not valid!');
    if (!facts) throw notFound(request.scope, request.name);
    if (facts.didType !== 'FILE') throw notAFile(request.scope, request.name, facts.didType);
    if (state.constituents?.has(key)) {
      duplicates.push(key);
      continue;
    }
    entries.set(key, fileEntryOf(request, facts));
  }
  if (duplicates.length > 0 && !data.ignoreDuplicates)
    throw new FileAlreadyExists(`The file(s) ${duplicates.join(', ')} are already in the archive ${archiveKey}`);
  if (entries.size === 0) return [];
  return [
    {
      type: 'ArchiveContentAdded',
      data: {
        scope: data.scope,
        name: data.name,
        constituents: [...entries.values()],
        addedAt: metadata.now.toISOString(),
      },
    },
  ];
};

export const markConstituent = ({ data, metadata }: MarkConstituent, state: Did): DidEvent[] => {
  if (state.status !== 'Live') throw notFound(data.scope, data.name);
  if (state.record.didType !== 'FILE') throw notAFile(data.scope, data.name, state.record.didType);
  if (state.record.columns.constituent === true) return [];
  return [
    {
      type: 'FileMarkedConstituent',
      data: { scope: data.scope, name: data.name, archive: data.archive, markedAt: metadata.now.toISOString() },
    },
  ];
};

export const markDatasetArchive = ({ data, metadata }: MarkDatasetArchive, state: Did): DidEvent[] => {
  if (state.status !== 'Live' || state.record.didType !== 'DATASET' || state.record.columns.is_archive === true)
    return [];
  if (!state.content.children.has(didKey(data.archive.scope, data.archive.name))) return [];
  return [
    {
      type: 'DatasetMarkedArchive',
      data: { scope: data.scope, name: data.name, archive: data.archive, markedAt: metadata.now.toISOString() },
    },
  ];
};
