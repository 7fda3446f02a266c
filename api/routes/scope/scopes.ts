import { pathOf, pathText } from '../../params.ts';
import { addScope } from '../../../commands/scope/scopeCommands.ts';
import { AccountNotFound, ScopeNotFound } from '../../../domain/shared/errors.ts';
import { assertValidName } from '../../../domain/shared/names.ts';
import { findAccount } from '../../../projections/account/accountQueries.ts';
import { scopeNames, scopeNamesOfAccount } from '../../../projections/scope/scopeQueries.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import { created, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

export const registerScopeRoutes = (routes: RouteTable, services: Services): void => {
  routes.get('/scopes/', { accept: JSON_ONLY, summary: 'Every scope.' }, async (ctx) => {
    sendJson(ctx, await scopeNames(services.readModels));
  });

  routes.get(
    '/scopes/:account/scopes',
    {
      params: pathOf({ account: pathText() }),
      accept: JSON_ONLY,
      summary: 'The scopes an account owns.',
      raises: [AccountNotFound, ScopeNotFound],
    },
    async (ctx, { params }) => {
      const account = params.account;
      if (!(await findAccount(services.readModels, account)))
        throw new AccountNotFound(`Account ID '${account}' does not exist`);
      const owned = await scopeNamesOfAccount(services.readModels, account);
      if (owned.length === 0) throw new ScopeNotFound(`no scopes found for account ID '${account}'`);
      sendJson(ctx, owned);
    },
  );

  routes.post(
    '/scopes/:account/:scope',
    {
      params: pathOf({ account: pathText(), scope: pathText() }),
      summary: 'Adds a scope owned by an account.',
      body: 'none',
      raises: [AccountNotFound],
    },
    async (ctx, { params }) => {
      assertValidName('scope', params.scope);
      await created(ctx, services, (metadata) =>
        addScope(services.commands, { scope: params.scope, account: params.account }, metadata),
      );
    },
  );
};
