import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';

/**
 * What each account stores on each RSE, counted from replica locks (Rucio's account_usage and
 * account_usage_history). Locks come with replication rules: until that area exists no event
 * feeds these collections, so every usage reads as zero, as on a Rucio without rules. The lock
 * events will join `handles` and fill exactly these fields.
 */
export type AccountUsageDocument = Projected<{
  account: string;
  rseId: string;
  rse: string;
  files: number;
  bytes: number;
  updatedAt: string;
}>;

export type AccountUsageHistoryDocument = Projected<{
  account: string;
  rseId: string;
  files: number;
  bytes: number;
  updatedAt: string;
}>;

export const accountUsageCollection: CollectionSpec = { name: 'account_usage', indexes: [{ fields: ['account'] }, { fields: ['rseId'] }] };
export const accountUsageHistoryCollection: CollectionSpec = {
  name: 'account_usage_history',
  indexes: [{ fields: ['account', 'rseId', 'updatedAt'] }],
};

export const accountUsageId = (account: string, rseId: string): string => `${account}|${rseId}`;

export const accountUsageProjection: Projection = {
  name: 'account_usage',
  version: 1,
  collections: [accountUsageCollection, accountUsageHistoryCollection],
  handles: [],
  async apply() {
    // No event type is handled yet (see above), so the runner never calls this.
  },
};
