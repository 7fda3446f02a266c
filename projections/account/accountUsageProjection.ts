import type { RuleEvent } from '../../domain/rule/rule.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { EventsOf, Projected, Projection } from '../projection.ts';
import type { ProjectionContext } from '../runtime/projectionContext.ts';

/**
 * What each account stores on each RSE, counted from its rules' locks as Rucio's abacus does
 * (account_usage and account_usage_history): every lock adds one file and its bytes to its rule
 * owner's usage on its RSE, whatever its state, and takes them away when it goes; a rule changing
 * owner moves its counts. Two rules of one account on one replica count twice, as in Rucio.
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

export const accountUsageCollection: CollectionSpec = {
  name: 'account_usage',
  indexes: [{ fields: ['account'] }, { fields: ['rseId'] }],
};
export const accountUsageHistoryCollection: CollectionSpec = {
  name: 'account_usage_history',
  indexes: [{ fields: ['account', 'rseId', 'updatedAt'] }],
};

export const accountUsageId = (account: string, rseId: string): string => `${account}|${rseId}`;

const adjust = async (
  context: ProjectionContext,
  account: string,
  rseId: string,
  rse: string,
  files: number,
  bytes: number,
  at: string,
): Promise<void> => {
  const id = accountUsageId(account, rseId);
  let after: AccountUsageDocument | null = null;
  await context.collection<AccountUsageDocument>(accountUsageCollection).update(id, (current) => {
    after = {
      ...(current ?? { _id: id, account, rseId, rse, files: 0, bytes: 0 }),
      files: (current?.files ?? 0) + files,
      bytes: (current?.bytes ?? 0) + bytes,
      updatedAt: at,
    };
    return after;
  });
  const snapshot = after as AccountUsageDocument | null;
  if (!snapshot) return;
  const historyId = `${id} ${String(context.position).padStart(20, '0')}`;
  await context.collection<AccountUsageHistoryDocument>(accountUsageHistoryCollection).create(historyId, {
    _id: historyId,
    account,
    rseId,
    files: snapshot.files,
    bytes: snapshot.bytes,
    updatedAt: at,
  });
};

/** Sums locks per RSE, so a step of thousands of locks updates one document per RSE. */
const perRse = (locks: readonly { rseId: string; rse: string; bytes: number }[]) => {
  const sums = new Map<string, { rse: string; files: number; bytes: number }>();
  for (const lock of locks) {
    const sum = sums.get(lock.rseId) ?? { rse: lock.rse, files: 0, bytes: 0 };
    sum.files += 1;
    sum.bytes += lock.bytes;
    sums.set(lock.rseId, sum);
  }
  return sums;
};

export const accountUsageProjection: Projection<
  EventsOf<RuleEvent, 'RuleLocksCreated' | 'RuleLocksRemoved' | 'RuleUpdated'>
> = {
  name: 'account_usage',
  version: 2,
  collections: [accountUsageCollection, accountUsageHistoryCollection],
  handles: { RuleLocksCreated: true, RuleLocksRemoved: true, RuleUpdated: true },
  async apply(event, context) {
    switch (event.type) {
      case 'RuleLocksCreated':
      case 'RuleLocksRemoved': {
        const sign = event.type === 'RuleLocksCreated' ? 1 : -1;
        for (const [rseId, sum] of perRse(event.data.locks))
          await adjust(context, event.data.account, rseId, sum.rse, sign * sum.files, sign * sum.bytes, event.data.at);
        return;
      }
      case 'RuleUpdated': {
        const owner = event.data.changes.account;
        if (owner === undefined || !event.data.movedUsage) return;
        for (const moved of event.data.movedUsage) {
          await adjust(context, event.data.account, moved.rseId, moved.rse, -moved.files, -moved.bytes, event.data.at);
          await adjust(context, owner, moved.rseId, moved.rse, moved.files, moved.bytes, event.data.at);
        }
        return;
      }
      default:
        return;
    }
  },
};
