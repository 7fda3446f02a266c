import type { Clock } from '../../infra/clock.ts';

/**
 * Slows down password guessing without locking out the innocent. Failed logins are counted three
 * ways, each with its own free allowance (domain/config/settings.ts, section `auth`):
 *
 * - per identity and client address (`login_free_failures`): one user's typos, or one guesser
 *   aiming at one identity, slow down only that identity from that address;
 * - per identity, from every address together (`login_identity_free_failures`, higher): a guesser
 *   spread over many addresses;
 * - per client address, counting the distinct identities that failed from it
 *   (`login_address_free_identities`): one address trying many identities (password spraying).
 *   One identity failing again and again counts once there, so a user's typos never slow down an
 *   admin behind the same address.
 *
 * Once a count has passed its allowance, each attempt on it waits its turn, spaced by a delay that
 * doubles with every further failure, up to the largest; attempts that would wait longer than the
 * largest delay are refused at once, so a flood holds no connections open. What an attempt waits
 * depends only on earlier failures, never on whether its password is right (no timing oracle).
 * Counts live in this process (each API process counts its own) and end a window after the last
 * failure; a success clears its identity's counts.
 */
export type ThrottlePolicy = Readonly<{
  /** Failures of one identity from one address that cost nothing more. */
  freeFailures: number;
  /** Failures of one identity from all addresses that cost nothing more. */
  identityFreeFailures: number;
  /** Distinct identities failing from one address that cost nothing more. */
  addressFreeIdentities: number;
  baseDelayMs: number;
  maxDelayMs: number;
  windowMs: number;
}>;

/** Who attempts: the identity (`USERPASS jdoe`) and the client's address. */
export type LoginAttempt = Readonly<{ identity: string; address: string }>;

export type Admission =
  { readonly refused: false; readonly waitMs: number } | { readonly refused: true; readonly retryAfterMs: number };

type KeyRecord = {
  /** Failures counted (for an address: distinct identities, in `identities`). */
  failures: number;
  lastFailureAt: number;
  nextSlotAt: number;
  /** For an address: each identity that failed from it, with its last failure, oldest first. */
  identities?: Map<string, number>;
};

/** Keys remembered at most; the oldest are forgotten first. */
const MAX_KEYS = 100_000;
/** Identities remembered per address at most: past this many, the address is throttled anyway. */
const MAX_IDENTITIES_PER_ADDRESS = 10_000;

const pairKey = ({ identity, address }: LoginAttempt) => `pair\u0000${identity}\u0000${address}`;
const identityKey = ({ identity }: LoginAttempt) => `identity\u0000${identity}`;
const addressKey = ({ address }: LoginAttempt) => `address\u0000${address}`;

export class LoginThrottle {
  private readonly records = new Map<string, KeyRecord>();

  constructor(private readonly clock: Clock) {}

  /** The delay an attempt on a count of this many failures waits (0 while they are free). */
  static delayAfter(failures: number, free: number, policy: ThrottlePolicy): number {
    if (failures < free || policy.baseDelayMs <= 0) return 0;
    return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(failures - free, 30));
  }

  /** Each count an attempt is judged by, with its allowance. */
  private static counts(attempt: LoginAttempt, policy: ThrottlePolicy): { key: string; free: number }[] {
    return [
      { key: pairKey(attempt), free: policy.freeFailures },
      { key: identityKey(attempt), free: policy.identityFreeFailures },
      { key: addressKey(attempt), free: policy.addressFreeIdentities },
    ];
  }

  /** Takes the next turn of every count for one attempt: how long to wait first, or refused. */
  admit(attempt: LoginAttempt, policy: ThrottlePolicy): Admission {
    const now = this.clock.now();
    const turns: { record: KeyRecord; slot: number; delay: number }[] = [];
    for (const { key, free } of LoginThrottle.counts(attempt, policy)) {
      const record = this.current(key, policy, now);
      const delay = record ? LoginThrottle.delayAfter(record.failures, free, policy) : 0;
      if (!record || delay === 0) continue;
      const slot = Math.max(now, record.nextSlotAt, record.lastFailureAt + delay);
      if (slot - now > policy.maxDelayMs) return { refused: true, retryAfterMs: slot - now };
      turns.push({ record, slot, delay });
    }
    // Only an admitted attempt takes its turns, so refusals do not push the queue further out.
    for (const { record, slot, delay } of turns) record.nextSlotAt = slot + delay;
    return { refused: false, waitMs: Math.max(0, ...turns.map(({ slot }) => slot - now)) };
  }

  /**
   * Counts a failure. `guess` false: the password was right but the account not the identity's,
   * which is no guess at the password, so only the address notes the identity. Answers the delay
   * the next attempt of this identity from this address will wait.
   */
  failed(attempt: LoginAttempt, policy: ThrottlePolicy, guess = true): number {
    const now = this.clock.now();
    if (guess) {
      this.count(pairKey(attempt), policy, now, (record) => (record.failures += 1));
      this.count(identityKey(attempt), policy, now, (record) => (record.failures += 1));
    }
    this.count(addressKey(attempt), policy, now, (record) => {
      const identities = (record.identities ??= new Map<string, number>());
      identities.delete(attempt.identity);
      // Past the bound a new identity is not remembered: the address stays throttled all the same.
      if (identities.size < MAX_IDENTITIES_PER_ADDRESS) identities.set(attempt.identity, now);
      record.failures = identities.size;
    });
    this.evict();
    return Math.max(
      0,
      ...LoginThrottle.counts(attempt, policy).map(({ key, free }) =>
        LoginThrottle.delayAfter(this.records.get(key)?.failures ?? 0, free, policy),
      ),
    );
  }

  /** A right password: its identity's failures were no guesses, here or from its address. */
  succeeded(attempt: LoginAttempt): void {
    this.records.delete(pairKey(attempt));
    this.records.delete(identityKey(attempt));
    const address = this.records.get(addressKey(attempt));
    if (address?.identities?.delete(attempt.identity)) address.failures = address.identities.size;
  }

  private count(key: string, policy: ThrottlePolicy, now: number, update: (record: KeyRecord) => void): void {
    const record = this.current(key, policy, now) ?? { failures: 0, lastFailureAt: now, nextSlotAt: now };
    update(record);
    record.lastFailureAt = now;
    // Re-inserted so that the map's order is by last failure: the oldest go first.
    this.records.delete(key);
    this.records.set(key, record);
  }

  private current(key: string, policy: ThrottlePolicy, now: number): KeyRecord | undefined {
    const record = this.records.get(key);
    if (!record) return undefined;
    if (now - record.lastFailureAt >= policy.windowMs && record.nextSlotAt <= now) {
      this.records.delete(key);
      return undefined;
    }
    // An address forgets the identities whose last failure is a window old.
    if (record.identities) {
      for (const [identity, at] of record.identities) {
        if (now - at < policy.windowMs) break;
        record.identities.delete(identity);
      }
      record.failures = record.identities.size;
    }
    return record;
  }

  /** Forgets the keys whose last failure is oldest while there are too many. */
  private evict(): void {
    for (const key of this.records.keys()) {
      if (this.records.size <= MAX_KEYS) return;
      this.records.delete(key);
    }
  }
}
