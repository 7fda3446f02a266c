import { formatRucioDate } from '../../../domain/shared/dates.ts';
import { CannotAuthenticate, CannotAuthorize, InvalidRequest, RucioError } from '../../../domain/shared/errors.ts';
import { LoginFailed } from '../../auth/oidc/oidcLogin.ts';
import { IssuerUnavailable } from '../../auth/oidc/trustedIssuers.ts';
import { errorHeaderValue } from '../../errorAnswers.ts';
import { sendText } from '../../http.ts';
import type { RouteOptions, RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';

const OCTET = 'application/octet-stream';
const HTML = 'text/html';
const NOT_OFFERED = 'OIDC authentication is not supported by this server.';
const NOT_FINALIZED = 'Cannot finalize your token request, no authorization content returned from the auth server';
const NOT_AUTHORIZED = 'Cannot authorize token request.';

/** Rucio's OIDC views: CORS for the caller's origin, and no caching of what carries a token. */
const setOidcHeaders = (ctx: AppContext, contentType: string, exposed?: string): void => {
  ctx.set('Access-Control-Allow-Origin', ctx.get('Origin') || 'None');
  ctx.set('Access-Control-Allow-Headers', ctx.get('Access-Control-Request-Headers') || 'None');
  ctx.set('Access-Control-Allow-Methods', '*');
  ctx.set('Access-Control-Allow-Credentials', 'true');
  if (exposed) ctx.set('Access-Control-Expose-Headers', exposed);
  ctx.set('Content-Type', contentType);
  ctx.set('Cache-Control', ['no-cache, no-store, max-age=0, must-revalidate', 'post-check=0, pre-check=0']);
  ctx.set('Pragma', 'no-cache');
};

const clientAddress = (ctx: AppContext): string | null => ctx.get('X-Forwarded-For') || ctx.ip || null;

const flag = (value: string): boolean => value === 'True' || value === 'true';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

const page = (title: string, paragraphs: readonly string[]): string =>
  `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
  `<body><h1>${escapeHtml(title)}</h1>${paragraphs.map((text) => `<p>${text}</p>`).join('')}</body></html>\n`;

/** A browser's error: a page for the person, Rucio's error headers for programs. */
const sendErrorPage = (ctx: AppContext, status: number, exceptionClass: string, message: string): void => {
  ctx.set('ExceptionClass', errorHeaderValue(exceptionClass));
  ctx.set('ExceptionMessage', errorHeaderValue(message));
  sendText(ctx, page('Login failed', [escapeHtml(message)]), status, 'text/html; charset=utf-8');
};

/** Why the provider's answer led nowhere, for the client: the flow's own reasons, or a provider out of reach. */
const reasonOf = (error: unknown): string | undefined =>
  error instanceof LoginFailed || error instanceof IssuerUnavailable
    ? error.message
    : error instanceof RucioError && error.httpStatus === 401
      ? error.message
      : undefined;

/**
 * The OpenID Connect login routes (Rucio's `OIDC`, `RedirectOIDC`, `CodeOIDC`, `TokenOIDC`,
 * `RefreshOIDC` views); the flow itself is api/auth/oidc/oidcLogin.ts. Without
 * DMS_OIDC_PROVIDERS every one answers that OIDC is not offered, as before.
 */
export const registerOidcRoutes = (routes: RouteTable, services: Services): void => {
  const { oidc } = services;
  const requireOidc = (ctx: AppContext): void => {
    if (!oidc.enabled) {
      setOidcHeaders(ctx, OCTET);
      throw new CannotAuthenticate(NOT_OFFERED);
    }
  };
  const base: RouteOptions = { auth: false, commonHeaders: false };

  routes.get(
    '/auth/oidc',
    {
      ...base,
      accept: [OCTET],
      summary:
        'Starts an OIDC login: X-Svc-Account, X-Svc-Client-Authorize-Scope, -Audience, -Issuer (a provider nickname), -Auto, -Polling, -Refresh-Lifetime.',
      success: {
        status: 200,
        type: OCTET,
        description:
          'An empty body; in X-Svc-OIDC-Auth-URL the provider’s authorization URL (Auto) or this server’s /auth/oidc_redirect?<code> to open in a browser.',
      },
      raises: [CannotAuthenticate],
    },
    async (ctx) => {
      requireOidc(ctx);
      setOidcHeaders(ctx, OCTET);
      const optional = (name: string): string | undefined => ctx.get(name) || undefined;
      const url = await oidc.login.start({
        account: optional('X-Svc-Account'),
        scope: optional('X-Svc-Client-Authorize-Scope'),
        audience: optional('X-Svc-Client-Authorize-Audience'),
        issuer: optional('X-Svc-Client-Authorize-Issuer'),
        auto: flag(ctx.get('X-Svc-Client-Authorize-Auto')),
        polling: flag(ctx.get('X-Svc-Client-Authorize-Polling')),
        refreshLifetime: optional('X-Svc-Client-Authorize-Refresh-Lifetime'),
        appId: ctx.get('X-Svc-AppID') || 'unknown',
        ip: clientAddress(ctx),
      });
      ctx.set('X-Svc-OIDC-Auth-URL', url);
      sendText(ctx, '', 200, OCTET);
    },
  );

  routes.get(
    '/auth/oidc_redirect',
    {
      ...base,
      accept: [OCTET, HTML],
      summary:
        'The URL /auth/oidc gave a browser: redirects to the provider. With X-Svc-Client-Fetch-Token: True, hands over the token of the finished login (the code is the whole query string).',
      success: {
        status: 303,
        type: HTML,
        description:
          'A redirect to the provider; with X-Svc-Client-Fetch-Token: True, 200 with the token in X-Svc-Auth-Token and its expiry in X-Svc-Auth-Token-Expires.',
      },
      raises: [CannotAuthenticate],
    },
    async (ctx) => {
      requireOidc(ctx);
      const code = ctx.querystring;
      if (ctx.get('X-Svc-Client-Fetch-Token') === 'True') {
        setOidcHeaders(ctx, OCTET, 'X-Svc-Auth-Token, X-Svc-Auth-Token-Expires');
        const issued = code ? await oidc.login.fetchToken(code).catch(loginRefusal) : undefined;
        // Until the user has logged in at the provider, a polling client gets this and asks again.
        if (!issued) throw new CannotAuthenticate(NOT_FINALIZED);
        ctx.set('X-Svc-Auth-Token', issued.token);
        ctx.set('X-Svc-Auth-Token-Expires', formatRucioDate(issued.expiresAt));
        sendText(ctx, '', 200, OCTET);
        return;
      }
      setOidcHeaders(ctx, HTML);
      const target = code ? await oidc.login.redirectTarget(code) : undefined;
      if (!target) {
        sendErrorPage(ctx, 401, 'CannotAuthenticate', NOT_FINALIZED);
        return;
      }
      // Rucio's 303: the browser follows with a GET whatever brought it here.
      ctx.status = 303;
      ctx.redirect(target);
    },
  );

  routes.get(
    '/auth/oidc_code',
    {
      ...base,
      accept: [OCTET, HTML],
      summary:
        'Where the provider sends a browser back (code and state): finishes the login, and shows the code to paste into the client (or, for a polling client, that it may go on).',
      success: { status: 200, type: HTML, description: 'A page for the person at the browser.' },
      raises: [CannotAuthenticate, InvalidRequest],
    },
    async (ctx) => {
      requireOidc(ctx);
      setOidcHeaders(ctx, HTML);
      let result;
      try {
        result = await oidc.login.finish(new URLSearchParams(ctx.querystring));
      } catch (error) {
        const reason = reasonOf(error);
        if (reason === undefined) throw error;
        services.logger.info({ reason }, 'OIDC login refused');
        sendErrorPage(ctx, 401, 'CannotAuthenticate', `${NOT_FINALIZED}: ${reason}`);
        return;
      }
      if (result.kind === 'fetchcode') {
        sendText(
          ctx,
          page('Logged in', [
            'Copy this code into the terminal where your client waits, then press enter:',
            `<code>${escapeHtml(result.code)}</code>`,
          ]),
        );
      } else if (result.kind === 'polling') {
        sendText(ctx, page('Logged in', ['Your client fetches its token by itself now; you may close this page.']));
      } else {
        sendErrorPage(ctx, 400, 'InvalidRequest', 'Cannot recognize and process your request');
      }
    },
  );

  routes.get(
    '/auth/oidc_token',
    {
      ...base,
      accept: [OCTET],
      summary: 'Where the provider sends an automatic (X-Svc-Client-Authorize-Auto) login back: the token at once.',
      success: {
        status: 200,
        type: OCTET,
        description: 'An empty body; the token in X-Svc-Auth-Token, its expiry in X-Svc-Auth-Token-Expires.',
      },
      raises: [CannotAuthorize, InvalidRequest],
    },
    async (ctx) => {
      requireOidc(ctx);
      setOidcHeaders(ctx, OCTET);
      const result = await oidc.login.finish(new URLSearchParams(ctx.querystring)).catch(authorizationRefusal);
      if (result.kind !== 'token') throw new InvalidRequest('');
      ctx.set('X-Svc-Auth-Token', result.token.token);
      ctx.set('X-Svc-Auth-Token-Expires', formatRucioDate(result.token.expiresAt));
      sendText(ctx, '', 200, OCTET);
    },
  );

  routes.get(
    '/auth/oidc_refresh',
    {
      ...base,
      accept: [OCTET],
      summary:
        'A new token for one whose OIDC login kept a refresh token (scope offline_access): X-Svc-Account and X-Svc-Auth-Token.',
      success: {
        status: 200,
        type: OCTET,
        description:
          'An empty body; the new token in X-Svc-Auth-Token and its expiry (seconds since 1970) in X-Svc-Auth-Token-Expires; both empty when the token cannot be refreshed.',
      },
      raises: [CannotAuthorize],
    },
    async (ctx) => {
      requireOidc(ctx);
      setOidcHeaders(ctx, OCTET, 'X-Svc-Auth-Token');
      const account = ctx.get('X-Svc-Account');
      const token = ctx.get('X-Svc-Auth-Token');
      if (!account || !token) throw new CannotAuthorize(NOT_AUTHORIZED);
      const refreshed = await oidc.login.refresh(token, account).catch(authorizationRefusal);
      ctx.set('X-Svc-Auth-Token', refreshed?.token ?? '');
      ctx.set('X-Svc-Auth-Token-Expires', refreshed ? String(Math.floor(refreshed.expiresAt.getTime() / 1000)) : '');
      sendText(ctx, '', 200, OCTET);
    },
  );
};

/** /auth/oidc_token and /auth/oidc_refresh refuse with Rucio's CannotAuthorize, the reason appended. */
const authorizationRefusal = (error: unknown): never => {
  const reason = reasonOf(error);
  if (reason === undefined) throw error;
  throw new CannotAuthorize(`${NOT_AUTHORIZED} ${reason}`);
};

/** A fetch whose login cannot be finished (the identity lost its access meanwhile). */
const loginRefusal = (error: unknown): never => {
  const reason = reasonOf(error);
  if (reason === undefined) throw error;
  throw new CannotAuthenticate(`${NOT_FINALIZED}: ${reason}`);
};
