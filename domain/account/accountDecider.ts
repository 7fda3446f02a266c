import { unknownCommand, type Decider } from '../shared/decider.ts';
import type { Command } from '../shared/event.ts';
import { AccountNotFound, Duplicate, RucioException, UnsupportedOperation, ValueError } from '../shared/errors.ts';
import { evolveAccount, initialAccount, type Account, type AccountEvent, type AccountType } from './account.ts';

export type CreateAccount = Command<
  'CreateAccount',
  { account: string; accountType: AccountType; email: string | null }
>;
export type UpdateAccount = Command<'UpdateAccount', { account: string; key: string; value: unknown }>;
export type DeleteAccount = Command<'DeleteAccount', { account: string }>;
export type AddAccountAttribute = Command<'AddAccountAttribute', { account: string; key: string; value: string }>;
export type RemoveAccountAttribute = Command<'RemoveAccountAttribute', { account: string; key: string }>;
export type RevokeAccountSessions = Command<'RevokeAccountSessions', { account: string }>;

/** `POST /import`: a new account is a USER account with the email; a known one takes the email given. */
export type ImportAccount = Command<'ImportAccount', { account: string; email: string | null }>;

export type AccountCommand =
  | CreateAccount
  | UpdateAccount
  | DeleteAccount
  | AddAccountAttribute
  | RemoveAccountAttribute
  | ImportAccount
  | RevokeAccountSessions;

/** The account every deployment is administered by: it can be neither deleted nor suspended. */
const ROOT = 'root';

/** Rucio keeps this name for multi-VO setups; it can never be created. */
const RESERVED_ACCOUNT_NAMES = new Set(['super_root']);

export const createAccount = ({ data, metadata }: CreateAccount, state: Account): AccountEvent[] => {
  if (RESERVED_ACCOUNT_NAMES.has(data.account)) {
    throw new RucioException(`The name "${data.account}" cannot be used.`);
  }
  if (state.status !== 'Absent') throw new Duplicate(`Account ID '${data.account}' already exists!`);
  return [
    {
      type: 'AccountCreated',
      data: {
        account: data.account,
        accountType: data.accountType,
        email: data.email,
        createdAt: metadata.now.toISOString(),
      },
    },
  ];
};

/**
 * Rucio applies `{key: value}` pairs one by one. `status` moves between ACTIVE and SUSPENDED,
 * `email` is replaced; any other key or status value is refused (Rucio ignores unknown keys).
 */
export const updateAccount = ({ data, metadata }: UpdateAccount, state: Account): AccountEvent[] => {
  if (state.status === 'Absent' || state.status === 'DELETED') {
    throw new AccountNotFound(`Account with ID '${data.account}' cannot be found`);
  }
  const at = metadata.now.toISOString();
  switch (data.key) {
    case 'status': {
      if (data.value === 'SUSPENDED') {
        if (data.account === ROOT)
          throw new UnsupportedOperation(
            'The root account cannot be suspended: nobody could administer the service any more.',
          );
        return state.status === 'SUSPENDED'
          ? []
          : [{ type: 'AccountSuspended', data: { account: data.account, suspendedAt: at } }];
      }
      if (data.value === 'ACTIVE') {
        return state.status === 'ACTIVE'
          ? []
          : [{ type: 'AccountReactivated', data: { account: data.account, reactivatedAt: at } }];
      }
      throw new ValueError(`Unknown value ${String(data.value)}`);
    }
    case 'email': {
      if (data.value !== null && typeof data.value !== 'string')
        throw new ValueError(`Unknown value ${String(data.value)}`);
      return state.email === data.value
        ? []
        : [{ type: 'AccountEmailChanged', data: { account: data.account, email: data.value, changedAt: at } }];
    }
    default:
      throw new ValueError(`Unknown key ${data.key}`);
  }
};

/** Deletion is soft: the account keeps its record with status DELETED and cannot come back. */
export const deleteAccount = ({ data, metadata }: DeleteAccount, state: Account): AccountEvent[] => {
  if (state.status !== 'ACTIVE') throw new AccountNotFound(`Account with ID '${data.account}' cannot be found`);
  if (data.account === ROOT)
    throw new UnsupportedOperation('The root account cannot be deleted: nobody could administer the service any more.');
  return [{ type: 'AccountDeleted', data: { account: data.account, deletedAt: metadata.now.toISOString() } }];
};

export const addAccountAttribute = ({ data }: AddAccountAttribute, state: Account): AccountEvent[] => {
  if (state.status !== 'ACTIVE') throw new AccountNotFound(`Account ID '${data.account}' does not exist`);
  if (Object.hasOwn(state.attributes, data.key))
    throw new Duplicate(`Key ${data.key} already exist for account ${data.account}!`);
  return [{ type: 'AccountAttributeAdded', data: { account: data.account, key: data.key, value: data.value } }];
};

export const removeAccountAttribute = ({ data }: RemoveAccountAttribute, state: Account): AccountEvent[] => {
  if (state.status === 'Absent' || !Object.hasOwn(state.attributes, data.key)) {
    throw new AccountNotFound(`Attribute (${data.key}) does not exist for the account ${data.account}!`);
  }
  return [{ type: 'AccountAttributeRemoved', data: { account: data.account, key: data.key } }];
};

/**
 * Ends every session of the account opened so far. A deleted account has none left to end (its
 * tokens stopped with the deletion), so it is not found, as for every other change.
 */
export const revokeAccountSessions = ({ data, metadata }: RevokeAccountSessions, state: Account): AccountEvent[] => {
  if (state.status === 'Absent' || state.status === 'DELETED')
    throw new AccountNotFound(`Account with ID '${data.account}' cannot be found`);
  return [{ type: 'AccountSessionsRevoked', data: { account: data.account, revokedAt: metadata.now.toISOString() } }];
};

export const importAccount = ({ data, metadata }: ImportAccount, state: Account): AccountEvent[] => {
  if (state.status === 'Absent') {
    return createAccount(
      { type: 'CreateAccount', data: { account: data.account, accountType: 'USER', email: data.email }, metadata },
      state,
    );
  }
  if (!data.email) return [];
  return updateAccount(
    { type: 'UpdateAccount', data: { account: data.account, key: 'email', value: data.email }, metadata },
    state,
  );
};

export const decideAccount = (command: AccountCommand, state: Account): AccountEvent[] => {
  switch (command.type) {
    case 'CreateAccount':
      return createAccount(command, state);
    case 'UpdateAccount':
      return updateAccount(command, state);
    case 'DeleteAccount':
      return deleteAccount(command, state);
    case 'AddAccountAttribute':
      return addAccountAttribute(command, state);
    case 'RemoveAccountAttribute':
      return removeAccountAttribute(command, state);
    case 'ImportAccount':
      return importAccount(command, state);
    case 'RevokeAccountSessions':
      return revokeAccountSessions(command, state);
    default:
      return unknownCommand('account', command);
  }
};

export const accountDecider: Decider<Account, AccountCommand, AccountEvent> = {
  name: 'account',
  initialState: initialAccount,
  evolve: evolveAccount,
  decide: decideAccount,
};
