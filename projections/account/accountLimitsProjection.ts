import { ACCOUNT_LIMIT_EVENT_TYPES, type AccountLimitEvent } from '../../domain/accountLimit/accountLimit.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';

/** One document per limit: local ones keyed by RSE id, global ones by RSE expression. */
export type AccountLimitDocument = Projected<{
  account: string;
  kind: 'local' | 'global';
  rseId: string | null;
  rse: string | null;
  rseExpression: string | null;
  /** -1 means no limit. */
  bytes: number;
}>;

export const accountLimitsCollection: CollectionSpec = {
  name: 'account_limits',
  indexes: [{ fields: ['account', 'kind'] }, { fields: ['rseId'] }],
};

export const localLimitId = (account: string, rseId: string): string => `local|${account}|${rseId}`;
export const globalLimitId = (account: string, rseExpression: string): string => `global|${account}|${rseExpression}`;

export const accountLimitsProjection: Projection<AccountLimitEvent> = {
  name: 'account_limits',
  version: 1,
  collections: [accountLimitsCollection],
  handles: ACCOUNT_LIMIT_EVENT_TYPES,
  async apply(event, context) {
    const limits = context.collection<AccountLimitDocument>(accountLimitsCollection);
    switch (event.type) {
      case 'LocalAccountLimitSet': {
        const { account, rseId, rse, bytes } = event.data;
        const id = localLimitId(account, rseId);
        await limits.update(id, () => ({ _id: id, account, kind: 'local', rseId, rse, rseExpression: null, bytes }));
        return;
      }
      case 'LocalAccountLimitRemoved':
        await limits.update(localLimitId(event.data.account, event.data.rseId), () => null);
        return;
      case 'GlobalAccountLimitSet': {
        const { account, rseExpression, bytes } = event.data;
        const id = globalLimitId(account, rseExpression);
        await limits.update(id, () => ({
          _id: id,
          account,
          kind: 'global',
          rseId: null,
          rse: null,
          rseExpression,
          bytes,
        }));
        return;
      }
      case 'GlobalAccountLimitRemoved':
        await limits.update(globalLimitId(event.data.account, event.data.rseExpression), () => null);
        return;
    }
  },
};
