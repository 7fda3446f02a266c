import { createHash, randomBytes } from 'node:crypto';
import { dateOf, type Clock } from '../../infra/clock.ts';
import type { IdentityType } from '../../domain/identity/identity.ts';
import type { Collection, CollectionSpec, Document, ReadStore } from '../../infra/readstore/readStore.ts';
import type { Session } from './sessionAccess.ts';

export type TokenInfo = Session & Readonly<{ expiresAt: Date }>;

/** Whether the session a token stands for may go on (api/auth/sessionAccess.ts); default: always. */
export type SessionCheck = Readonly<{ allows(session: Session): Promise<boolean> }>;

type TokenDocument = Document & {
  account: string;
  identity: string;
  identityType: IdentityType;
  appId: string;
  ip: string | null;
  createdAt: string;
  expiresAt: string;
};

/**
 * Tokens are sessions, not domain history, so they are kept in the read store rather than as
 * events (every API process sees them; a rebuild of the projections leaves them alone). Only the
 * SHA-256 of a token is stored: a copy of the store gives nobody a usable token.
 */
const tokensCollection: CollectionSpec = { name: 'auth_tokens', indexes: [{ fields: ['account', 'expiresAt'] }] };

/**
 * Validated tokens are remembered this long, but their expiry, and whether their account and
 * identity still give access, are checked on every use.
 */
const CACHE_MS = 30_000;
const CACHE_ENTRIES = 10_000;

export class TokenStore {
  private readonly tokens: Collection<TokenDocument>;
  private readonly cache = new Map<string, { info: TokenInfo; cachedAt: number }>();

  constructor(
    readStore: ReadStore,
    private readonly lifetimeSeconds: number,
    private readonly clock: Clock,
    private readonly sessions: SessionCheck = { allows: async () => true },
  ) {
    this.tokens = readStore.collection<TokenDocument>(tokensCollection);
  }

  /**
   * Issues a token `<account>-<identity>-<appid>-<32 hex>` (Rucio's shape) valid for the lifetime;
   * `label` stands for the identity in it where that is long or personal (an OIDC subject), or
   * where Rucio does not use it whole (SSH: `ssh:pubkey`, not the key).
   */
  async issue(input: {
    account: string;
    identity: string;
    identityType: IdentityType;
    appId: string;
    ip: string | null;
    label?: string;
    now?: Date;
  }) {
    const now = input.now ?? dateOf(this.clock);
    // Expired tokens of the account go when it gets a new one, as in Rucio.
    await this.tokens.deleteMany({ account: input.account, expiresAt: { $lt: now.toISOString() } });
    const token = `${input.account}-${input.label ?? input.identity}-${input.appId}-${randomBytes(16).toString('hex')}`;
    const expiresAt = new Date(now.getTime() + this.lifetimeSeconds * 1000);
    await this.tokens.insertOne({
      _id: hashToken(token),
      account: input.account,
      identity: input.identity,
      identityType: input.identityType,
      appId: input.appId,
      ip: input.ip,
      createdAt: now.toISOString(),
      expiresAt: expiresAt.toISOString(),
    });
    return { token, expiresAt };
  }

  /** The token's owner, or undefined when the token is unknown, expired, or its access has ended. */
  async validate(token: string, now = dateOf(this.clock)): Promise<TokenInfo | undefined> {
    const info = await this.lookUp(token, now);
    if (!info || info.expiresAt <= now) return undefined;
    return (await this.sessions.allows(info)) ? info : undefined;
  }

  private async lookUp(token: string, now: Date): Promise<TokenInfo | undefined> {
    const key = hashToken(token);
    const cached = this.cache.get(key);
    if (cached && now.getTime() - cached.cachedAt < CACHE_MS) return cached.info;
    const document = await this.tokens.get(key);
    if (!document) return undefined;
    const info: TokenInfo = {
      account: document.account,
      identity: document.identity,
      identityType: document.identityType,
      issuedAt: new Date(document.createdAt),
      expiresAt: new Date(document.expiresAt),
    };
    if (this.cache.size >= CACHE_ENTRIES) this.cache.clear();
    this.cache.set(key, { info, cachedAt: now.getTime() });
    return info;
  }
}

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
