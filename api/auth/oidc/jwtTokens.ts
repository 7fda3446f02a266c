import { createHash } from 'node:crypto';
import { decodeJwt, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { dateOf, type Clock } from '../../../infra/clock.ts';
import { CannotAuthenticate } from '../../../domain/shared/errors.ts';
import { formatRucioDate } from '../../../domain/shared/dates.ts';
import { mappingsOfIdentity } from '../../../projections/identity/identityQueries.ts';
import type { ReadModels } from '../../../projections/runtime/readModels.ts';
import type { SessionCheck, TokenInfo } from '../tokenStore.ts';
import { containsAll, oidcIdentity, oidcPolicy } from './oidcPolicy.ts';
import { IssuerUnavailable, type TrustedIssuers } from './trustedIssuers.ts';

/** A verified JWT: whose it is, and what it allows. */
export type JwtInfo = TokenInfo & Readonly<{ audience: string; scope: string }>;

/** Asymmetric algorithms only: an `HS256` token would be checked with a public key as its secret. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/**
 * How far the provider's clock may be ahead of ours for `nbf` (Rucio allows two minutes). Expiry
 * is checked without leeway, as Rucio does.
 */
const CLOCK_TOLERANCE_SECONDS = 120;

/** Verified tokens are remembered this long (never past their expiry); access is checked on every use. */
const CACHE_MS = 30_000;
const CACHE_ENTRIES = 10_000;

/** A compact JWS: three base64url parts. Service tokens never look like this. */
export const looksLikeJwt = (token: string): boolean => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);

const refused = (reason: string) => new CannotAuthenticate(`Cannot authenticate with the OIDC token: ${reason}.`);

const spaced = (value: unknown): string =>
  Array.isArray(value) ? value.map(String).join(' ') : typeof value === 'string' ? value : '';

/**
 * JWTs of trusted providers as tokens (Rucio's `validate_jwt`): the signature with the issuer's
 * published keys, the issuer, expiry and not-before, the audience and scope the `oidc` section
 * of /config requires; then the identity `SUB=<sub>, ISS=<iss>` must be mapped to an account (its
 * default one, else the one it was mapped to first) whose access goes on (api/auth/sessionAccess.ts:
 * the account active, the identity mapped, no revocation of its tokens since the token's `iat`).
 */
export class JwtTokens {
  private readonly cache = new Map<string, { info: JwtInfo; cachedAt: number }>();

  constructor(
    private readonly issuers: TrustedIssuers,
    private readonly readModels: ReadModels,
    private readonly sessions: SessionCheck,
    private readonly clock: Clock,
  ) {}

  /** The token's owner; throws CannotAuthenticate saying why it is refused. */
  async authenticate(token: string, now = dateOf(this.clock)): Promise<JwtInfo> {
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.cache.get(key);
    let info: JwtInfo;
    if (cached && now.getTime() - cached.cachedAt < CACHE_MS && cached.info.expiresAt > now) info = cached.info;
    else {
      info = await this.verify(token, now);
      if (this.cache.size >= CACHE_ENTRIES) this.cache.clear();
      this.cache.set(key, { info, cachedAt: now.getTime() });
    }
    if (info.expiresAt <= now) throw refused(`it expired at ${formatRucioDate(info.expiresAt)}`);
    if (!(await this.sessions.allows(info)))
      throw refused(
        `the access of ${info.identity} to account ${info.account} has ended (account suspended, identity removed, or tokens revoked since the token was issued)`,
      );
    return info;
  }

  private async verify(token: string, now: Date): Promise<JwtInfo> {
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(token);
    } catch {
      throw refused('it is not a JWT');
    }
    if (typeof unverified.iss !== 'string') throw refused('it names no issuer');
    const issuer = this.issuers.byIssuer(unverified.iss);
    if (!issuer) throw refused(`its issuer ${unverified.iss} is not trusted by this server`);
    const policy = await oidcPolicy(this.readModels);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, (header) => issuer.keyFor(header, policy), {
        issuer: unverified.iss,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp', 'iat'],
        currentDate: now,
      }));
    } catch (error) {
      throw this.explain(error);
    }
    const expiresAt = new Date(payload.exp! * 1000);
    if (expiresAt <= now) throw refused(`it expired at ${formatRucioDate(expiresAt)}`);
    if (!containsAll(payload.aud, policy.audience))
      throw refused(`its audience "${spaced(payload.aud)}" does not include "${policy.audience.join(' ')}"`);
    if (!containsAll(payload.scope, policy.scope))
      throw refused(`its scope "${spaced(payload.scope)}" does not include "${policy.scope.join(' ')}"`);
    const identity = oidcIdentity(payload.sub!, unverified.iss);
    const account = await this.accountOf(identity);
    if (!account) throw refused(`the identity ${identity} is mapped to no account`);
    return {
      account,
      identity,
      identityType: 'OIDC',
      issuedAt: new Date(payload.iat! * 1000),
      issuedElsewhere: true,
      expiresAt,
      audience: spaced(payload.aud),
      scope: spaced(payload.scope),
    };
  }

  /** Rucio's `get_default_account(..., oldest_if_none=True)`. */
  private async accountOf(identity: string): Promise<string | undefined> {
    const mappings = await mappingsOfIdentity(this.readModels, identity, 'OIDC');
    const chosen =
      mappings.find((mapping) => mapping.isDefault) ??
      [...mappings].sort((a, b) => a.since.localeCompare(b.since) || a.account.localeCompare(b.account))[0];
    return chosen?.account;
  }

  private explain(error: unknown): Error {
    if (error instanceof IssuerUnavailable) return refused(error.message);
    if (error instanceof joseErrors.JWTExpired) return refused('it has expired');
    if (error instanceof joseErrors.JWTClaimValidationFailed) return refused(error.message.replace(/\.$/, ''));
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) return refused('its signature does not verify');
    if (error instanceof joseErrors.JOSEAlgNotAllowed) return refused('it is signed with an algorithm not accepted');
    if (error instanceof joseErrors.JOSEError) return refused(error.message.replace(/\.$/, ''));
    return error instanceof Error ? error : new Error(String(error));
  }
}
