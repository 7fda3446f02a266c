import type { IdentityEvent, IdentityType } from '../../domain/identity/identity.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';

/** One document per identity (its email), and one per identity-to-account mapping. */
export type IdentityDocument = Projected<{
  identity: string;
  identityType: IdentityType;
  email: string | null;
  createdAt: string;
}>;
export type AccountIdentityDocument = Projected<{
  account: string;
  identity: string;
  identityType: IdentityType;
  email: string | null;
  isDefault: boolean;
  createdAt: string;
}>;

/** Identities are read by id; who holds one is asked of `account_identities`. */
export const identitiesCollection: CollectionSpec = { name: 'identities', indexes: [] };
export const accountIdentitiesCollection: CollectionSpec = {
  name: 'account_identities',
  indexes: [{ fields: ['account'] }, { fields: ['identity', 'identityType'] }],
};

export const identityDocumentId = (identityType: IdentityType, identity: string): string =>
  `${identityType}|${identity}`;
export const accountIdentityDocumentId = (account: string, identityType: IdentityType, identity: string): string =>
  `${account}|${identityType}|${identity}`;

export const identitiesProjection: Projection<IdentityEvent> = {
  name: 'identities',
  version: 1,
  collections: [identitiesCollection, accountIdentitiesCollection],
  handles: { IdentityAdded: true, IdentityGrantedToAccount: true, IdentityRevokedFromAccount: true },
  async apply(event, context) {
    const identities = context.collection<IdentityDocument>(identitiesCollection);
    const mappings = context.collection<AccountIdentityDocument>(accountIdentitiesCollection);
    switch (event.type) {
      case 'IdentityAdded':
        await identities.update(identityDocumentId(event.data.identityType, event.data.identity), () => ({
          _id: identityDocumentId(event.data.identityType, event.data.identity),
          identity: event.data.identity,
          identityType: event.data.identityType,
          email: event.data.email,
          createdAt: event.data.addedAt,
        }));
        return;
      case 'IdentityGrantedToAccount': {
        const identity = await identities.get(identityDocumentId(event.data.identityType, event.data.identity));
        const id = accountIdentityDocumentId(event.data.account, event.data.identityType, event.data.identity);
        await mappings.update(id, () => ({
          _id: id,
          account: event.data.account,
          identity: event.data.identity,
          identityType: event.data.identityType,
          email: identity?.email ?? null,
          isDefault: event.data.isDefault,
          createdAt: event.data.grantedAt,
        }));
        return;
      }
      case 'IdentityRevokedFromAccount':
        await mappings.update(
          accountIdentityDocumentId(event.data.account, event.data.identityType, event.data.identity),
          () => null,
        );
        return;
    }
  },
};
