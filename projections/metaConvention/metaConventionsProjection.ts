import {
  META_CONVENTION_EVENT_TYPES,
  type KeyType,
  type MetaConventionEvent,
  type ValueType,
} from '../../domain/metaConvention/metaConvention.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import { documentProjection, type Projected } from '../projection.ts';

/** One document per metadata convention key, holding its allowed values. */
export type MetaConventionDocument = Projected<{
  key: string;
  keyType: KeyType;
  valueType: ValueType | null;
  valueRegexp: string | null;
  values: string[];
  createdAt: string;
}>;

export const metaConventionsCollection: CollectionSpec = { name: 'meta_conventions', indexes: [] };

export const metaConventionsProjection = documentProjection<MetaConventionDocument, MetaConventionEvent>({
  name: 'meta_conventions',
  version: 1,
  collection: metaConventionsCollection,
  handles: META_CONVENTION_EVENT_TYPES,
  documentId: (event) => event.data.key,
  evolve: (document, event) => {
    switch (event.type) {
      case 'MetaConventionKeyAdded': {
        const { key, keyType, valueType, valueRegexp, addedAt } = event.data;
        return { _id: key, key, keyType, valueType, valueRegexp, values: [], createdAt: addedAt };
      }
      case 'MetaConventionValueAdded':
        return document ? { ...document, values: [...document.values, event.data.value] } : undefined;
      default:
        return undefined;
    }
  },
});
