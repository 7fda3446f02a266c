import { loadAccount } from '../../../commands/caller.ts';
import {
  checkIdentity,
  loginCandidates,
  mayLogIn,
  type CheckedIdentity,
  type LoginSubject,
} from '../../../commands/identity/authentication.ts';
import { formatRucioDate } from '../../../domain/shared/dates.ts';
import { isValidName } from '../../../domain/shared/names.ts';
import { base64Bytes, parseSshPublicKey, verifySshSignature } from '../../../infra/security/sshSignatures.ts';
import { identitiesOfAccount } from '../../../projections/identity/identityQueries.ts';
import {
  CannotAuthenticate,
  ConfigurationError,
  IdentityError,
  IdentityNotFound,
  ValueError,
} from '../../../domain/shared/errors.ts';
import { loginAttempt, throttledLogin } from '../../auth/loginAttempts.ts';
import { LoginThrottle } from '../../auth/loginThrottle.ts';
import { SshChallenges } from '../../auth/sshChallenges.ts';
import { missingHeaders } from '../../clientHeaders.ts';
import { sendText } from '../../http.ts';
import { pythonRepr } from '../../pythonRepr.ts';
import type { RouteOptions, RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
import { looksLikeJwt } from '../../auth/oidc/jwtTokens.ts';
import { registerOidcRoutes } from './oidcRoutes.ts';
const OCTET = 'application/octet-stream';
const EXPOSED = 'X-Svc-Auth-Token, X-Svc-Auth-Token-Expires, X-Svc-Auth-Account, X-Svc-Auth-Accounts';

/** The auth blueprint's own headers, kept on its error answers too. */
const setAuthHeaders = (ctx: AppContext, exposed = EXPOSED): void => {
  ctx.set('Access-Control-Allow-Origin', ctx.get('Origin') || 'None');
  ctx.set('Access-Control-Allow-Headers', ctx.get('Access-Control-Request-Headers') || 'None');
  ctx.set('Access-Control-Allow-Methods', '*');
  ctx.set('Access-Control-Allow-Credentials', 'true');
  ctx.set('Access-Control-Expose-Headers', exposed);
  ctx.set('Cache-Control', ['no-cache, no-store, max-age=0, must-revalidate', 'post-check=0, pre-check=0']);
  ctx.set('Pragma', 'no-cache');
};

const clientAddress = (ctx: AppContext): string | null => ctx.get('X-Forwarded-For') || ctx.ip || null;

/**
 * Chooses the account to log in to when the client named none: the only one, or the default
 * one; several without a default answer 206 with their names (when `allowMultiple`).
 */
const chooseAccount = (ctx: AppContext, checked: CheckedIdentity, allowMultiple: boolean): string | undefined => {
  const named = ctx.get('X-Svc-Account');
  if (named) return named;
  const candidates = loginCandidates(checked);
  if (candidates.outcome === 'unknown-identity')
    throw new IdentityError('Cannot authenticate. The identity does not exist.');
  // An unknown username and a wrong password get the same answer: names cannot be told apart.
  if (candidates.outcome === 'wrong-credentials')
    throw new IdentityNotFound('Cannot authenticate. Username/Password pair does not exist.');
  if (candidates.accounts.length === 0)
    throw new CannotAuthenticate('Cannot authenticate. The identity is mapped to no account.');
  if (candidates.accounts.length === 1) return candidates.accounts[0];
  if (candidates.defaultAccount) return candidates.defaultAccount;
  if (!allowMultiple)
    throw new CannotAuthenticate('Cannot authenticate. The identity maps to several accounts and none is the default.');
  ctx.set('X-Svc-Auth-Accounts', candidates.accounts.join(','));
  sendText(ctx, JSON.stringify(candidates.accounts), 206, OCTET);
  return undefined;
};

const issueToken = async (
  ctx: AppContext,
  services: Services,
  subject: LoginSubject,
  checked: CheckedIdentity,
  account: string,
  tokenIdentity?: string,
): Promise<void> => {
  if (!(await mayLogIn(services.commands, checked, account))) {
    throw new CannotAuthenticate(`Cannot authenticate to account ${account} with given credentials`);
  }
  const { token, expiresAt } = await services.tokens.issue({
    account,
    identity: subject.identity,
    identityType: subject.identityType,
    ...(tokenIdentity ? { label: tokenIdentity } : {}),
    appId: ctx.get('X-Svc-AppID') || 'unknown',
    ip: clientAddress(ctx),
  });
  ctx.set('X-Svc-Auth-Account', account);
  ctx.set('X-Svc-Auth-Token', token);
  ctx.set('X-Svc-Auth-Token-Expires', formatRucioDate(expiresAt));
  sendText(ctx, '', 200, OCTET);
};

/** Proxies put the client certificate's DN into a header; proxy-certificate CNs are cut off as Rucio does. */
const stripProxySuffixes = (dn: string): string => {
  let result = dn;
  for (;;) {
    const next = result.replace(/\/CN=(limited proxy|proxy|\d+)$/, '');
    if (next === result) return result;
    result = next;
  }
};

const trustedHeader = (ctx: AppContext, name: string | undefined): string | undefined =>
  name ? ctx.get(name) || undefined : undefined;

/**
 * The SSH identity of `account` whose key signed one of the account's open challenges (Rucio's
 * `get_auth_token_ssh`: every SSH identity of the account against every open challenge), with
 * the challenge closed; undefined when none did.
 */
const sshSigner = async (
  services: Services,
  challenges: SshChallenges,
  account: string,
  signature: Buffer,
): Promise<LoginSubject | undefined> => {
  const open = await challenges.open(account);
  if (open.length === 0) return undefined;
  for await (const mapping of identitiesOfAccount(services.readModels, account)) {
    if (mapping.identityType !== 'SSH') continue;
    const key = parseSshPublicKey(mapping.identity);
    const signed = key && open.find((challenge) => verifySshSignature(key, signature, challenge));
    if (!signed) continue;
    // A challenge serves one login: a signature seen on the wire cannot log in again.
    return (await challenges.use(signed)) ? { identityType: 'SSH', identity: mapping.identity } : undefined;
  }
  return undefined;
};

export const registerAuthRoutes = (routes: RouteTable, services: Services): void => {
  const login: RouteOptions = {
    auth: false,
    accept: [OCTET],
    commonHeaders: false,
    errors: { IdentityError: 401 },
    success: {
      status: 200,
      type: OCTET,
      description:
        'An empty body; the token in X-Svc-Auth-Token, its expiry in X-Svc-Auth-Token-Expires, the account in X-Svc-Auth-Account. ' +
        '206 with the account names (and X-Svc-Auth-Accounts) when the identity maps to several, none is the default and none was named in X-Svc-Account.',
    },
    raises: [CannotAuthenticate, IdentityError, IdentityNotFound],
  };

  // Password guesses are slowed down per identity and per client address (api/auth/loginThrottle.ts).
  const throttle = new LoginThrottle(services.clock);
  routes.get(
    '/auth/userpass',
    { ...login, summary: 'Logs in with X-Svc-Username and X-Svc-Password (and X-Svc-Account).' },
    async (ctx) => {
      setAuthHeaders(ctx);
      const username = ctx.get('X-Svc-Username');
      const password = ctx.get('X-Svc-Password');
      if (!username || !password)
        throw new CannotAuthenticate(
          missingHeaders(ctx, 'Cannot authenticate without passing all required arguments', [
            'X-Svc-Username',
            'X-Svc-Password',
          ]),
        );
      const subject: LoginSubject = { identityType: 'USERPASS', identity: username, password };
      await throttledLogin(ctx, services, throttle, username, async (outcome) => {
        const checked = await checkIdentity(services.commands, subject);
        outcome.credentialsValid = checked.credentialsValid;
        const account = chooseAccount(ctx, checked, true);
        if (account) await issueToken(ctx, services, subject, checked, account);
      });
    },
  );

  const x509 = async (ctx: AppContext) => {
    setAuthHeaders(ctx);
    const dn = trustedHeader(ctx, services.config.x509DnHeader);
    if (!dn) throw new CannotAuthenticate('Cannot get DN');
    const subject: LoginSubject = { identityType: 'X509', identity: stripProxySuffixes(dn) };
    const allowMultiple = ctx.get('X-Svc-Allow-Return-Multiple-Accounts').toLowerCase() === 'true';
    await loginAttempt(ctx, 'x509', subject.identity, async () => {
      const checked = await checkIdentity(services.commands, subject);
      const account = chooseAccount(ctx, checked, allowMultiple);
      if (account) await issueToken(ctx, services, subject, checked, account);
    });
  };
  const x509Login = {
    ...login,
    summary: 'Logs in with the client certificate’s DN, passed by a TLS-terminating proxy in DMS_X509_DN_HEADER.',
  };
  for (const path of ['/auth/x509', '/auth/x509/webui', '/auth/x509_proxy']) routes.get(path, x509Login, x509);

  routes.get(
    '/auth/gss',
    {
      ...login,
      summary:
        'Logs in with a Kerberos principal passed by a proxy in DMS_GSS_REMOTE_USER_HEADER, to the account in X-Svc-Account.',
    },
    async (ctx) => {
      setAuthHeaders(ctx, 'X-Svc-Auth-Token');
      const principal = trustedHeader(ctx, services.config.gssRemoteUserHeader);
      const account = ctx.get('X-Svc-Account');
      if (!principal || !account) throw new ValueError('Account and REMOTE_USER must be set.');
      const subject: LoginSubject = { identityType: 'GSS', identity: principal };
      await loginAttempt(ctx, 'gss', principal, async () =>
        issueToken(ctx, services, subject, await checkIdentity(services.commands, subject), account),
      );
    },
  );

  const validate: RouteOptions = {
    auth: false,
    accept: [OCTET],
    commonHeaders: false,
    summary: 'Tells the account, identity and expiry of the token in X-Svc-Auth-Token.',
    success: {
      status: 200,
      type: OCTET,
      description: 'A Python dict literal: account, identity, lifetime, audience, authz_scope, vo.',
    },
    raises: [CannotAuthenticate],
  };
  routes.get('/auth/validate', validate, async (ctx) => {
    setAuthHeaders(ctx, 'X-Svc-Auth-Token');
    const token = ctx.get('X-Svc-Auth-Token');
    if (!token) throw new ValueError(missingHeaders(ctx, 'Token must be set', ['X-Svc-Auth-Token']));
    const info =
      (await services.tokens.validate(token)) ??
      (services.oidc.enabled && looksLikeJwt(token) ? await services.oidc.jwt.authenticate(token) : undefined);
    if (!info) throw new CannotAuthenticate('Cannot authenticate with given credentials');
    const body = pythonRepr({
      account: info.account,
      identity: info.identity,
      lifetime: info.expiresAt,
      // A provider's JWT tells what it was issued for; this service's own tokens carry neither.
      audience: 'audience' in info && typeof info.audience === 'string' ? info.audience : null,
      authz_scope: 'scope' in info && typeof info.scope === 'string' ? info.scope : null,
      vo: 'def',
    });
    sendText(ctx, body, 200, OCTET);
  });

  const challenges = new SshChallenges(services.readModels.store, services.clock);
  routes.get(
    '/auth/ssh_challenge_token',
    {
      ...login,
      summary: 'A challenge for an SSH login to the account in X-Svc-Account: sign it within ten seconds.',
      success: {
        status: 200,
        type: OCTET,
        description:
          'An empty body; the challenge in X-Svc-SSH-Challenge-Token, its expiry in X-Svc-SSH-Challenge-Token-Expires.',
      },
    },
    async (ctx) => {
      setAuthHeaders(ctx, 'X-Svc-Auth-Token');
      const account = ctx.get('X-Svc-Account');
      if (!account) throw new ValueError(missingHeaders(ctx, 'Account must be set', ['X-Svc-Account']));
      const exists =
        isValidName('account', account) && (await loadAccount(services.commands, account)).status !== 'Absent';
      if (!exists) throw new CannotAuthenticate(`Cannot generate challenge for account ${account}`);
      const { challenge, expiresAt } = await challenges.issue(account, clientAddress(ctx));
      ctx.set('X-Svc-SSH-Challenge-Token', challenge);
      ctx.set('X-Svc-SSH-Challenge-Token-Expires', formatRucioDate(expiresAt));
      sendText(ctx, '', 200, OCTET);
    },
  );
  routes.get(
    '/auth/ssh',
    {
      ...login,
      summary:
        'Logs in to the account in X-Svc-Account with X-Svc-SSH-Signature: an open challenge signed with a key of one of its SSH identities.',
      success: {
        status: 200,
        type: OCTET,
        description: 'An empty body; the token in X-Svc-Auth-Token, its expiry in X-Svc-Auth-Token-Expires.',
      },
    },
    async (ctx) => {
      setAuthHeaders(ctx, 'X-Svc-Auth-Token');
      const account = ctx.get('X-Svc-Account');
      const signatureText = ctx.get('X-Svc-SSH-Signature');
      if (!account || !signatureText)
        throw new ValueError(
          missingHeaders(ctx, 'Account and SSH signature must be set', ['X-Svc-Account', 'X-Svc-SSH-Signature']),
        );
      await throttledLogin(
        ctx,
        services,
        throttle,
        account,
        async (outcome) => {
          const signature = base64Bytes(signatureText);
          if (!signature)
            throw new CannotAuthenticate(`Cannot authenticate to account ${account} with malformed signature`);
          const subject = await sshSigner(services, challenges, account, signature);
          if (!subject)
            throw new CannotAuthenticate(`Cannot authenticate to account ${account} with given credentials`);
          outcome.credentialsValid = true;
          await issueToken(
            ctx,
            services,
            subject,
            await checkIdentity(services.commands, subject),
            account,
            'ssh:pubkey',
          );
        },
        'ssh',
      );
    },
  );

  registerOidcRoutes(routes, services);
  const saml = (ctx: AppContext) => {
    setAuthHeaders(ctx);
    throw new ConfigurationError('SAML not configured on the server side.');
  };
  const samlOptions: RouteOptions = {
    auth: false,
    commonHeaders: false,
    summary: 'SAML login: not configured on this server.',
    body: 'none',
    success: 'none',
    raises: [ConfigurationError],
  };
  routes.get('/auth/saml', samlOptions, saml);
  routes.post('/auth/saml', samlOptions, saml);
};
