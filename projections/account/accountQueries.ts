import type { AccountType } from '../../domain/account/account.ts';
import type { Filter } from '../../infra/readstore/readStore.ts';
import { accountsOfIdentity } from '../identity/identityQueries.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { accountsCollection, type AccountDocument } from './accountsProjection.ts';

/** What the account routes read: one account, and the account listings. */

const accounts = (readModels: ReadModels) => readModels.collection<AccountDocument>(accountsCollection);

/** The account whatever its status: callers decide what a suspended or deleted one means. */
export const findAccount = (readModels: ReadModels, account: string): Promise<AccountDocument | null> =>
  accounts(readModels).get(account);

/** Rucio's `list_accounts` filters; every one given must hold. */
export type AccountListing = Readonly<{
  accountType?: AccountType;
  /** The exact name. */
  account?: string;
  /** An anchored regular expression over names (a `*` wildcard already translated). */
  accountPattern?: string;
  /** Accounts this identity is mapped to, of any identity type. */
  identity?: string;
  /** Attributes the account must hold, each with this exact value. */
  attributes?: readonly Readonly<{ key: string; value: string }>[];
}>;

/**
 * The ACTIVE accounts that match, by name. Prepared before the stream starts (the identity's
 * accounts are read first), so a failure there is still a proper error answer.
 */
export const listAccounts = async (
  readModels: ReadModels,
  listing: AccountListing,
): Promise<AsyncIterable<AccountDocument>> => {
  const conditions: Filter[] = [{ status: 'ACTIVE' }];
  if (listing.accountType !== undefined) conditions.push({ accountType: listing.accountType });
  if (listing.account !== undefined) conditions.push({ account: listing.account });
  if (listing.accountPattern !== undefined) conditions.push({ account: { $regex: listing.accountPattern } });
  if (listing.identity !== undefined)
    conditions.push({ account: { $in: await accountsOfIdentity(readModels, listing.identity) } });
  // Attribute keys may hold dots, so attributes are a list of pairs (projections/account/accountsProjection.ts).
  for (const { key, value } of listing.attributes ?? [])
    conditions.push({ attributes: { $elemMatch: { key, value } } });
  return accounts(readModels).find({ $and: conditions }, { sort: { account: 1 } });
};

/** Every account, suspended and deleted ones too, by name. */
export const everyAccount = (readModels: ReadModels): AsyncIterable<AccountDocument> =>
  accounts(readModels).find({}, { sort: { account: 1 } });
