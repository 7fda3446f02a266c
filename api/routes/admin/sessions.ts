import { revokeAccountSessions } from '../../../commands/account/accountCommands.ts';
import { AccountNotFound } from '../../../domain/shared/errors.ts';
import { assertValidName } from '../../../domain/shared/names.ts';
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
    { summary: 'Ends every session (token) of an account at once (admins).', raises: [AccountNotFound] },
    async (ctx) => {
      const account = ctx.params.account!;
      assertValidName('account', account);
      await ok(ctx, services, (metadata) => revokeAccountSessions(services.commands, { account }, metadata));
    },
  );
};
