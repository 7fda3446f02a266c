import type { Clock } from '../infra/clock.ts';

/**
 * A token bucket per key (a client address): `ratePerSecond` on average, `burst` at once. Buckets
 * live in this process (each API process limits its own share) and the map is bounded: the least
 * recently used keys are forgotten first, which only ever lets a forgotten client start full.
 */
export type RatePolicy = Readonly<{ ratePerSecond: number; burst: number }>;

type Bucket = { tokens: number; at: number };

const MAX_KEYS = 100_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly clock: Clock) {}

  /** Takes `cost` tokens from the key's bucket; false (and nothing taken) when it has fewer. */
  take(key: string, cost: number, policy: RatePolicy): boolean {
    const now = this.clock.now();
    const bucket = this.buckets.get(key) ?? { tokens: policy.burst, at: now };
    const tokens = Math.min(policy.burst, bucket.tokens + ((now - bucket.at) / 1000) * policy.ratePerSecond);
    const allowed = tokens >= cost;
    // Re-inserted so that the map's order is by last use: the oldest go first.
    this.buckets.delete(key);
    this.buckets.set(key, { tokens: allowed ? tokens - cost : tokens, at: now });
    for (const oldest of this.buckets.keys()) {
      if (this.buckets.size <= MAX_KEYS) break;
      this.buckets.delete(oldest);
    }
    return allowed;
  }
}
