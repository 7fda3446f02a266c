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
  describe('updates only what is given, keyed by expression, activity and direction', () => {
    it('changes the limit of the same key, keeping its id', () =>
      given([{ type: 'TransferLimitSet', data: { limit } }])
        .when(set({ newId: 'other', maxTransfers: 5 }))
        .then([{ type: 'TransferLimitSet', data: { limit: { ...limit, maxTransfers: 5 } } }]));
    it('changes nothing when the values are the same', () =>
      given([{ type: 'TransferLimitSet', data: { limit } }])
        .when(set({ maxTransfers: 0 }))
        .thenNothingHappened());
  });
  describe('when a limit is deleted', () => {
    const remove = {
      type: 'DeleteTransferLimit',
      data: { rseExpression: 'DEST', activity: null, direction: 'DESTINATION' },
      metadata: metadata(),
    } as TransferLimitCommand;
    it('deletes it', () =>
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
        ]));
    it('changes nothing when there is none', () => given([]).when(remove).thenNothingHappened());
  });
});
