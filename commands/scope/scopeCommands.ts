import { ACCOUNT_PERMISSIONS, requirePermission } from '../../domain/permission/policy.ts';
import { addScope as decideAddScope, evolveScope, initialScope, scopeStreamName, type Scope, type ScopeEvent } from '../../domain/scope/scope.ts';
import { AccountNotFound } from '../../domain/shared/errors.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadAccount, loadCaller } from '../caller.ts';
import { handleCommand, loadState, type Aggregate, type CommandContext } from '../handleCommand.ts';

export const scopeAggregate: Aggregate<Scope, ScopeEvent> = { name: 'scope', initialState: initialScope, evolve: evolveScope };

export const loadScope = async (context: CommandContext, scope: string): Promise<Scope> =>
  (await loadState(context, scopeStreamName(scope), scopeAggregate)).state;

export const addScope = async (context: CommandContext, data: { scope: string; account: string }, metadata: CommandMetadata) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(ACCOUNT_PERMISSIONS.addScope(caller), caller, 'add scope');
  const owner = await loadAccount(context, data.account);
  if (owner.status !== 'ACTIVE') throw new AccountNotFound(`Account ID '${data.account}' does not exist`);
  return handleCommand(
    context,
    {
      streamName: scopeStreamName(data.scope),
      aggregate: scopeAggregate,
      decide: (state) => decideAddScope({ type: 'AddScope', data, metadata }, state),
    },
    { metadata },
  );
};
