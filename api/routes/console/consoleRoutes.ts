import { loadCaller } from '../../../commands/caller.ts';
import { SETTINGS } from '../../../domain/config/settings.ts';
import { consolePermissions } from '../../../domain/permission/consolePolicy.ts';
import { consoleRoles } from '../../../domain/permission/operationsPolicy.ts';
import { allowOnly } from '../../../domain/permission/policy.ts';
import { AccessDenied } from '../../../domain/shared/errors.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import type { RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

/**
 * What the web console (console/, served at /console by api/consoleFiles.ts) asks besides the
 * API itself:
 *
 * - `GET /console/login-options` (no token): the logins this server offers a browser: userpass
 *   always, x509 when a TLS-terminating proxy passes the DN (DMS_X509_DN_HEADER), OIDC with the
 *   nicknames of the trusted providers (DMS_OIDC_PROVIDERS).
 * - `GET /console/session`: who the token is (account, identity), whether the console shows
 *   the admins' pages and root's actions, and `may`: per action the API's own permission asked
 *   for the caller (domain/permission/consolePolicy.ts). The API decides every request anyway;
 *   this only spares a plain account buttons that would be refused.
 * - `GET /console/settings` (admins): every option the service reads, with its default and what
 *   it takes, so that the configuration page shows what is in force where `/config` holds
 *   nothing.
 */
export const registerConsoleRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/console/login-options',
    {
      auth: false,
      accept: JSON_ONLY,
      summary: 'The logins the console may offer: userpass, x509 (behind a proxy) and the OIDC providers’ nicknames.',
    },
    (ctx) => {
      sendJson(ctx, {
        userpass: true,
        x509: services.config.x509DnHeader !== undefined,
        oidc: services.config.oidcProviders.map((provider) => ({ nickname: provider.nickname })),
      });
    },
  );

  routes.get(
    '/console/session',
    {
      accept: JSON_ONLY,
      summary:
        'The account and identity of the token, whether the console shows the admins’ pages, and what the caller may do (`may`).',
    },
    async (ctx) => {
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      sendJson(ctx, {
        account: caller.account,
        identity: ctx.state.identity ?? null,
        ...consoleRoles(caller),
        may: consolePermissions(caller),
      });
    },
  );

  routes.get(
    '/console/settings',
    {
      accept: JSON_ONLY,
      summary: 'Every configuration option the service reads: section, option, default, what it takes (admins).',
      raises: [AccessDenied],
    },
    async (ctx) => {
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      allowOnly(consoleRoles(caller).admin, `Account ${caller.account} can not read the settings`);
      sendJson(
        ctx,
        Object.values(SETTINGS).map((setting) => ({
          section: setting.section,
          option: setting.option,
          default: setting.defaultValue,
          allowed: setting.allowed,
        })),
      );
    },
  );
};
