/**
 * Slows down password guessing: failed logins are counted per key (an identity, a client
 * address), and once a key has failed more than the free number of times, each attempt on it
 * waits its turn, spaced by a delay that doubles with every further failure. Attempts that would
 * wait longer than the largest delay are refused at once, so a flood holds no connections open.
 * Counts live in this process (each API process counts its own) and end a window after the last
 * failure.
 */
export type ThrottlePolicy = Readonly<{
  freeFailures: number;
  baseDelayMs: number;
  maxDelayMs: number;
  windowMs: number;
}>;

export type Admission =
  { readonly refused: false; readonly waitMs: number } | { readonly refused: true; readonly retryAfterMs: number };

type KeyRecord = { failures: number; lastFailureAt: number; nextSlotAt: number };

/** Keys remembered at most; the oldest are forgotten first. */
const MAX_KEYS = 100_000;

export class LoginThrottle {
  private readonly records = new Map<string, KeyRecord>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The delay an attempt on a key with this many failures waits (0 while they are free). */
  static delayAfter(failures: number, policy: ThrottlePolicy): number {
    if (failures < policy.freeFailures || policy.baseDelayMs <= 0) return 0;
    return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(failures - policy.freeFailures, 30));
  }

  /** Takes the next turn of every key for one attempt: how long to wait first, or refused. */
  admit(keys: readonly string[], policy: ThrottlePolicy): Admission {
    const now = this.now();
    const turns: { record: KeyRecord; slot: number; delay: number }[] = [];
    for (const key of keys) {
      const record = this.current(key, policy, now);
      const delay = record ? LoginThrottle.delayAfter(record.failures, policy) : 0;
      if (!record || delay === 0) continue;
      const slot = Math.max(now, record.nextSlotAt, record.lastFailureAt + delay);
      if (slot - now > policy.maxDelayMs) return { refused: true, retryAfterMs: slot - now };
      turns.push({ record, slot, delay });
    }
    // Only an admitted attempt takes its turns, so refusals do not push the queue further out.
    for (const { record, slot, delay } of turns) record.nextSlotAt = slot + delay;
    return { refused: false, waitMs: Math.max(0, ...turns.map(({ slot }) => slot - now)) };
  }

  /** Counts a failure on every key; answers the largest count. */
  failed(keys: readonly string[], policy: ThrottlePolicy): number {
    const now = this.now();
    let most = 0;
    for (const key of keys) {
      const record = this.current(key, policy, now) ?? { failures: 0, lastFailureAt: now, nextSlotAt: now };
      record.failures += 1;
      record.lastFailureAt = now;
      // Re-inserted so that the map's order is by last failure: the oldest go first.
      this.records.delete(key);
      this.records.set(key, record);
      most = Math.max(most, record.failures);
    }
    this.evict();
    return most;
  }

  /** A success clears the key (the identity whose password was right). */
  succeeded(key: string): void {
    this.records.delete(key);
  }

  private current(key: string, policy: ThrottlePolicy, now: number): KeyRecord | undefined {
    const record = this.records.get(key);
    if (record && now - record.lastFailureAt >= policy.windowMs && record.nextSlotAt <= now) {
      this.records.delete(key);
      return undefined;
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
