import { eventTypes, type Event } from '../shared/event.ts';

export const ACCOUNT_TYPES = ['USER', 'GROUP', 'SERVICE'] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];
export type AccountStatus = 'ACTIVE' | 'SUSPENDED' | 'DELETED';

export const accountStreamName = (account: string): string => `account-${account}`;

export type AccountCreated = Event<
  'AccountCreated',
  { account: string; accountType: AccountType; email: string | null; createdAt: string }
>;
export type AccountEmailChanged = Event<
  'AccountEmailChanged',
  { account: string; email: string | null; changedAt: string }
>;
export type AccountSuspended = Event<'AccountSuspended', { account: string; suspendedAt: string }>;
export type AccountReactivated = Event<'AccountReactivated', { account: string; reactivatedAt: string }>;
export type AccountDeleted = Event<'AccountDeleted', { account: string; deletedAt: string }>;
export type AccountAttributeAdded = Event<'AccountAttributeAdded', { account: string; key: string; value: string }>;
export type AccountAttributeRemoved = Event<'AccountAttributeRemoved', { account: string; key: string }>;
/** Every token issued to the account up to `revokedAt` stops working (sessions, not history, but who ended them is). */
export type AccountSessionsRevoked = Event<'AccountSessionsRevoked', { account: string; revokedAt: string }>;

export type AccountEvent =
  | AccountCreated
  | AccountEmailChanged
  | AccountSuspended
  | AccountReactivated
  | AccountDeleted
  | AccountAttributeAdded
  | AccountAttributeRemoved
  | AccountSessionsRevoked;

/** Every account event type, each once: a type added to the union and missing here does not compile. */
export const ACCOUNT_EVENT_TYPES = eventTypes<AccountEvent>({
  AccountCreated: true,
  AccountEmailChanged: true,
  AccountSuspended: true,
  AccountReactivated: true,
  AccountDeleted: true,
  AccountAttributeAdded: true,
  AccountAttributeRemoved: true,
  AccountSessionsRevoked: true,
});

export type Account =
  | { status: 'Absent' }
  | {
      status: AccountStatus;
      account: string;
      accountType: AccountType;
      email: string | null;
      attributes: Readonly<Record<string, string>>;
    };

export const initialAccount = (): Account => ({ status: 'Absent' });

/** Rebuilds an account from its events; unknown events leave it unchanged. */
export const evolveAccount = (state: Account, event: AccountEvent): Account => {
  switch (event.type) {
    case 'AccountCreated':
      return {
        status: 'ACTIVE',
        account: event.data.account,
        accountType: event.data.accountType,
        email: event.data.email,
        attributes: {},
      };
    default:
      break;
  }
  if (state.status === 'Absent') return state;
  switch (event.type) {
    case 'AccountEmailChanged':
      return { ...state, email: event.data.email };
    case 'AccountSuspended':
      return { ...state, status: 'SUSPENDED' };
    case 'AccountReactivated':
      return { ...state, status: 'ACTIVE' };
    case 'AccountDeleted':
      return { ...state, status: 'DELETED' };
    case 'AccountAttributeAdded':
      return { ...state, attributes: { ...state.attributes, [event.data.key]: event.data.value } };
    case 'AccountAttributeRemoved': {
      const { [event.data.key]: _removed, ...attributes } = state.attributes;
      return { ...state, attributes };
    }
    default:
      return state;
  }
};
