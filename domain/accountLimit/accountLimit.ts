import { eventTypes, type Event } from '../shared/event.ts';
import { InvalidObject } from '../shared/errors.ts';

/**
 * The quotas of one account: local limits per RSE and global limits per RSE expression, in bytes
 * (-1 = unlimited). The account's and the RSE's existence, and the caller's right to set them,
 * are facts the command handler checks before deciding.
 */
export const accountLimitsStreamName = (account: string): string => `accountlimits-${account}`;

export type LocalAccountLimitSet = Event<
  'LocalAccountLimitSet',
  { account: string; rseId: string; rse: string; bytes: number }
>;
export type LocalAccountLimitRemoved = Event<
  'LocalAccountLimitRemoved',
  { account: string; rseId: string; rse: string }
>;
export type GlobalAccountLimitSet = Event<
  'GlobalAccountLimitSet',
  { account: string; rseExpression: string; bytes: number }
>;
export type GlobalAccountLimitRemoved = Event<'GlobalAccountLimitRemoved', { account: string; rseExpression: string }>;

export type AccountLimitEvent =
  LocalAccountLimitSet | LocalAccountLimitRemoved | GlobalAccountLimitSet | GlobalAccountLimitRemoved;

/** Every account limit event type, each once: a type added to the union and missing here does not compile. */
export const ACCOUNT_LIMIT_EVENT_TYPES = eventTypes<AccountLimitEvent>({
  LocalAccountLimitSet: true,
  LocalAccountLimitRemoved: true,
  GlobalAccountLimitSet: true,
  GlobalAccountLimitRemoved: true,
});

export type AccountLimits = Readonly<{
  status: 'Tracked';
  /** Keyed by RSE id. */
  local: Readonly<Record<string, number>>;
  /** Keyed by RSE expression. */
  global: Readonly<Record<string, number>>;
}>;

export const initialAccountLimits = (): AccountLimits => ({ status: 'Tracked', local: {}, global: {} });

export const evolveAccountLimits = (state: AccountLimits, event: AccountLimitEvent): AccountLimits => {
  switch (event.type) {
    case 'LocalAccountLimitSet':
      return { ...state, local: { ...state.local, [event.data.rseId]: event.data.bytes } };
    case 'LocalAccountLimitRemoved': {
      const { [event.data.rseId]: _removed, ...local } = state.local;
      return { ...state, local };
    }
    case 'GlobalAccountLimitSet':
      return { ...state, global: { ...state.global, [event.data.rseExpression]: event.data.bytes } };
    case 'GlobalAccountLimitRemoved': {
      const { [event.data.rseExpression]: _removed, ...global } = state.global;
      return { ...state, global };
    }
    default:
      return state;
  }
};

/** A limit is a whole number of bytes, or -1 for no limit; anything else is refused. */
export const limitBytes = (value: unknown): number => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < -1) {
    throw new InvalidObject(
      `Problem validating bytes: ${JSON.stringify(value)} is not an integer of at least -1 (-1 means no limit)`,
    );
  }
  return value;
};
