import { didKey } from '../../domain/did/did.ts';
import type { OpenDataEvent, OpenDataState } from '../../domain/opendata/opendata.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import { documentProjection, type Projected } from '../projection.ts';

/**
 * The open data catalogue as Rucio's tables hold it, one document per entry keyed `scope:name`.
 * The metadata is kept as its JSON text: its keys are the client's (a `$` or a dot in a key would
 * be an operator or a path to MongoDB), and it is only ever answered whole. Indexed for the
 * listings, which go by `updated_at` (Rucio's order), with or without a state.
 */
export type OpenDataDidDocument = Projected<{
  scope: string;
  name: string;
  state: OpenDataState;
  created_at: string;
  updated_at: string;
  doi: string | null;
  record_id: number | null;
  /** The metadata document as JSON text; null when none was ever set. */
  meta_json: string | null;
}>;

export const opendataDidsCollection: CollectionSpec = {
  name: 'opendata_dids',
  indexes: [{ fields: ['updated_at'] }, { fields: ['state', 'updated_at'] }],
};

export const opendataDidsProjection = documentProjection<OpenDataDidDocument, OpenDataEvent>({
  name: 'opendata_dids',
  version: 1,
  collection: opendataDidsCollection,
  handles: {
    OpenDataDidAdded: true,
    OpenDataDidStateChanged: true,
    OpenDataDidMetaSet: true,
    OpenDataDidDoiSet: true,
    OpenDataDidRecordIdSet: true,
    OpenDataDidDeleted: true,
  },
  creates: ['OpenDataDidAdded'],
  documentId: (event) => didKey(event.data.scope, event.data.name),
  evolve: (document, event) => {
    if (event.type === 'OpenDataDidAdded') {
      const { scope, name, at } = event.data;
      return {
        _id: didKey(scope, name),
        scope,
        name,
        state: 'DRAFT',
        created_at: at,
        updated_at: at,
        doi: null,
        record_id: null,
        meta_json: null,
      };
    }
    if (!document) return undefined;
    switch (event.type) {
      case 'OpenDataDidStateChanged':
        return { ...document, state: event.data.state, updated_at: event.data.at };
      case 'OpenDataDidMetaSet':
        return { ...document, meta_json: JSON.stringify(event.data.meta), updated_at: event.data.at };
      case 'OpenDataDidDoiSet':
        return { ...document, doi: event.data.doi, updated_at: event.data.at };
      case 'OpenDataDidRecordIdSet':
        return { ...document, record_id: event.data.recordId, updated_at: event.data.at };
      case 'OpenDataDidDeleted':
        return null;
    }
  },
});
