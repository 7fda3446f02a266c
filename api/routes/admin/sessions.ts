import { pathOf, validName } from '../../params.ts';
import { revokeAccountSessions } from '../../../commands/account/accountCommands.ts';
import { AccountNotFound } from '../../../domain/shared/errors.ts';
import { ok, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

/**
 * `DELETE /admin/accounts/{account}/tokens` (our own prefix, admins only; Rucio has no such
 * route): every token issued to the account so far stops working at once, wherever it is used.
 * The account logs in again to get a new one. Suspending or deleting the account, or unmapping
 * the identity a token was issued for, ends its tokens too.
 */
export const registerSessionRoutes = (routes: RouteTable, services: Services): void => {
  routes.delete(
    '/admin/accounts/:account/tokens',
    {
      params: pathOf({ account: validName('account') }),
      summary: 'Ends every session (token) of an account at once (admins).',
      raises: [AccountNotFound],
    },
    async (ctx, { params }) => {
      await ok(ctx, services, (metadata) => revokeAccountSessions(services.commands, params, metadata));
    },
  );
};
