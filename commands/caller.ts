import { accountStreamName, type Account } from '../domain/account/account.ts';
import { accountDecider } from '../domain/account/accountDecider.ts';
import type { Caller } from '../domain/permission/policy.ts';
import { loadAggregate, type CommandContext } from './handleCommand.ts';

export const loadAccount = (context: CommandContext, account: string): Promise<Account> =>
  loadAggregate(context, accountDecider, accountStreamName(account));

/**
 * The issuer of a request with the attributes that decide its permissions, read from its own
 * stream so a freshly granted `admin` attribute counts at once.
 */
export const loadCaller = async (context: CommandContext, account: string): Promise<Caller> => {
  const state = await loadAccount(context, account);
  return { account, attributes: state.status === 'Absent' ? {} : state.attributes };
};
