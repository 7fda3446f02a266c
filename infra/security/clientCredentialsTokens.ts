import { decodeJwt } from 'jose';
import { isAcceptableIssuerUrl, type OidcProviderConfig } from '../oidcProviders.ts';
import { errorMessage, isRecord } from '../narrowing.ts';

/**
 * Tokens this service asks a trusted OpenID provider for on its own behalf (Rucio's
 * `request_token`): the client credentials grant, as the client of the providers file
 * (DMS_OIDC_PROVIDERS), with the audience and scope of what the token is for (a storage's URLs,
 * an FTS server). Each token is kept, by audience and scope, and handed out again while it has
 * more than the asked lifetime left (Rucio's `token_min_lifetime`); after that a new one is asked
 * for, so a token is refreshed before it expires. Several askers of one token share one request.
 * A provider that refuses or does not answer gives no token (null), as Rucio's does; why is kept
 * in `lastError`.
 */

export type ClientTokensOptions = Readonly<{
  /** The clock the kept tokens' lifetimes are read against (milliseconds). */
  now?: () => number;
  /** Deadline of one request to the provider (default 5 s). */
  timeoutMs?: number;
}>;

type Kept = Readonly<{ token: string; expiresAt: number }>;

export class ClientCredentialsTokens {
  private tokenEndpoint: string | undefined;
  private readonly kept = new Map<string, Kept>();
  private readonly asking = new Map<string, Promise<string | null>>();
  /** Tokens asked of the provider (not handed out from what was kept). */
  requested = 0;
  lastError: string | null = null;

  constructor(
    readonly provider: OidcProviderConfig,
    private readonly options: ClientTokensOptions = {},
  ) {}

  /** A token for `audience` and `scope` that stays valid for at least `minLifetimeSeconds`, or null. */
  async token(audience: string, scope: string, minLifetimeSeconds: number): Promise<string | null> {
    const key = `audience=${audience};scope=${scope}`;
    const kept = this.kept.get(key);
    if (kept && kept.expiresAt - this.now() > minLifetimeSeconds * 1000) return kept.token;
    let asking = this.asking.get(key);
    if (!asking) {
      asking = this.ask(key, audience, scope).finally(() => this.asking.delete(key));
      this.asking.set(key, asking);
    }
    return asking;
  }

  private async ask(key: string, audience: string, scope: string): Promise<string | null> {
    try {
      const endpoint = await this.endpoint();
      this.requested += 1;
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          accept: 'application/json',
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${basicCredentials(this.provider.clientId, this.provider.clientSecret)}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', audience, scope }).toString(),
        redirect: 'error',
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000),
      });
      const body: unknown = await response.json().catch(() => null);
      if (!response.ok || !isRecord(body) || typeof body.access_token !== 'string')
        throw new Error(
          `the provider answered ${response.status}${isRecord(body) && typeof body.error === 'string' ? ` (${body.error})` : ''}`,
        );
      const token = body.access_token;
      const { exp } = decodeJwt(token);
      if (typeof exp !== 'number') throw new Error('the provider’s token has no expiry');
      this.kept.set(key, { token, expiresAt: exp * 1000 });
      this.lastError = null;
      return token;
    } catch (error) {
      this.lastError = `No token from ${this.provider.issuer} for audience ${audience}, scope ${scope}: ${errorMessage(error)}`;
      return null;
    }
  }

  /** The provider's token endpoint, from its discovery document (kept once known). */
  private async endpoint(): Promise<string> {
    if (this.tokenEndpoint) return this.tokenEndpoint;
    const url = `${this.provider.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const response = await fetch(url, {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000),
    });
    const body: unknown = await response.json().catch(() => null);
    const endpoint = isRecord(body) ? body.token_endpoint : undefined;
    // The endpoint is trusted as the issuer is: https, or plain http on the loopback only.
    if (!response.ok || typeof endpoint !== 'string' || !isAcceptableIssuerUrl(endpoint))
      throw new Error(`its discovery document (${url}) names no acceptable token_endpoint`);
    this.tokenEndpoint = endpoint;
    return endpoint;
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }
}

/** HTTP Basic credentials as OAuth 2 wants them: each part form-encoded first (RFC 6749 §2.3.1). */
const basicCredentials = (clientId: string, secret: string): string =>
  Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64');

/**
 * The token sources of the trusted providers, by nickname, made on first use. `forIssuer` picks
 * Rucio's `admin_issuer` (the `oidc.admin_issuer` setting), or the first provider of the file.
 */
export class ServiceTokens {
  private readonly sources = new Map<string, ClientCredentialsTokens>();

  constructor(
    private readonly providers: readonly OidcProviderConfig[],
    private readonly options: ClientTokensOptions = {},
  ) {}

  /** Whether any provider is configured at all. */
  get available(): boolean {
    return this.providers.length > 0;
  }

  /** The token source of the provider named (its nickname), or of the first provider; undefined when none fits. */
  forIssuer(nickname: string | null): ClientCredentialsTokens | undefined {
    const provider = nickname ? this.providers.find((candidate) => candidate.nickname === nickname) : this.providers[0];
    if (!provider) return undefined;
    let source = this.sources.get(provider.nickname);
    if (!source) this.sources.set(provider.nickname, (source = new ClientCredentialsTokens(provider, this.options)));
    return source;
  }
}
