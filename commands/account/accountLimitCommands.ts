import { accountLimitsStreamName } from '../../domain/accountLimit/accountLimit.ts';
import { accountLimitsDecider, type AccountLimitCommand } from '../../domain/accountLimit/accountLimitDecider.ts';
import { isAdmin, requirePermission, type Caller } from '../../domain/permission/policy.ts';
import { mayManageGlobalLimit, mayManageLocalLimit } from '../../domain/permission/rsePolicy.ts';
import { evaluateRseExpression, type RseFacts } from '../../domain/rse/rseExpression.ts';
import { rseNotFound } from '../../domain/rse/rseDecider.ts';
import { AccountNotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadAccount, loadCaller } from '../caller.ts';
import { handleCommand, type CommandContext } from '../handleCommand.ts';
import { loadRse } from '../rse/rseCommands.ts';

const onLimits = (context: CommandContext, command: AccountLimitCommand) =>
  handleCommand(context, accountLimitsDecider, accountLimitsStreamName(command.data.account), command);

const requireActiveAccount = async (context: CommandContext, account: string): Promise<void> => {
  const state = await loadAccount(context, account);
  if (state.status !== 'ACTIVE') throw new AccountNotFound(`Account ${account} does not exist`);
};

/** The RSE a local limit is about, with the `country` attribute that country admins go by. */
const localLimitFacts = async (context: CommandContext, metadata: CommandMetadata, rse: string, what: string) => {
  const state = await loadRse(context, rse);
  if (state.status !== 'Active') throw rseNotFound(rse);
  const caller = await loadCaller(context, metadata.account);
  requirePermission(mayManageLocalLimit(caller, state.attributes.country), caller, what);
  return { rseId: state.id, rse: state.rse };
};

export const setLocalAccountLimit = async (
  context: CommandContext,
  data: { account: string; rse: string; bytes: number },
  metadata: CommandMetadata,
) => {
  const rse = await localLimitFacts(context, metadata, data.rse, 'set account limits');
  await requireActiveAccount(context, data.account);
  return onLimits(context, {
    type: 'SetLocalAccountLimit',
    data: { account: data.account, ...rse, bytes: data.bytes },
    metadata,
  });
};

export const removeLocalAccountLimit = async (
  context: CommandContext,
  data: { account: string; rse: string },
  metadata: CommandMetadata,
) => {
  const rse = await localLimitFacts(context, metadata, data.rse, 'delete account limits');
  await requireActiveAccount(context, data.account);
  return onLimits(context, { type: 'RemoveLocalAccountLimit', data: { account: data.account, ...rse }, metadata });
};

/** Country admins may act on a global limit when they administer every RSE its expression selects. */
const requireGlobalPermission = (
  caller: Caller,
  rseExpression: string,
  rses: readonly RseFacts[],
  what: string,
): void => {
  const countries = evaluateRseExpression(rseExpression, rses).map((rse) => rse.attributes.country);
  requirePermission(mayManageGlobalLimit(caller, countries), caller, what);
};

/**
 * A global limit needs an expression that parses and selects at least one RSE now (Rucio stores
 * any text and fails later, whenever the limits are listed).
 */
export const setGlobalAccountLimit = async (
  context: CommandContext,
  data: { account: string; rseExpression: string; bytes: number; rses: readonly RseFacts[] },
  metadata: CommandMetadata,
) => {
  const selected = evaluateRseExpression(data.rseExpression, data.rses);
  const caller = await loadCaller(context, metadata.account);
  requireGlobalPermission(caller, data.rseExpression, selected, 'set account limits');
  await requireActiveAccount(context, data.account);
  return onLimits(context, {
    type: 'SetGlobalAccountLimit',
    data: { account: data.account, rseExpression: data.rseExpression, bytes: data.bytes },
    metadata,
  });
};

/** Admins may remove a global limit whatever its expression selects today. */
export const removeGlobalAccountLimit = async (
  context: CommandContext,
  data: { account: string; rseExpression: string; rses: readonly RseFacts[] },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  if (!isAdmin(caller)) requireGlobalPermission(caller, data.rseExpression, data.rses, 'delete global account limits');
  await requireActiveAccount(context, data.account);
  return onLimits(context, {
    type: 'RemoveGlobalAccountLimit',
    data: { account: data.account, rseExpression: data.rseExpression },
    metadata,
  });
};
