import { eventTypes, type Event } from '../shared/event.ts';

/**
 * Transfer limits (Rucio's `transfer_limits`): how many transfers may be active to (or from) the
 * RSEs an expression selects, per activity. They all live in one small stream, as `config` does:
 * a deployment has a handful, and the throttler reads them all every cycle.
 */
export const TRANSFER_LIMITS_STREAM = 'transferlimits';

export type TransferLimitDirection = 'DESTINATION' | 'SOURCE';
export type TransferLimitStrategy = 'fifo' | 'grouped_fifo';

/** Rucio's activity name for a limit set without one. */
export const ALL_ACTIVITIES = 'all_activities';

export type TransferLimit = Readonly<{
  id: string;
  rseExpression: string;
  /** `all_activities` when the limit applies to every activity. */
  activity: string;
  direction: TransferLimitDirection;
  /** Null: no limit on the number (never set so through the API, which defaults new limits to 0). */
  maxTransfers: number | null;
  /** Bytes that may be queued or submitted to the destination (grouped_fifo). */
  volume: number | null;
  /** Hours after which a waiting dataset is released whatever the limit (grouped_fifo). */
  deadline: number | null;
  strategy: TransferLimitStrategy | null;
  /** Observed by the throttler: active and waiting transfers under the limit. */
  transfers: number | null;
  waitings: number | null;
  createdAt: string;
  updatedAt: string;
}>;

/** A limit is identified by its expression, activity and direction (the upsert key). */
export const limitKey = (rseExpression: string, activity: string, direction: TransferLimitDirection): string =>
  `${direction}\u0000${activity}\u0000${rseExpression}`;

export type TransferLimitSet = Event<'TransferLimitSet', { limit: TransferLimit }>;
export type TransferLimitDeleted = Event<
  'TransferLimitDeleted',
  { id: string; rseExpression: string; activity: string; direction: TransferLimitDirection; deletedAt: string }
>;
/** The throttler's count of what a limit covers, recorded when it changes. */
export type TransferLimitStatsRecorded = Event<
  'TransferLimitStatsRecorded',
  { id: string; transfers: number; waitings: number; at: string }
>;

export type TransferLimitEvent = TransferLimitSet | TransferLimitDeleted | TransferLimitStatsRecorded;

export const TRANSFER_LIMIT_EVENT_TYPES = eventTypes<TransferLimitEvent>({
  TransferLimitSet: true,
  TransferLimitDeleted: true,
  TransferLimitStatsRecorded: true,
});

/** The limits by key. */
export type TransferLimits = Readonly<{ status: 'Limits'; limits: ReadonlyMap<string, TransferLimit> }>;

export const initialTransferLimits = (): TransferLimits => ({ status: 'Limits', limits: new Map() });

export const evolveTransferLimits = (state: TransferLimits, event: TransferLimitEvent): TransferLimits => {
  switch (event.type) {
    case 'TransferLimitSet': {
      const { limit } = event.data;
      return {
        status: 'Limits',
        limits: new Map(state.limits).set(limitKey(limit.rseExpression, limit.activity, limit.direction), limit),
      };
    }
    case 'TransferLimitDeleted': {
      const limits = new Map(state.limits);
      limits.delete(limitKey(event.data.rseExpression, event.data.activity, event.data.direction));
      return { status: 'Limits', limits };
    }
    case 'TransferLimitStatsRecorded': {
      const entry = [...state.limits].find(([, limit]) => limit.id === event.data.id);
      if (!entry) return state;
      const [key, limit] = entry;
      return {
        status: 'Limits',
        limits: new Map(state.limits).set(key, {
          ...limit,
          transfers: event.data.transfers,
          waitings: event.data.waitings,
        }),
      };
    }
    default:
      return state;
  }
};
