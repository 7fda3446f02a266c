import type { TransferLimitDirection, TransferLimitEvent } from '../../domain/request/transferLimit.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';

/** One document per transfer limit, with Rucio's column names (`list_transfer_limits`). */
export type TransferLimitDocument = Projected<{
  id: string;
  rse_expression: string;
  activity: string;
  direction: TransferLimitDirection;
  max_transfers: number | null;
  volume: number | null;
  deadline: number | null;
  strategy: string | null;
  transfers: number | null;
  waitings: number | null;
  created_at: string;
  updated_at: string;
}>;

export const transferLimitsCollection: CollectionSpec = { name: 'transfer_limits', indexes: [] };

export const transferLimitsProjection: Projection<TransferLimitEvent> = {
  name: 'transfer_limits',
  version: 1,
  collections: [transferLimitsCollection],
  handles: { TransferLimitSet: true, TransferLimitDeleted: true, TransferLimitStatsRecorded: true },
  async apply(event, context) {
    const limits = context.collection<TransferLimitDocument>(transferLimitsCollection);
    switch (event.type) {
      case 'TransferLimitSet': {
        const { limit } = event.data;
        await limits.update(limit.id, () => ({
          _id: limit.id,
          id: limit.id,
          rse_expression: limit.rseExpression,
          activity: limit.activity,
          direction: limit.direction,
          max_transfers: limit.maxTransfers,
          volume: limit.volume,
          deadline: limit.deadline,
          strategy: limit.strategy,
          transfers: limit.transfers,
          waitings: limit.waitings,
          created_at: limit.createdAt,
          updated_at: limit.updatedAt,
        }));
        return;
      }
      case 'TransferLimitDeleted':
        await limits.update(event.data.id, () => null);
        return;
      case 'TransferLimitStatsRecorded':
        await limits.update(event.data.id, (document) =>
          document
            ? { ...document, transfers: event.data.transfers, waitings: event.data.waitings, updated_at: event.data.at }
            : undefined,
        );
        return;
    }
  },
};
