import {
  didKey,
  type ColumnValue,
  type ContentTotals,
  type DidAvailability,
  type DidEvent,
} from '../../domain/did/did.ts';
import type { ReplicaEvent } from '../../domain/replica/replica.ts';
import type { CollectionSpec, Filter } from '../../infra/readstore/readStore.ts';
import { documentProjection, type EventsOf, type Projected } from '../projection.ts';

/**
 * One document per DID, keyed `scope:name`, with Rucio's column names as fields so that searches
 * filter on them directly, and the JSON plugin's metadata under `meta`. Null columns are left out
 * (MongoDB filters treat missing like null); columns with a default are always present.
 */
export type DidDocument = Projected<{
  scope: string;
  name: string;
  account: string;
  did_type: 'FILE' | 'DATASET' | 'CONTAINER';
  availability: DidAvailability;
  monotonic: boolean;
  hidden: boolean;
  obsolete: boolean;
  suppressed: boolean;
  purge_replicas: boolean;
  transient: boolean;
  created_at: string;
  updated_at: string;
  /** The JSON plugin's document; null when no JSON key was ever set. */
  meta: Record<string, unknown> | null;
  [column: string]: unknown;
}>;

/**
 * Indexed for the queries the API and the daemons make: searches (scope and type, then name; a
 * search on length, size or creation time reads the scope's DIDs of those types, as Rucio's does),
 * GUID lookups, new DIDs (the transmogrifier) and expired DIDs (the undertaker). A scope's DIDs
 * by name are a range of the primary key (`didsOfScope`). Every index costs each DID a write,
 * and files are most of them: the GUID and expiry indexes are sparse, since most files have
 * neither and those lookups always ask for a value (version 2; version 1 held an entry per DID in each).
 */
export const didsCollection: CollectionSpec = {
  name: 'dids',
  indexes: [
    { fields: ['scope', 'did_type', 'name'] },
    { fields: ['guid'], sparse: true },
    { fields: ['is_new', 'did_type'] },
    { fields: ['expired_at'], sparse: true },
  ],
};

/**
 * A scope's DIDs, in name order with `{ _id: 1 }`: ids are `<scope>:<name>`, scopes hold no `:`
 * nor `;`, so they are the ids from `<scope>:` to `<scope>;`.
 */
export const didsOfScope = (scope: string): Filter => ({ _id: { $gt: `${scope}:`, $lt: `${scope};` } });

const withColumns = (
  document: DidDocument,
  columns: Readonly<Record<string, ColumnValue | undefined>>,
): DidDocument => {
  const next: DidDocument = { ...document };
  for (const [column, value] of Object.entries(columns)) {
    if (value === null || value === undefined) delete next[column];
    else next[column] = value;
  }
  return next;
};

const withTotals = (document: DidDocument, totals: ContentTotals, at: string): DidDocument =>
  withColumns({ ...document, updated_at: at }, totals);

/** The DID events that change a DID's own document, and the reads of a file's replicas (its access count and time). */
type DidDocumentEvent =
  | EventsOf<ReplicaEvent, 'ReplicaAccessed'>
  | EventsOf<
      DidEvent,
      | 'DidCreated'
      | 'DidMetadataSet'
      | 'DidMetadataKeyDeleted'
      | 'DidsAttached'
      | 'DidsDetached'
      | 'DidContentUpdated'
      | 'DidClosed'
      | 'DidReopened'
      | 'DidErased'
      | 'FileExpiryCleared'
      | 'DidResurrected'
      | 'FileAvailabilityChanged'
      | 'DidAccessed'
      | 'ArchiveContentAdded'
      | 'FileMarkedConstituent'
      | 'DatasetMarkedArchive'
    >;

/** Rucio's `accessed_at` and `access_cnt` after reads: the latest time, the count increased. */
const accessed = (document: DidDocument, accesses: number, accessedAt: string): DidDocument => {
  const previous = typeof document.accessed_at === 'string' ? document.accessed_at : '';
  const count = typeof document.access_cnt === 'number' ? document.access_cnt : 0;
  return { ...document, accessed_at: previous > accessedAt ? previous : accessedAt, access_cnt: count + accesses };
};

export const didsProjection = documentProjection<DidDocument, DidDocumentEvent>({
  name: 'dids',
  version: 2,
  collection: didsCollection,
  handles: {
    DidCreated: true,
    DidMetadataSet: true,
    DidMetadataKeyDeleted: true,
    DidsAttached: true,
    DidsDetached: true,
    DidContentUpdated: true,
    DidClosed: true,
    DidReopened: true,
    DidErased: true,
    FileExpiryCleared: true,
    DidResurrected: true,
    FileAvailabilityChanged: true,
    DidAccessed: true,
    ReplicaAccessed: true,
    ArchiveContentAdded: true,
    FileMarkedConstituent: true,
    DatasetMarkedArchive: true,
  },
  // A DID's document is gone before its name is used again (only a deleted file's may be), so its creation always makes a new document.
  creates: ['DidCreated'],
  documentId: (event) => didKey(event.data.scope, event.data.name),
  evolve: (document, event) => {
    if (event.type === 'DidCreated') {
      const {
        scope,
        name,
        didType,
        account,
        createdAt,
        expiredAt,
        monotonic,
        isNew,
        bytes,
        adler32,
        md5,
        guid,
        events,
      } = event.data;
      return withColumns(
        {
          _id: didKey(scope, name),
          scope,
          name,
          account,
          did_type: didType,
          availability: 'AVAILABLE',
          monotonic,
          hidden: false,
          obsolete: false,
          suppressed: false,
          purge_replicas: true,
          transient: false,
          created_at: createdAt,
          updated_at: createdAt,
          meta: null,
        },
        {
          is_open: didType === 'FILE' ? null : true,
          is_new: isNew,
          expired_at: expiredAt,
          bytes,
          adler32,
          md5,
          guid,
          events,
        },
      );
    }
    if (event.type === 'DidResurrected' && event.data.restored) {
      const { restored } = event.data;
      const base: DidDocument = {
        _id: didKey(event.data.scope, event.data.name),
        scope: event.data.scope,
        name: event.data.name,
        account: restored.account,
        did_type: restored.didType,
        availability: 'AVAILABLE',
        monotonic: restored.monotonic,
        hidden: false,
        obsolete: false,
        suppressed: false,
        purge_replicas: true,
        transient: false,
        created_at: restored.createdAt,
        updated_at: event.data.resurrectedAt,
        meta: null,
      };
      return withColumns(base, { ...restored.columns, is_open: restored.isOpen, closed_at: restored.closedAt });
    }
    if (!document) return undefined;
    switch (event.type) {
      case 'DidMetadataSet': {
        const meta =
          Object.keys(event.data.json).length > 0 || document.meta
            ? { ...(document.meta ?? {}), ...event.data.json }
            : null;
        return withColumns({ ...document, meta, updated_at: event.data.setAt }, event.data.columns);
      }
      case 'DidMetadataKeyDeleted': {
        const { [event.data.key]: _deleted, ...meta } = document.meta ?? {};
        return { ...document, meta, updated_at: event.data.deletedAt };
      }
      case 'DidsAttached':
        return withTotals(document, event.data.totals, event.data.attachedAt);
      case 'DidsDetached':
        return withTotals(document, event.data.totals, event.data.detachedAt);
      case 'DidContentUpdated':
        return withTotals(document, event.data.totals, event.data.updatedAt);
      case 'DidClosed':
        return withTotals(
          { ...document, is_open: false, closed_at: event.data.closedAt },
          event.data.totals,
          event.data.closedAt,
        );
      case 'DidReopened':
        return { ...document, is_open: true, updated_at: event.data.reopenedAt };
      case 'DidErased':
        return null;
      case 'FileExpiryCleared':
        return withColumns({ ...document, meta: null, updated_at: event.data.clearedAt }, { expired_at: null });
      case 'DidResurrected':
        return withColumns({ ...document, updated_at: event.data.resurrectedAt }, { expired_at: null });
      case 'FileAvailabilityChanged':
        return { ...document, availability: event.data.availability, updated_at: event.data.changedAt };
      case 'DidAccessed':
      case 'ReplicaAccessed':
        return accessed(document, event.data.accesses, event.data.accessedAt);
      case 'ArchiveContentAdded':
        return { ...document, is_archive: true, updated_at: event.data.addedAt };
      case 'FileMarkedConstituent':
        return { ...document, constituent: true, updated_at: event.data.markedAt };
      case 'DatasetMarkedArchive':
        return { ...document, is_archive: true, updated_at: event.data.markedAt };
      default:
        return undefined;
    }
  },
});
