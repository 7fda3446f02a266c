import { StompPublisher, type StompEndpoint, type StompTimings } from './stompPublisher.ts';

/** Why no broker can be used now, and when the next attempt will be made. */
export type BrokersUnavailable = Readonly<{ unavailable: true; reason: string; retryAt: Date }>;

export type BrokerConnectionsOptions = StompTimings &
  Readonly<{
    /** Longest pause between attempts while every broker refuses; default 30 s (the first is 1 s, then doubling). */
    maxBackoffMs?: number;
    now?: () => number;
  }>;

const sameEndpoints = (a: readonly StompEndpoint[], b: readonly StompEndpoint[]): boolean =>
  JSON.stringify(a) === JSON.stringify(b);

/**
 * The connection a process keeps to its message brokers between hermes cycles: one at a time, to
 * the first of the configured brokers that answers (then to that one first again, until it
 * fails), reopened when the configuration names other brokers. While every broker refuses, the
 * attempts are spaced out (1 s, doubling, up to `maxBackoffMs`), so a broker that is down costs a
 * connection attempt now and then rather than one per cycle; a connection that breaks while
 * sending is dropped and reopened at the next cycle.
 */
export class BrokerConnections {
  private endpoints: readonly StompEndpoint[] = [];
  private current: StompPublisher | undefined;
  private preferred = 0;
  private failures = 0;
  private retryAt = 0;
  private lastReason = '';

  constructor(private readonly options: BrokerConnectionsOptions = {}) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** A connection to one of `endpoints`, or why there is none now. */
  async publisher(endpoints: readonly StompEndpoint[]): Promise<StompPublisher | BrokersUnavailable> {
    if (!sameEndpoints(this.endpoints, endpoints)) {
      await this.drop();
      this.endpoints = endpoints;
      this.preferred = 0;
      this.failures = 0;
      this.retryAt = 0;
    }
    if (this.current?.usable) return this.current;
    await this.drop();
    if (this.now() < this.retryAt)
      return { unavailable: true, reason: this.lastReason, retryAt: new Date(this.retryAt) };
    const reasons: string[] = [];
    for (let offset = 0; offset < endpoints.length; offset += 1) {
      const index = (this.preferred + offset) % endpoints.length;
      const endpoint = endpoints[index]!;
      try {
        this.current = await StompPublisher.connect(endpoint, this.options);
        this.preferred = index;
        this.failures = 0;
        this.retryAt = 0;
        return this.current;
      } catch (error) {
        reasons.push(error instanceof Error ? error.message : String(error));
      }
    }
    this.failures += 1;
    const backoff = Math.min(1000 * 2 ** (this.failures - 1), this.options.maxBackoffMs ?? 30_000);
    this.retryAt = this.now() + backoff;
    this.lastReason = reasons.join('; ');
    return { unavailable: true, reason: this.lastReason, retryAt: new Date(this.retryAt) };
  }

  /** Forgets a connection that failed while sending: the next cycle opens another. */
  async lost(): Promise<void> {
    await this.drop();
  }

  async close(): Promise<void> {
    await this.drop();
  }

  private async drop(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    await current?.close();
  }
}
