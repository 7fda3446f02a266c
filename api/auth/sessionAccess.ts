import type { IdentityType } from '../../domain/identity/identity.ts';
import { findAccount } from '../../projections/account/accountQueries.ts';
import { identityMappedSince } from '../../projections/identity/identityQueries.ts';
import type { ProjectionProgress } from '../../projections/runtime/projectionProgress.ts';
import type { ReadModels } from '../../projections/runtime/readModels.ts';

/**
 * Who a token was issued to, and when. `issuedElsewhere`: the token is a provider's JWT, not one
 * of this service's logins, so its identity may well have been mapped after it was issued.
 */
export type Session = Readonly<{
  account: string;
  identity: string;
  identityType: IdentityType;
  issuedAt: Date;
  issuedElsewhere?: boolean;
}>;

/** What decides whether an account's sessions may go on: its status, its mapping, its last revocation. */
type Access = Readonly<{
  active: boolean;
  mappedSince: string | undefined;
  revokedAt: string | undefined;
  /** The read models' version (ProjectionProgress.appliedVersion) these facts were read at. */
  version: bigint;
}>;

const CACHE_ENTRIES = 10_000;

/**
 * A session lasts while its access does: the account ACTIVE (not suspended, not deleted), the
 * identity it logged in with still mapped to it, and no revocation of the account's tokens since
 * the token was issued (a suspension counts as one, so reactivating the account does not bring
 * old tokens back; nor does mapping the identity again). Times compare the clocks of the API
 * processes that issued the token and recorded the change, which must agree (NTP). Read from the read models on every request; a write that ends access
 * answers only once they show it (read your writes), so the next request with the token fails.
 *
 * The facts of each account and identity are remembered with the version the read models had
 * reached when they were read, and used again only while that version has not moved: any event
 * applied since by any projection group, whatever it is, makes the next request read them again. A process that learns
 * the version only by asking (an API beside a separate projector) reads them every time.
 */
export class SessionAccess {
  private readonly cache = new Map<string, Access>();

  constructor(
    private readonly readModels: ReadModels,
    private readonly progress: Pick<ProjectionProgress, 'appliedVersion'>,
  ) {}

  async allows(session: Session): Promise<boolean> {
    const access = await this.accessOf(session);
    const issuedAt = session.issuedAt.toISOString();
    // A mapping granted again after the token was issued is a new mapping: the old token stays ended.
    if (!access.active || access.mappedSince === undefined) return false;
    if (access.mappedSince > issuedAt && !session.issuedElsewhere) return false;
    return access.revokedAt === undefined || issuedAt > access.revokedAt;
  }

  private async accessOf(session: Session): Promise<Access> {
    const version = this.progress.appliedVersion();
    const key = `${session.account}\u0000${session.identityType}\u0000${session.identity}`;
    const cached = this.cache.get(key);
    if (cached && version !== undefined && cached.version === version) return cached;
    const [account, mappedSince] = await Promise.all([
      findAccount(this.readModels, session.account),
      identityMappedSince(this.readModels, session.account, session.identityType, session.identity),
    ]);
    const access: Access = {
      active: account?.status === 'ACTIVE',
      mappedSince,
      revokedAt: account?.sessionsRevokedAt,
      version: version ?? -1n,
    };
    if (version !== undefined) {
      if (this.cache.size >= CACHE_ENTRIES) this.cache.clear();
      this.cache.set(key, access);
    }
    return access;
  }
}
