import { addScope } from '../../../commands/scope/scopeCommands.ts';
import { AccountNotFound, ScopeNotFound } from '../../../domain/shared/errors.ts';
import { assertValidName } from '../../../domain/shared/names.ts';
import { accountsCollection, type AccountDocument } from '../../../projections/account/accounts.ts';
import { scopesCollection, type ScopeDocument } from '../../../projections/scope/scopes.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import { created, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

export const registerScopeRoutes = (routes: RouteTable, services: Services): void => {
  const scopes = () => services.readModels.collection<ScopeDocument>(scopesCollection);

  routes.get('/scopes/', { accept: JSON_ONLY }, async (ctx) => {
    // A JSON list (not a stream) in Rucio; scope names are short, so it stays small.
    const names: string[] = [];
    for await (const scope of scopes().find({}, { sort: { _id: 1 } })) names.push(scope.scope);
    sendJson(ctx, names);
  });

  routes.get('/scopes/:account/scopes', { accept: JSON_ONLY }, async (ctx) => {
    const account = ctx.params.account!;
    if (!(await services.readModels.collection<AccountDocument>(accountsCollection).get(account))) {
      throw new AccountNotFound(`Account ID '${account}' does not exist`);
    }
    const owned = await scopes().find({ account }, { sort: { _id: 1 } }).toArray();
    if (owned.length === 0) throw new ScopeNotFound(`no scopes found for account ID '${account}'`);
    sendJson(ctx, owned.map((scope) => scope.scope));
  });

  routes.post('/scopes/:account/:scope', {}, async (ctx) => {
    assertValidName('scope', ctx.params.scope!);
    await created(ctx, services, (metadata) => addScope(services.commands, { scope: ctx.params.scope!, account: ctx.params.account! }, metadata));
  });
};
