import type { TransferLimitEvent } from '../../domain/request/transferLimit.ts';
import { transferLimitsDecider, type TransferLimitCommand } from '../../domain/request/transferLimitDecider.ts';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

const given = deciderSpec<
  TransferLimitCommand,
  TransferLimitEvent,
  ReturnType<typeof transferLimitsDecider.initialState>
>(transferLimitsDecider);
const set = (data: object) =>
  ({
    type: 'SetTransferLimit',
    data: {
      rseExpression: 'DEST',
      activity: null,
      direction: 'DESTINATION',
      newId: 'l1',
      maxTransfers: null,
      volume: null,
      deadline: null,
      strategy: null,
      transfers: null,
      waitings: null,
      ...data,
    },
    metadata: metadata(),
  }) as TransferLimitCommand;
const limit = {
  id: 'l1',
  rseExpression: 'DEST',
  activity: 'all_activities',
  direction: 'DESTINATION' as const,
  maxTransfers: 0,
  volume: 0,
  deadline: 1,
  strategy: 'fifo' as const,
  transfers: null,
  waitings: null,
  createdAt: AT,
  updatedAt: AT,
};

describe('Transfer limits decider (behaviour rule 24)', () => {
  it('creates a limit with Rucio’s defaults: 0 transfers, volume 0, deadline 1 hour, fifo, for all activities', () =>
    given([])
      .when(set({}))
      .then([{ type: 'TransferLimitSet', data: { limit } }]));
  it('updates only what is given, keyed by expression, activity and direction', () => {
    given([{ type: 'TransferLimitSet', data: { limit } }])
      .when(set({ newId: 'other', maxTransfers: 5 }))
      .then([{ type: 'TransferLimitSet', data: { limit: { ...limit, maxTransfers: 5 } } }]);
    given([{ type: 'TransferLimitSet', data: { limit } }])
      .when(set({ maxTransfers: 0 }))
      .thenNothingHappened();
  });
  it('deletes a limit, and deleting a missing one changes nothing', () => {
    const remove = {
      type: 'DeleteTransferLimit',
      data: { rseExpression: 'DEST', activity: null, direction: 'DESTINATION' },
      metadata: metadata(),
    } as TransferLimitCommand;
    given([{ type: 'TransferLimitSet', data: { limit } }])
      .when(remove)
      .then([
        {
          type: 'TransferLimitDeleted',
          data: {
            id: 'l1',
            rseExpression: 'DEST',
            activity: 'all_activities',
            direction: 'DESTINATION',
            deletedAt: AT,
          },
        },
      ]);
    given([]).when(remove).thenNothingHappened();
  });
});
