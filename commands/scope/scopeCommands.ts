import { ACCOUNT_PERMISSIONS, requirePermission } from '../../domain/permission/policy.ts';
import { scopeStreamName, type Scope } from '../../domain/scope/scope.ts';
import { scopeDecider } from '../../domain/scope/scopeDecider.ts';
import { AccountNotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadAccount, loadCaller } from '../caller.ts';
import { handleCommand, loadAggregate, type CommandContext } from '../handleCommand.ts';
import { loadNameSchema } from '../config/configCommands.ts';

export const loadScope = (context: CommandContext, scope: string): Promise<Scope> =>
  loadAggregate(context, scopeDecider, scopeStreamName(scope));

export const addScope = async (
  context: CommandContext,
  data: { scope: string; account: string },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.addScope(caller), caller, 'add scope');
  const owner = await loadAccount(context, data.account);
  if (owner.status !== 'ACTIVE') throw new AccountNotFound(`Account ID '${data.account}' does not exist`);
  const nameSchema = await loadNameSchema(context);
  return handleCommand(context, scopeDecider, scopeStreamName(data.scope), {
    type: 'AddScope',
    data: { ...data, nameSchema },
    metadata,
  });
};
