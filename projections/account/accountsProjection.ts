import {
  ACCOUNT_EVENT_TYPES,
  type AccountEvent,
  type AccountStatus,
  type AccountType,
} from '../../domain/account/account.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import { documentProjection, type Projected } from '../projection.ts';

export type AccountDocument = Projected<{
  account: string;
  accountType: AccountType;
  email: string | null;
  status: AccountStatus;
  /**
   * A list rather than an object: attribute keys may hold dots, which dotted query paths (and
   * MongoDB field names) would misread. Filter with `$elemMatch`.
   */
  attributes: { key: string; value: string }[];
  createdAt: string;
  updatedAt: string;
  suspendedAt: string | null;
  deletedAt: string | null;
  /** Tokens issued up to this time no longer work: the last revocation or suspension (absent: none). */
  sessionsRevokedAt?: string;
}>;

export const accountsCollection: CollectionSpec = {
  name: 'accounts',
  indexes: [{ fields: ['status', 'account'] }, { fields: ['accountType'] }],
};

export const accountsProjection = documentProjection<AccountDocument, AccountEvent>({
  name: 'accounts',
  version: 3,
  collection: accountsCollection,
  handles: ACCOUNT_EVENT_TYPES,
  documentId: (event) => event.data.account,
  evolve: (document, event, envelope) => {
    const at = envelope.metadata.at;
    if (event.type === 'AccountCreated') {
      return {
        _id: event.data.account,
        account: event.data.account,
        accountType: event.data.accountType,
        email: event.data.email,
        status: 'ACTIVE',
        attributes: [],
        createdAt: event.data.createdAt,
        updatedAt: event.data.createdAt,
        suspendedAt: null,
        deletedAt: null,
      };
    }
    if (!document) return undefined;
    switch (event.type) {
      case 'AccountEmailChanged':
        return { ...document, email: event.data.email, updatedAt: at };
      case 'AccountSuspended':
        // A suspension ends the account's sessions for good: reactivating it does not bring them back.
        return {
          ...document,
          status: 'SUSPENDED',
          suspendedAt: event.data.suspendedAt,
          sessionsRevokedAt: event.data.suspendedAt,
          updatedAt: at,
        };
      case 'AccountReactivated':
        return { ...document, status: 'ACTIVE', suspendedAt: null, updatedAt: at };
      case 'AccountDeleted':
        return { ...document, status: 'DELETED', deletedAt: event.data.deletedAt, updatedAt: at };
      case 'AccountAttributeAdded':
        return {
          ...document,
          attributes: [
            ...document.attributes.filter((attribute) => attribute.key !== event.data.key),
            { key: event.data.key, value: event.data.value },
          ],
        };
      case 'AccountAttributeRemoved':
        return { ...document, attributes: document.attributes.filter((attribute) => attribute.key !== event.data.key) };
      case 'AccountSessionsRevoked':
        return { ...document, sessionsRevokedAt: event.data.revokedAt };
      default:
        return undefined;
    }
  },
});
