import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTHeaderParameters } from 'jose';
import type { Clock } from '../../../infra/clock.ts';
import { isAcceptableIssuerUrl, type OidcProviderConfig } from '../../../infra/oidcProviders.ts';
import type { Collection, CollectionSpec, Document, ReadStore } from '../../../infra/readstore/readStore.ts';

/** What this service uses of a provider's discovery document. */
export type ProviderMetadata = Readonly<{
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
}>;

/** Why a key or the metadata could not be had; the message is meant for the client. */
export class IssuerUnavailable extends Error {}

/** What an API process last learned of an issuer, kept for `dms auth issuers` (every process writes its own fetches). */
export type IssuerStatusDocument = Document & {
  nickname: string;
  issuer: string;
  discoveredAt: string | null;
  keysFetchedAt: string | null;
  keyIds: string[];
  lastError: string | null;
  lastErrorAt: string | null;
};

export const issuerStatusCollection: CollectionSpec = { name: 'oidc_issuers', indexes: [] };

/** How long one fetch from a provider may take before it counts as unreachable. */
export const FETCH_TIMEOUT_MS = 5000;

/** How often keys may be fetched and how old they may grow: the `oidc` section of /config. */
export type KeyPolicy = Readonly<{ refreshIntervalMs: number; maxAgeMs: number }>;

type KeySet = Readonly<{ resolve: ReturnType<typeof createLocalJWKSet>; keyIds: string[]; fetchedAt: number }>;

const fetchJson = async (url: string): Promise<unknown> => {
  const response = await fetch(url, {
    headers: { accept: 'application/json' },
    redirect: 'error',
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
};

export const describe = (error: unknown): string => {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${FETCH_TIMEOUT_MS / 1000} s`;
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
};

const stringField = (object: Record<string, unknown>, field: string): string => {
  const value = object[field];
  if (typeof value !== 'string' || value === '') throw new Error(`its discovery document has no ${field}`);
  return value;
};

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One trusted provider: its discovery document and signing keys, fetched when first needed (a
 * provider that is down while the service starts is no error), kept, and fetched again when a
 * token names a key id they lack, or when older than the policy's maximum age. Fetches are
 * rate-limited per process: whatever tokens arrive, at most one fetch per refresh interval, and
 * only one at a time, so no client can make the service hammer the provider. A failed refresh
 * keeps the keys already known.
 */
export class TrustedIssuer {
  private metadata: ProviderMetadata | undefined;
  private keys: KeySet | undefined;
  private lastAttemptAt = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<void> | undefined;

  constructor(
    readonly config: OidcProviderConfig,
    private readonly statuses: Collection<IssuerStatusDocument>,
    private readonly clock: Clock,
  ) {}

  get nickname(): string {
    return this.config.nickname;
  }

  /** The provider's endpoints (fetched on first use). */
  async endpoints(policy: KeyPolicy): Promise<ProviderMetadata> {
    if (!this.metadata) await this.refresh(policy);
    if (!this.metadata) throw new IssuerUnavailable(this.unreachable());
    return this.metadata;
  }

  /** The public key a token's header names, for jose's `jwtVerify`. */
  async keyFor(header: JWTHeaderParameters, policy: KeyPolicy, now = this.clock.now()) {
    if (!this.keys || now - this.keys.fetchedAt > policy.maxAgeMs) await this.refresh(policy);
    if (!this.keys) throw new IssuerUnavailable(this.unreachable());
    try {
      return await this.keys.resolve(header);
    } catch (error) {
      if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
    }
    // A key id not seen yet: the provider may have rotated its keys.
    await this.refresh(policy);
    try {
      return await this.keys.resolve(header);
    } catch (error) {
      if (error instanceof joseErrors.JWKSNoMatchingKey)
        throw new IssuerUnavailable(
          `the token is signed with a key${header.kid ? ` (kid ${header.kid})` : ''} that ${this.config.issuer} does not publish`,
        );
      throw error;
    }
  }

  /** Fetches the discovery document and keys now, whatever the interval (`dms auth issuers --check`). */
  async fetchNow(): Promise<{ keyIds: readonly string[]; error: string | undefined }> {
    this.lastAttemptAt = this.clock.now();
    this.inFlight ??= this.fetchAll().finally(() => (this.inFlight = undefined));
    await this.inFlight;
    return { keyIds: this.keys?.keyIds ?? [], error: this.lastError };
  }

  private unreachable(): string {
    return `the issuer ${this.config.issuer} could not be reached${this.lastError ? ` (${this.lastError})` : ''}; try again later`;
  }

  private lastError: string | undefined;

  /**
   * Fetches the discovery document (when missing) and the keys, unless a fetch is under way (its
   * result is awaited) or the last one began less than the refresh interval ago (then nothing
   * happens: the caller works with what is known).
   */
  private async refresh(policy: KeyPolicy): Promise<void> {
    if (this.inFlight) return this.inFlight;
    if (this.clock.now() - this.lastAttemptAt < policy.refreshIntervalMs) return;
    this.lastAttemptAt = this.clock.now();
    this.inFlight = this.fetchAll().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async fetchAll(): Promise<void> {
    try {
      let discovered = false;
      if (!this.metadata) {
        this.metadata = await this.discover();
        discovered = true;
      }
      const jwks = await fetchJson(this.metadata.jwksUri);
      if (!isRecord(jwks) || !Array.isArray(jwks.keys)) throw new Error(`${this.metadata.jwksUri} is not a JWK set`);
      const keySet: JSONWebKeySet = { keys: jwks.keys.filter(isRecord) };
      const keyIds = keySet.keys.map((key) => (typeof key.kid === 'string' ? key.kid : '(no kid)'));
      this.keys = { resolve: createLocalJWKSet(keySet), keyIds, fetchedAt: this.clock.now() };
      this.lastError = undefined;
      const at = new Date(this.clock.now()).toISOString();
      await this.record({
        keysFetchedAt: at,
        keyIds,
        lastError: null,
        lastErrorAt: null,
        ...(discovered ? { discoveredAt: at } : {}),
      });
    } catch (error) {
      this.lastError = describe(error);
      await this.record({ lastError: this.lastError, lastErrorAt: new Date(this.clock.now()).toISOString() });
    }
  }

  private async discover(): Promise<ProviderMetadata> {
    const { issuer } = this.config;
    const document = await fetchJson(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
    if (!isRecord(document)) throw new Error('its discovery document is not a JSON object');
    // OpenID Connect Discovery 1.0, section 4.3: the document must name the issuer it came from.
    if (stringField(document, 'issuer') !== issuer)
      throw new Error(`its discovery document names the issuer ${String(document.issuer)}`);
    const metadata: ProviderMetadata = {
      issuer,
      authorizationEndpoint: stringField(document, 'authorization_endpoint'),
      tokenEndpoint: stringField(document, 'token_endpoint'),
      jwksUri: stringField(document, 'jwks_uri'),
    };
    for (const url of [metadata.authorizationEndpoint, metadata.tokenEndpoint, metadata.jwksUri]) {
      if (!isAcceptableIssuerUrl(new URL(url).origin)) throw new Error(`its discovery document names ${url}`);
    }
    return metadata;
  }

  private async record(fields: Partial<IssuerStatusDocument>): Promise<void> {
    const { nickname, issuer } = this.config;
    const initial: Record<string, unknown> = {
      discoveredAt: null,
      keysFetchedAt: null,
      keyIds: [],
      lastError: null,
      lastErrorAt: null,
    };
    // MongoDB refuses a field in both $set and $setOnInsert.
    for (const field of Object.keys(fields)) delete initial[field];
    try {
      await this.statuses.updateOne(
        { _id: nickname },
        { $set: { nickname, issuer, ...fields }, $setOnInsert: initial },
        { upsert: true },
      );
    } catch {
      // The status is for operators; a read store hiccup must not fail the token being checked.
    }
  }
}

/** The trusted providers of DMS_OIDC_PROVIDERS, by nickname and by issuer. */
export class TrustedIssuers {
  readonly all: readonly TrustedIssuer[];

  constructor(providers: readonly OidcProviderConfig[], readStore: ReadStore, clock: Clock) {
    const statuses = readStore.collection<IssuerStatusDocument>(issuerStatusCollection);
    this.all = providers.map((provider) => new TrustedIssuer(provider, statuses, clock));
  }

  byNickname(nickname: string): TrustedIssuer | undefined {
    return this.all.find((issuer) => issuer.nickname === nickname);
  }

  /** The provider whose issuer a token names; a trailing slash makes no difference. */
  byIssuer(issuer: string): TrustedIssuer | undefined {
    const wanted = issuer.replace(/\/$/, '');
    return this.all.find((candidate) => candidate.config.issuer.replace(/\/$/, '') === wanted);
  }
}
