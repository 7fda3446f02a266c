import { evolveAccount, initialAccount, accountStreamName, type Account, type AccountEvent } from '../domain/account/account.ts';
import type { Caller } from '../domain/permission/policy.ts';
import { loadState, type Aggregate, type CommandContext } from './handleCommand.ts';

export const accountAggregate: Aggregate<Account, AccountEvent> = {
  name: 'account',
  initialState: initialAccount,
  evolve: evolveAccount,
};

export const loadAccount = async (context: CommandContext, account: string): Promise<Account> =>
  (await loadState(context, accountStreamName(account), accountAggregate)).state;

/**
 * The issuer of a request with the attributes that decide its permissions, read from its own
 * stream so a freshly granted `admin` attribute counts at once.
 */
export const loadCaller = async (context: CommandContext, account: string): Promise<Caller> => {
  const state = await loadAccount(context, account);
  return { account, attributes: state.status === 'Absent' ? {} : state.attributes };
};
