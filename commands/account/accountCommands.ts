import { accountStreamName, type AccountType } from '../../domain/account/account.ts';
import { accountDecider, type AccountCommand } from '../../domain/account/accountDecider.ts';
import { ACCOUNT_PERMISSIONS, requirePermission } from '../../domain/permission/policy.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { handleCommand, type CommandContext } from '../handleCommand.ts';

const onAccount = (context: CommandContext, account: string, command: AccountCommand) =>
  handleCommand(context, accountDecider, accountStreamName(account), command);

export const createAccount = async (
  context: CommandContext,
  data: { account: string; accountType: AccountType; email: string | null },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.addAccount(caller), caller, 'add account');
  return onAccount(context, data.account, { type: 'CreateAccount', data, metadata });
};

/**
 * Applies `{key: value}` pairs in order, as Rucio's PUT /accounts/{account} does, but as one
 * decision: a refused pair leaves the pairs before it unwritten too.
 */
export const updateAccount = async (
  context: CommandContext,
  data: { account: string; changes: Readonly<Record<string, unknown>> },
  metadata: CommandMetadata,
) => {
  const changes = Object.entries(data.changes);
  if (changes.length === 0) return { position: undefined };
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.updateAccount(caller), caller, `change ${changes[0]![0]}  of the account`);
  const commands = changes.map(([key, value]): AccountCommand => ({
    type: 'UpdateAccount',
    data: { account: data.account, key, value },
    metadata,
  }));
  return handleCommand(context, accountDecider, accountStreamName(data.account), commands);
};

export const deleteAccount = async (context: CommandContext, data: { account: string }, metadata: CommandMetadata) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.deleteAccount(caller), caller, 'delete account');
  return onAccount(context, data.account, { type: 'DeleteAccount', data, metadata });
};

export const addAccountAttribute = async (
  context: CommandContext,
  data: { account: string; key: string; value: string },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.addAttribute(caller), caller, 'add attributes');
  return onAccount(context, data.account, { type: 'AddAccountAttribute', data, metadata });
};

export const removeAccountAttribute = async (
  context: CommandContext,
  data: { account: string; key: string },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.deleteAttribute(caller), caller, 'delete attribute');
  return onAccount(context, data.account, { type: 'RemoveAccountAttribute', data, metadata });
};

/** DELETE /admin/accounts/{account}/tokens: every token of the account issued so far stops working. */
export const revokeAccountSessions = async (
  context: CommandContext,
  data: { account: string },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.revokeSessions(caller), caller, 'revoke the tokens of an account');
  return onAccount(context, data.account, { type: 'RevokeAccountSessions', data, metadata });
};
