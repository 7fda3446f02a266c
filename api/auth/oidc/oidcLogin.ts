import { createHash } from 'node:crypto';
import { jwtVerify } from 'jose';
import { checkIdentity, loginCandidates, mayLogIn } from '../../../commands/identity/authentication.ts';
import type { CommandContext } from '../../../commands/handleCommand.ts';
import { CannotAuthenticate } from '../../../domain/shared/errors.ts';
import { dateOf, type Clock } from '../../../infra/clock.ts';
import type { Logger } from '../../../infra/logger.ts';
import type { Collection, CollectionSpec, Document, ReadStore } from '../../../infra/readstore/readStore.ts';
import { findAccount } from '../../../projections/account/accountQueries.ts';
import type { ReadModels } from '../../../projections/runtime/readModels.ts';
import type { TokenStore } from '../tokenStore.ts';
import { containsAll, oidcIdentity, oidcPolicy, type OidcPolicy } from './oidcPolicy.ts';
import { lookupKey, randomCode, seal, unseal } from './sealing.ts';
import { describe, FETCH_TIMEOUT_MS, isRecord, type TrustedIssuer, type TrustedIssuers } from './trustedIssuers.ts';

/**
 * The authorization-code flow that ends in a service token (Rucio's `get_auth_oidc`,
 * `redirect_auth_oidc`, `get_token_oidc` and `refresh_cli_auth_token`), with PKCE besides
 * Rucio's `state` and `nonce`:
 *
 * 1. `start` (GET /auth/oidc) keeps a login request under a random `state` for five minutes and
 *    answers the provider's authorization URL (`auto`) or, for a browser, this service's
 *    `/auth/oidc_redirect?<code>` that leads there.
 * 2. The provider sends the browser back with `code` and `state` to `/auth/oidc_code` (browser)
 *    or `/auth/oidc_token` (auto); `finish` exchanges the code, checks the ID token (signature,
 *    issuer, audience, nonce) and finds the account: a service token is issued at once (auto),
 *    or the login is marked done for the polling client's code, or for a new code the user pastes.
 * 3. `fetchToken` (GET /auth/oidc_redirect?<code> with X-Svc-Client-Fetch-Token: True) issues the
 *    token of a done login, once. No service token is ever stored in the clear; a provider's
 *    refresh token waits in the login request (at most five minutes), then is kept sealed with
 *    the service token it belongs to.
 *
 * Login requests are session data, not history: kept in the read store (every API process sees
 * them) with their expiry, never as events.
 */

type LoginMode = 'auto' | 'browser' | 'polling';

type LoginRequestDocument = Document & {
  account: string | null;
  nickname: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  authUrl: string;
  mode: LoginMode;
  /** SHA-256 of the code the client presents at /auth/oidc_redirect; null for `auto`. */
  accessKey: string | null;
  stage: 'pending' | 'exchanging' | 'done';
  /** Who logged in, once the provider's answer checked out (browser and polling). */
  loggedIn: { account: string; identity: string; refreshToken: string | null } | null;
  refreshLifetimeHours: number | null;
  appId: string;
  ip: string | null;
  expiresAt: string;
};

/** A provider refresh token kept for a service token (scope `offline_access`), sealed with that token. */
type RefreshDocument = Document & {
  account: string;
  identity: string;
  nickname: string;
  sealedRefreshToken: string;
  issuedAt: string;
  tokenExpiresAt: string;
  /** Refreshing stops then (Rucio: `refresh_lifetime`, 96 hours by default). */
  expiresAt: string;
};

const requestsCollection: CollectionSpec = {
  name: 'oidc_login_requests',
  indexes: [{ fields: ['accessKey'] }, { fields: ['expiresAt'] }],
};
const refreshCollection: CollectionSpec = { name: 'oidc_refresh_tokens', indexes: [{ fields: ['expiresAt'] }] };

/** Rucio keeps a login request five minutes. */
const REQUEST_LIFETIME_MS = 300_000;
/** Rucio's `default_jwt_refresh_lifetime`. */
const DEFAULT_REFRESH_LIFETIME_HOURS = 96;
/** A token refreshed (or issued) this recently is answered again instead of refreshed (Rucio: five minutes). */
const REFRESH_GRACE_MS = 300_000;
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

export type StartInput = Readonly<{
  /** X-Svc-Account; without it, the identity's default account. */
  account: string | undefined;
  scope: string | undefined;
  audience: string | undefined;
  /** The provider's nickname (X-Svc-Client-Authorize-Issuer); default the first one configured. */
  issuer: string | undefined;
  auto: boolean;
  polling: boolean;
  refreshLifetime: string | undefined;
  appId: string;
  ip: string | null;
}>;

export type IssuedToken = Readonly<{ token: string; expiresAt: Date }>;

export type FinishResult =
  | Readonly<{ kind: 'token'; token: IssuedToken }>
  | Readonly<{ kind: 'fetchcode'; code: string }>
  | Readonly<{ kind: 'polling' }>;

/** A step of the flow that did not work, with the reason for the logs and the client. */
export class LoginFailed extends Error {}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

export class OidcLogin {
  private readonly requests: Collection<LoginRequestDocument>;
  private readonly refreshTokens: Collection<RefreshDocument>;

  constructor(
    private readonly issuers: TrustedIssuers,
    readStore: ReadStore,
    private readonly readModels: ReadModels,
    private readonly commands: CommandContext,
    private readonly tokens: TokenStore,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {
    this.requests = readStore.collection<LoginRequestDocument>(requestsCollection);
    this.refreshTokens = readStore.collection<RefreshDocument>(refreshCollection);
  }

  /** GET /auth/oidc: the URL the client or its user goes to next. */
  async start(input: StartInput, now = dateOf(this.clock)): Promise<string> {
    const policy = await oidcPolicy(this.readModels);
    const scope = input.scope?.trim() || policy.scope.join(' ');
    const audience = input.audience?.trim() || policy.audience.join(' ');
    if (!containsAll(scope, policy.scope) || !containsAll(audience, policy.audience))
      throw new CannotAuthenticate(
        'Requirements of scope and audience do not satisfy minimal requirements of the Rucio server.',
      );
    const issuer = this.chooseIssuer(input.issuer);
    if (input.account !== undefined && !(await findAccount(this.readModels, input.account)))
      throw new CannotAuthenticate(
        `Cannot get authentication URL from Rucio Authentication Server for account ${input.account}`,
      );
    const mode: LoginMode = input.auto ? 'auto' : input.polling ? 'polling' : 'browser';
    const redirectUri = issuer.config.redirectUris.find((uri) =>
      uri.includes(mode === 'auto' ? 'auth/oidc_token' : 'auth/oidc_code'),
    );
    if (!redirectUri)
      throw new CannotAuthenticate(
        `Could not pick any redirect URL for ${mode === 'auto' ? '/auth/oidc_token' : '/auth/oidc_code'} from the ones configured for ${issuer.nickname}.`,
      );
    const endpoints = await this.endpointsOf(issuer, policy);
    const state = randomCode();
    const nonce = randomCode();
    const codeVerifier = randomCode();
    const authUrl = new URL(endpoints.authorizationEndpoint);
    for (const [name, value] of Object.entries({
      client_id: issuer.config.clientId,
      response_type: 'code',
      redirect_uri: redirectUri,
      scope,
      audience,
      state,
      nonce,
      code_challenge: sha256(codeVerifier).toString('base64url'),
      code_challenge_method: 'S256',
    }))
      authUrl.searchParams.set(name, value);
    // OpenID Connect Core 1.0, 11: a refresh token (offline_access) is only granted after consent asked for.
    if (containsAll(scope, ['offline_access'])) authUrl.searchParams.set('prompt', 'consent');
    const accessCode = mode === 'auto' ? undefined : randomCode(24);
    const refreshLifetimeHours = parseRefreshLifetime(input.refreshLifetime);
    await this.requests.deleteMany({ expiresAt: { $lt: now.toISOString() } });
    await this.requests.insertOne({
      _id: state,
      account: input.account ?? null,
      nickname: issuer.nickname,
      nonce,
      codeVerifier,
      redirectUri,
      authUrl: authUrl.href,
      mode,
      accessKey: accessCode === undefined ? null : lookupKey(accessCode),
      stage: 'pending',
      loggedIn: null,
      refreshLifetimeHours,
      appId: input.appId,
      ip: input.ip,
      expiresAt: new Date(now.getTime() + REQUEST_LIFETIME_MS).toISOString(),
    });
    if (accessCode === undefined) return authUrl.href;
    // This service's own page that sends the browser on, at the address the provider knows it by.
    const base = new URL(redirectUri);
    return `${base.origin}${base.pathname.slice(0, base.pathname.lastIndexOf('auth/'))}auth/oidc_redirect?${accessCode}`;
  }

  /** GET /auth/oidc_redirect?<code> from a browser: where to send it, while its login is pending. */
  async redirectTarget(accessCode: string, now = dateOf(this.clock)): Promise<string | undefined> {
    const request = await this.requests.findOne({ accessKey: lookupKey(accessCode) });
    if (!request || request.expiresAt <= now.toISOString() || request.stage !== 'pending') return undefined;
    return request.authUrl;
  }

  /** GET /auth/oidc_redirect?<code> with X-Svc-Client-Fetch-Token: the token of a done login, issued once. */
  async fetchToken(accessCode: string, now = dateOf(this.clock)): Promise<IssuedToken | undefined> {
    const accessKey = lookupKey(accessCode);
    const request = await this.requests.findOne({ accessKey });
    if (!request || request.expiresAt <= now.toISOString() || !request.loggedIn) return undefined;
    // Whoever deletes it issues the token: two API processes never both do.
    if ((await this.requests.deleteOne({ _id: request._id, accessKey })) === 0) return undefined;
    const { account, identity, refreshToken } = request.loggedIn;
    const issuer = this.issuers.byNickname(request.nickname);
    if (!issuer) return undefined;
    await this.checkAccess(identity, account);
    const issued = await this.issue(account, identity, request.appId, request.ip);
    await this.keepRefreshToken(issued, account, identity, issuer, refreshToken, request.refreshLifetimeHours, now);
    return issued;
  }

  /**
   * The provider's answer at /auth/oidc_code or /auth/oidc_token (`code` and `state`, or `error`):
   * the code exchanged, the ID token checked, the account found, a service token issued.
   */
  async finish(query: URLSearchParams, now = dateOf(this.clock)): Promise<FinishResult> {
    const state = query.get('state');
    const request = state ? await this.requests.get(state) : null;
    if (!request || request.expiresAt <= now.toISOString())
      throw new LoginFailed(
        'User related Rucio OIDC session could not keep track of responses from outstanding requests.',
      );
    // One answer per request: a replayed code finds it taken.
    const claimed = await this.requests.updateOne(
      { _id: request._id, stage: 'pending' },
      { $set: { stage: 'exchanging' } },
    );
    if (claimed.modifiedCount === 0) throw new LoginFailed('this login request was already answered');
    const providerError = query.get('error');
    if (providerError)
      throw new LoginFailed(
        `the identity provider answered ${providerError}${query.get('error_description') ? `: ${query.get('error_description')}` : ''}`,
      );
    const code = query.get('code');
    if (!code) throw new LoginFailed('the identity provider sent no code');
    const issuer = this.issuers.byNickname(request.nickname);
    if (!issuer) throw new LoginFailed(`the provider ${request.nickname} is no longer configured`);
    const policy = await oidcPolicy(this.readModels);
    const answer = await this.tokenRequest(issuer, policy, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: request.redirectUri,
      code_verifier: request.codeVerifier,
    });
    const identity = await this.identityOf(issuer, policy, answer, request.nonce, now);
    const account = await this.accountFor(identity, request.account);
    const refreshToken = typeof answer.refresh_token === 'string' ? answer.refresh_token : null;
    this.logger.info({ account, identity, mode: request.mode }, 'OIDC login');
    if (request.mode === 'auto') {
      await this.requests.deleteOne({ _id: request._id });
      const issued = await this.issue(account, identity, request.appId, request.ip);
      await this.keepRefreshToken(issued, account, identity, issuer, refreshToken, request.refreshLifetimeHours, now);
      return { kind: 'token', token: issued };
    }
    // The polling client holds its code already; the browser's user gets a new one to paste.
    const fetchCode = request.mode === 'browser' ? randomCode(32) : undefined;
    await this.requests.updateOne(
      { _id: request._id },
      {
        $set: {
          stage: 'done',
          loggedIn: { account, identity, refreshToken },
          ...(fetchCode === undefined ? {} : { accessKey: lookupKey(fetchCode) }),
        },
      },
    );
    return fetchCode === undefined ? { kind: 'polling' } : { kind: 'fetchcode', code: fetchCode };
  }

  private chooseIssuer(named: string | undefined): TrustedIssuer {
    const issuer = named ? (this.issuers.byNickname(named) ?? this.issuers.byIssuer(named)) : this.issuers.all[0];
    if (!issuer)
      throw new CannotAuthenticate(
        `The identity provider ${named ?? ''} is not configured on this server (known: ${this.issuers.all.map((known) => known.nickname).join(', ')}).`,
      );
    return issuer;
  }

  private async endpointsOf(issuer: TrustedIssuer, policy: OidcPolicy) {
    try {
      return await issuer.endpoints(policy);
    } catch (error) {
      throw new CannotAuthenticate(`Cannot get authentication URL: ${describe(error)}`);
    }
  }

  private async tokenRequest(
    issuer: TrustedIssuer,
    policy: OidcPolicy,
    form: Record<string, string>,
  ): Promise<Record<string, unknown>> {
    const { tokenEndpoint } = await issuer.endpoints(policy);
    const { clientId, clientSecret } = issuer.config;
    // RFC 6749 section 2.3.1: client_secret_basic, each part form-encoded first.
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    let response: Response;
    try {
      response = await fetch(tokenEndpoint, {
        method: 'POST',
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams(form).toString(),
        redirect: 'error',
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
    } catch (error) {
      throw new LoginFailed(`the token endpoint of ${issuer.config.issuer} could not be reached: ${describe(error)}`);
    }
    const body: unknown = await response.json().catch(() => undefined);
    if (!response.ok || !isRecord(body) || typeof body.access_token !== 'string') {
      const reason = isRecord(body) ? `${String(body.error)}: ${String(body.error_description ?? '')}` : 'no JSON';
      throw new LoginFailed(`the token endpoint answered ${response.status} (${reason})`);
    }
    return body;
  }

  /** The identity the ID token names, once its signature, issuer, audience and nonce check out. */
  private async identityOf(
    issuer: TrustedIssuer,
    policy: OidcPolicy,
    answer: Record<string, unknown>,
    nonce: string,
    now: Date,
  ): Promise<string> {
    if (typeof answer.id_token !== 'string') throw new LoginFailed('the token endpoint sent no ID token');
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(answer.id_token, (header) => issuer.keyFor(header, policy), {
        issuer: issuer.config.issuer,
        audience: issuer.config.clientId,
        algorithms: ID_TOKEN_ALGORITHMS,
        clockTolerance: 120,
        requiredClaims: ['sub', 'exp'],
        currentDate: now,
      }));
    } catch (error) {
      throw new LoginFailed(`the ID token does not verify: ${describe(error)}`);
    }
    if (claims.nonce !== nonce)
      throw new LoginFailed(
        'ID token could not be associated with the Rucio OIDC Client session. This points to possible replay attack !',
      );
    return oidcIdentity(claims.sub!, issuer.config.issuer);
  }

  /** The account asked for, when the identity may log in to it; else the identity's default one. */
  private async accountFor(identity: string, named: string | null): Promise<string> {
    const checked = await checkIdentity(this.commands, { identityType: 'OIDC', identity });
    let account = named;
    if (account === null) {
      const candidates = loginCandidates(checked);
      account =
        candidates.outcome === 'accounts'
          ? (candidates.defaultAccount ?? (candidates.accounts.length === 1 ? candidates.accounts[0]! : null))
          : null;
      if (account === null) throw new LoginFailed('Cannot find your OIDC identity linked to any Rucio account');
    }
    if (!(await mayLogIn(this.commands, checked, account)))
      throw new LoginFailed(`OIDC identity '${identity}' of the '${account}' account is unknown to Rucio.`);
    return account;
  }

  private async checkAccess(identity: string, account: string): Promise<void> {
    const checked = await checkIdentity(this.commands, { identityType: 'OIDC', identity });
    if (!(await mayLogIn(this.commands, checked, account)))
      throw new LoginFailed(`OIDC identity '${identity}' of the '${account}' account is unknown to Rucio.`);
  }

  private async issue(account: string, identity: string, appId: string, ip: string | null): Promise<IssuedToken> {
    return this.tokens.issue({ account, identity, identityType: 'OIDC', appId, ip, label: 'oidc' });
  }

  private async keepRefreshToken(
    issued: IssuedToken,
    account: string,
    identity: string,
    issuer: TrustedIssuer,
    refreshToken: string | null,
    refreshLifetimeHours: number | null,
    now: Date,
  ): Promise<void> {
    if (refreshToken === null) return;
    const hours = refreshLifetimeHours ?? DEFAULT_REFRESH_LIFETIME_HOURS;
    await this.refreshTokens.deleteMany({ expiresAt: { $lt: now.toISOString() } });
    await this.refreshTokens.insertOne({
      _id: lookupKey(issued.token),
      account,
      identity,
      nickname: issuer.nickname,
      sealedRefreshToken: seal(refreshToken, issued.token),
      issuedAt: now.toISOString(),
      tokenExpiresAt: issued.expiresAt.toISOString(),
      expiresAt: new Date(now.getTime() + hours * 3_600_000).toISOString(),
    });
  }

  /**
   * GET /auth/oidc_refresh: a new service token for one whose login kept a refresh token, got
   * with that refresh token from the provider; the same token when it is less than five minutes
   * old. Undefined when the token has no refresh token (any more) or its refresh lifetime is over.
   */
  async refresh(token: string, account: string, now = dateOf(this.clock)): Promise<IssuedToken | undefined> {
    const info = await this.tokens.validate(token, now);
    if (!info || info.account !== account) throw new LoginFailed('the token is not valid for this account');
    const kept = await this.refreshTokens.get(lookupKey(token));
    if (!kept || kept.account !== account) return undefined;
    if (kept.expiresAt <= now.toISOString()) {
      await this.refreshTokens.deleteOne({ _id: kept._id });
      return undefined;
    }
    if (now.getTime() - Date.parse(kept.issuedAt) < REFRESH_GRACE_MS)
      return { token, expiresAt: new Date(kept.tokenExpiresAt) };
    const refreshToken = unseal(kept.sealedRefreshToken, token);
    const issuer = this.issuers.byNickname(kept.nickname);
    if (refreshToken === undefined || !issuer) return undefined;
    // Taken before asking the provider: two concurrent refreshes do not both spend the refresh token.
    if ((await this.refreshTokens.deleteOne({ _id: kept._id })) === 0) return undefined;
    const policy = await oidcPolicy(this.readModels);
    const answer = await this.tokenRequest(issuer, policy, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
    });
    await this.checkAccess(kept.identity, account);
    const issued = await this.issue(account, kept.identity, 'unknown', null);
    // Refreshing goes on until the end the first login set, not a new one.
    const remainingHours = (Date.parse(kept.expiresAt) - now.getTime()) / 3_600_000;
    const next = typeof answer.refresh_token === 'string' ? answer.refresh_token : null;
    await this.keepRefreshToken(issued, account, kept.identity, issuer, next, remainingHours, now);
    return issued;
  }
}

/** X-Svc-Client-Authorize-Refresh-Lifetime: hours, or "None" (the client's way of saying unset). */
const parseRefreshLifetime = (value: string | undefined): number | null => {
  if (value === undefined || value === '' || value === 'None') return null;
  const hours = Number(value);
  return Number.isFinite(hours) && hours > 0 ? hours : null;
};
