import type { ScopeEvent } from '../../domain/scope/scope.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import { documentProjection, type Projected } from '../projection.ts';

export type ScopeDocument = Projected<{ scope: string; account: string; status: 'OPEN'; createdAt: string }>;

export const scopesCollection: CollectionSpec = { name: 'scopes', indexes: [{ fields: ['account'] }] };

export const scopesProjection = documentProjection<ScopeDocument, ScopeEvent>({
  name: 'scopes',
  version: 1,
  collection: scopesCollection,
  handles: { ScopeAdded: true },
  documentId: (event) => event.data.scope,
  evolve: (_document, event) => ({
    _id: event.data.scope,
    scope: event.data.scope,
    account: event.data.account,
    status: 'OPEN',
    createdAt: event.data.addedAt,
  }),
});
