import type { ReadModels } from '../runtime/readModels.ts';
import {
  accountLimitsCollection,
  globalLimitId,
  localLimitId,
  type AccountLimitDocument,
} from './accountLimitsProjection.ts';

/** What the limit, usage and RSE routes read of account quotas: local per RSE, global per RSE expression. */

const limits = (readModels: ReadModels) => readModels.collection<AccountLimitDocument>(accountLimitsCollection);

export const findLocalLimit = (
  readModels: ReadModels,
  account: string,
  rseId: string,
): Promise<AccountLimitDocument | null> => limits(readModels).get(localLimitId(account, rseId));

export const findGlobalLimit = (
  readModels: ReadModels,
  account: string,
  rseExpression: string,
): Promise<AccountLimitDocument | null> => limits(readModels).get(globalLimitId(account, rseExpression));

/** The account's local limits by RSE name; on one RSE only when `rseId` is given. */
export const localLimitsOf = (
  readModels: ReadModels,
  account: string,
  rseId?: string,
): AsyncIterable<AccountLimitDocument> =>
  limits(readModels).find({ account, kind: 'local', ...(rseId !== undefined ? { rseId } : {}) }, { sort: { rse: 1 } });

/** The account's global limits by RSE expression. */
export const globalLimitsOf = (readModels: ReadModels, account: string): AsyncIterable<AccountLimitDocument> =>
  limits(readModels).find({ account, kind: 'global' }, { sort: { rseExpression: 1 } });
