import { didKey, type DidEvent } from '../../domain/did/did.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { EventsOf, Projected, Projection } from '../projection.ts';

/**
 * Rucio's `archive_contents`: one row per archive file and constituent, with the constituent's
 * size and checksums. A row's id starts with the archive's key, so an archive's content comes out
 * of the `archiveKey, _id` index in order; the `childKey` index answers "which archives hold this
 * file" (`resolve_archives` in replica listings). An archive erased with its last replica takes
 * its rows along (the erasure names its constituents).
 */
export type ArchiveContentDocument = Projected<{
  archiveKey: string;
  archiveScope: string;
  archiveName: string;
  childKey: string;
  scope: string;
  name: string;
  bytes: number | null;
  adler32: string | null;
  md5: string | null;
  guid: string | null;
  events: number | null;
  created_at: string;
}>;

export const archiveContentsCollection: CollectionSpec = {
  name: 'archive_contents',
  indexes: [{ fields: ['archiveKey', '_id'] }, { fields: ['childKey'] }],
};

/** Names hold no spaces, so a space separates archive and constituent unambiguously. */
const archiveContentId = (archiveKey: string, childKey: string): string => `${archiveKey} ${childKey}`;

export const archiveContentsProjection: Projection<EventsOf<DidEvent, 'ArchiveContentAdded' | 'DidErased'>> = {
  name: 'archive_contents',
  version: 1,
  collections: [archiveContentsCollection],
  handles: { ArchiveContentAdded: true, DidErased: true },
  async apply(event, context) {
    const rows = context.collection<ArchiveContentDocument>(archiveContentsCollection);
    const archiveKey = didKey(event.data.scope, event.data.name);
    if (event.type === 'ArchiveContentAdded') {
      // The decider adds only constituents the archive does not hold: every row is new.
      for (const child of event.data.constituents) {
        const childKey = didKey(child.scope, child.name);
        const id = archiveContentId(archiveKey, childKey);
        await rows.create(id, {
          _id: id,
          archiveKey,
          archiveScope: event.data.scope,
          archiveName: event.data.name,
          childKey,
          scope: child.scope,
          name: child.name,
          bytes: child.bytes,
          adler32: child.adler32,
          md5: child.md5,
          guid: child.guid,
          events: child.events,
          created_at: event.data.addedAt,
        });
      }
      return;
    }
    if (event.data.didType !== 'FILE') return;
    for (const child of event.data.children)
      await rows.update(archiveContentId(archiveKey, didKey(child.scope, child.name)), () => null);
  },
};
