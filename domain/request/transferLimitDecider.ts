import { unknownCommand, type Decider } from '../shared/decider.ts';
import type { Command } from '../shared/event.ts';
import {
  ALL_ACTIVITIES,
  evolveTransferLimits,
  initialTransferLimits,
  limitKey,
  type TransferLimit,
  type TransferLimitDirection,
  type TransferLimitEvent,
  type TransferLimits,
  type TransferLimitStrategy,
} from './transferLimit.ts';

/**
 * Rucio's `set_transfer_limit` (an upsert by expression, activity and direction) and
 * `delete_transfer_limit`. A new limit takes Rucio's defaults for what is not given: 0 transfers
 * (so it releases nothing until raised), volume 0, deadline 1 hour, strategy `fifo`; an update
 * changes only what is given.
 */

export type LimitSelector = Readonly<{
  rseExpression: string;
  activity: string | null;
  direction: TransferLimitDirection;
}>;

export type SetTransferLimit = Command<
  'SetTransferLimit',
  LimitSelector & {
    /** The id a new limit gets (made by the command layer). */
    newId: string;
    maxTransfers: number | null;
    volume: number | null;
    deadline: number | null;
    strategy: TransferLimitStrategy | null;
    transfers: number | null;
    waitings: number | null;
  }
>;
export type DeleteTransferLimit = Command<'DeleteTransferLimit', LimitSelector>;
export type RecordTransferLimitStats = Command<
  'RecordTransferLimitStats',
  { id: string; transfers: number; waitings: number }
>;

export type TransferLimitCommand = SetTransferLimit | DeleteTransferLimit | RecordTransferLimitStats;

export const setTransferLimit = ({ data, metadata }: SetTransferLimit, state: TransferLimits): TransferLimitEvent[] => {
  const activity = data.activity ?? ALL_ACTIVITIES;
  const existing = state.limits.get(limitKey(data.rseExpression, activity, data.direction));
  const at = metadata.now.toISOString();
  if (!existing) {
    const limit: TransferLimit = {
      id: data.newId,
      rseExpression: data.rseExpression,
      activity,
      direction: data.direction,
      maxTransfers: data.maxTransfers ?? 0,
      volume: data.volume ?? 0,
      deadline: data.deadline ?? 1,
      strategy: data.strategy ?? 'fifo',
      transfers: data.transfers,
      waitings: data.waitings,
      createdAt: at,
      updatedAt: at,
    };
    return [{ type: 'TransferLimitSet', data: { limit } }];
  }
  // What is given (not null) replaces what the limit holds.
  const updated: TransferLimit = {
    ...existing,
    maxTransfers: data.maxTransfers ?? existing.maxTransfers,
    volume: data.volume ?? existing.volume,
    deadline: data.deadline ?? existing.deadline,
    strategy: data.strategy ?? existing.strategy,
    transfers: data.transfers ?? existing.transfers,
    waitings: data.waitings ?? existing.waitings,
  };
  const changing = ['maxTransfers', 'volume', 'deadline', 'strategy', 'transfers', 'waitings'] as const;
  if (changing.every((key) => updated[key] === existing[key])) return [];
  return [{ type: 'TransferLimitSet', data: { limit: { ...updated, updatedAt: at } } }];
};

/** Deleting a limit that does not exist is a silent no-op, as in Rucio. */
export const deleteTransferLimit = (
  { data, metadata }: DeleteTransferLimit,
  state: TransferLimits,
): TransferLimitEvent[] => {
  const activity = data.activity ?? ALL_ACTIVITIES;
  const existing = state.limits.get(limitKey(data.rseExpression, activity, data.direction));
  if (!existing) return [];
  return [
    {
      type: 'TransferLimitDeleted',
      data: {
        id: existing.id,
        rseExpression: data.rseExpression,
        activity,
        direction: data.direction,
        deletedAt: metadata.now.toISOString(),
      },
    },
  ];
};

export const recordTransferLimitStats = (
  { data, metadata }: RecordTransferLimitStats,
  state: TransferLimits,
): TransferLimitEvent[] => {
  const limit = [...state.limits.values()].find((candidate) => candidate.id === data.id);
  if (!limit || (limit.transfers === data.transfers && limit.waitings === data.waitings)) return [];
  return [
    {
      type: 'TransferLimitStatsRecorded',
      data: { id: data.id, transfers: data.transfers, waitings: data.waitings, at: metadata.now.toISOString() },
    },
  ];
};

export const decideTransferLimits = (command: TransferLimitCommand, state: TransferLimits): TransferLimitEvent[] => {
  switch (command.type) {
    case 'SetTransferLimit':
      return setTransferLimit(command, state);
    case 'DeleteTransferLimit':
      return deleteTransferLimit(command, state);
    case 'RecordTransferLimitStats':
      return recordTransferLimitStats(command, state);
    default:
      return unknownCommand('transfer limits', command);
  }
};

export const transferLimitsDecider: Decider<TransferLimits, TransferLimitCommand, TransferLimitEvent> = {
  name: 'transferLimits',
  initialState: initialTransferLimits,
  evolve: evolveTransferLimits,
  decide: decideTransferLimits,
};
