import type { IdentityType } from '../../domain/identity/identity.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import {
  accountIdentitiesCollection,
  accountIdentityDocumentId,
  type AccountIdentityDocument,
} from './identitiesProjection.ts';

/** What the identity and account routes read of the identity-to-account mappings. */

const mappings = (readModels: ReadModels) =>
  readModels.collection<AccountIdentityDocument>(accountIdentitiesCollection);

/** The accounts an identity is mapped to, by name; of one identity type, or of any when none is given. */
export const accountsOfIdentity = async (
  readModels: ReadModels,
  identity: string,
  identityType?: IdentityType,
): Promise<string[]> => {
  const found = await mappings(readModels)
    .find({ identity, ...(identityType !== undefined ? { identityType } : {}) }, { sort: { account: 1 } })
    .toArray();
  return found.map((mapping) => mapping.account);
};

/** The identities mapped to an account, in id order (identity type, then identity). */
export const identitiesOfAccount = (readModels: ReadModels, account: string): AsyncIterable<AccountIdentityDocument> =>
  mappings(readModels).find({ account }, { sort: { _id: 1 } });

/** Since when the identity is mapped to the account (the grant's time), or undefined when it is not. */
export const identityMappedSince = async (
  readModels: ReadModels,
  account: string,
  identityType: IdentityType,
  identity: string,
): Promise<string | undefined> =>
  (await mappings(readModels).get(accountIdentityDocumentId(account, identityType, identity)))?.createdAt;

/** The accounts an identity is mapped to, each with its default flag and since when. */
export const mappingsOfIdentity = async (
  readModels: ReadModels,
  identity: string,
  identityType: IdentityType,
): Promise<{ account: string; isDefault: boolean; since: string }[]> => {
  const found = await mappings(readModels)
    .find({ identity, identityType }, { sort: { account: 1 } })
    .toArray();
  return found.map((mapping) => ({ account: mapping.account, isDefault: mapping.isDefault, since: mapping.createdAt }));
};
