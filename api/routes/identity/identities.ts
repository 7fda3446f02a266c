import { pathOf, pathText } from '../../params.ts';
import { registerIdentity } from '../../../commands/identity/identityCommands.ts';
import type { IdentityType } from '../../../domain/identity/identity.ts';
import { ValueError } from '../../../domain/shared/errors.ts';
import { checkText, LIMITS } from '../../../domain/shared/limits.ts';
import { accountsOfIdentity } from '../../../projections/identity/identityQueries.ts';
import { IDENTITY_TYPES } from '../../../domain/identity/identity.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import { created, type RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
import { isOneOf } from '../../../domain/shared/narrowing.ts';
import { convertedBy } from '../../routeInput.ts';

const CREATED = { status: 201, type: 'application/json', description: 'The JSON string "Created".' };

export const registerIdentityRoutes = (routes: RouteTable, services: Services): void => {
  const register = async (
    ctx: AppContext,
    account: string,
    identityType: IdentityType,
    identity: string,
    password: string | null,
  ) => {
    checkText('identity', identity, LIMITS.identityLength);
    checkText('email', ctx.get('X-Svc-Email'), LIMITS.emailLength);
    if (password !== null) checkText('password', password, LIMITS.passwordLength, { multiline: true });
    await created(ctx, services, (metadata) =>
      registerIdentity(
        services.commands,
        { identity, identityType, account, email: ctx.get('X-Svc-Email'), password },
        metadata,
      ),
    );
  };

  routes.put(
    '/identities/:account/userpass',
    {
      params: pathOf({ account: pathText() }),
      summary: 'Adds a USERPASS identity from X-Svc-Username, X-Svc-Password and X-Svc-Email.',
      body: 'none',
      success: CREATED,
    },
    async (ctx, { params }) => {
      const username = ctx.get('X-Svc-Username');
      const password = ctx.get('X-Svc-Password');
      if (!username || !password || !ctx.get('X-Svc-Email'))
        throw new ValueError('Username, Email and Password must be set.');
      await register(ctx, params.account, 'USERPASS', username, password);
    },
  );

  routes.put(
    '/identities/:account/x509',
    {
      params: pathOf({ account: pathText() }),
      summary: 'Adds the X509 identity of the DN in DMS_X509_DN_HEADER, with X-Svc-Email.',
      body: 'none',
      success: CREATED,
    },
    async (ctx, { params }) => {
      const dn = services.config.x509DnHeader ? ctx.get(services.config.x509DnHeader) : '';
      if (!dn || !ctx.get('X-Svc-Email')) throw new ValueError('SSL_CLIENT_S_DN and email must be set.');
      await register(ctx, params.account, 'X509', dn, null);
    },
  );

  routes.put(
    '/identities/:account/gss',
    {
      params: pathOf({ account: pathText() }),
      summary: 'Adds the GSS identity of the principal in DMS_GSS_REMOTE_USER_HEADER, with X-Svc-Email.',
      body: 'none',
      success: CREATED,
    },
    async (ctx, { params }) => {
      const principal = services.config.gssRemoteUserHeader ? ctx.get(services.config.gssRemoteUserHeader) : '';
      if (!principal || !ctx.get('X-Svc-Email')) throw new ValueError('REMOTE_USER and email must be set.');
      await register(ctx, params.account, 'GSS', principal, null);
    },
  );

  // Rucio 39.0.0rc1 always answers 500 here (a misnamed URL variable); this answers what it meant to.
  routes.get(
    '/identities/:identity_key/:type/accounts',
    {
      params: pathOf({
        identity_key: pathText(),
        type: convertedBy(pathText(), identityTypeOf).describe('USERPASS, X509, GSS, SSH, OIDC, ... (any case).'),
      }),
      accept: JSON_ONLY,
      summary: 'The accounts an identity maps to.',
    },
    async (ctx, { params }) => {
      sendJson(ctx, await accountsOfIdentity(services.readModels, params.identity_key, params.type));
    },
  );
};

/** An identity type of a path, in any case. */
const identityTypeOf = (text: string): IdentityType => {
  const identityType = text.toUpperCase();
  if (!isOneOf(IDENTITY_TYPES, identityType)) throw new ValueError(`Unknown identity type ${text}`);
  return identityType;
};
