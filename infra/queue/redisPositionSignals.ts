import { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';
import type { PositionSignal } from '../positionSignal.ts';

/**
 * `appended`: events were appended up to P (the event store's writers); `applied:<group>`: the
 * projector of that projection group has applied up to P.
 */
export type PositionSignalName = 'appended' | `applied:${string}`;

/** The signal a projection group's projector announces its progress on. */
export const appliedSignal = (group: string): PositionSignalName => `applied:${group}`;

export type SignalCount = Readonly<{
  signal: PositionSignalName;
  /** `published`: sent; `dropped`: not sent (Redis unreachable); `received`: heard from any process. */
  event: 'published' | 'dropped' | 'received';
  count: number;
}>;

export type RedisPositionSignalsOptions = Readonly<{
  url: string;
  /** The deployment's key prefix (DMS_QUEUE_PREFIX): channels are `<prefix>:position:<signal>`. */
  prefix: string;
  /** The signals this process listens to; it may publish any. */
  listen: readonly PositionSignalName[];
  logger: Logger;
  /** How long `open` waits for the first subscription before going on without it; default 5 s. */
  connectTimeoutMs?: number;
}>;

/**
 * Position signals over the deployment's Redis, by pub/sub: one connection publishes, one
 * listens. Redis keeps nothing of a message nobody was subscribed to, which suits a signal whose
 * loss only makes a waiter look at the stores later. While the listening connection is down,
 * `isListening` says so and the waiters poll as if there were no signals; after a reconnection the
 * channels are subscribed again before it says yes.
 */
export class RedisPositionSignals {
  private readonly publisher: Redis;
  /** None when this process listens to nothing. */
  private readonly subscriber: Redis | undefined;
  private readonly listeners = new Map<PositionSignalName, Set<(position: bigint) => void>>();
  private readonly pending = new Map<PositionSignalName, bigint>();
  private readonly counts = new Map<PositionSignalName, Record<SignalCount['event'], number>>();
  private subscribed = false;
  private flushScheduled = false;
  private closed = false;
  private reportedOutage = false;

  private constructor(private readonly options: RedisPositionSignalsOptions) {
    // Without an offline queue a publish while disconnected fails at once instead of piling up.
    // Named, so that CLIENT LIST tells an operator (and the tests) which connection is which.
    this.publisher = new Redis(options.url, {
      connectionName: `${options.prefix}:position-signals:publish`,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
    });
    this.publisher.on('error', (error) => this.outage(error));
    if (options.listen.length === 0) {
      this.publisher.on('ready', () => this.restored());
      return;
    }
    const subscriber = new Redis(options.url, {
      connectionName: `${options.prefix}:position-signals:listen`,
      autoResubscribe: false,
      maxRetriesPerRequest: 1,
    });
    subscriber.on('error', (error) => this.outage(error));
    subscriber.on('ready', () => void this.subscribe(subscriber));
    subscriber.on('close', () => (this.subscribed = false));
    subscriber.on('message', (channel: string, message: string) => this.received(channel, message));
    this.subscriber = subscriber;
  }

  /** Connects; resolves once subscribed, or after `connectTimeoutMs` with the signals still connecting. */
  static async open(options: RedisPositionSignalsOptions): Promise<RedisPositionSignals> {
    const signals = new RedisPositionSignals(options);
    const deadline = Date.now() + (options.connectTimeoutMs ?? 5000);
    while (!signals.connected() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    if (!signals.connected())
      options.logger.warn('position signals: Redis did not answer yet; polling the stores until it does');
    return signals;
  }

  /** The signal of this name, as its users see one. */
  signal(name: PositionSignalName): PositionSignal {
    return {
      publish: (position) => this.publish(name, position),
      subscribe: (listener) => this.subscribeTo(name, listener),
      isListening: () => this.isListening() && this.options.listen.includes(name),
    };
  }

  isListening(): boolean {
    return this.subscribed && !this.closed;
  }

  /** Messages per signal so far (every signal listened to or published), for the metrics. */
  signalCounts(): SignalCount[] {
    for (const name of this.options.listen) this.countsOf(name);
    return [...this.counts].flatMap(([signal, counts]) =>
      (['published', 'dropped', 'received'] as const).map((event) => ({ signal, event, count: counts[event] })),
    );
  }

  /** Both connections up: publishing works and, if this process listens, it is subscribed. */
  private connected(): boolean {
    return this.publisher.status === 'ready' && (this.options.listen.length === 0 || this.subscribed);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.subscribed = false;
    const connections = this.subscriber ? [this.publisher, this.subscriber] : [this.publisher];
    await Promise.allSettled(connections.map((connection) => connection.quit()));
    for (const connection of connections) connection.disconnect();
  }

  private channel(name: PositionSignalName): string {
    return `${this.options.prefix}:position:${name}`;
  }

  private publish(name: PositionSignalName, position: bigint): void {
    if (this.closed) return;
    const waiting = this.pending.get(name);
    if (waiting === undefined || position > waiting) this.pending.set(name, position);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    for (const [name, position] of this.pending) {
      this.publisher.publish(this.channel(name), position.toString()).then(
        () => this.count(name, 'published'),
        (error: unknown) => {
          this.count(name, 'dropped');
          this.outage(error);
        },
      );
    }
    this.pending.clear();
  }

  private subscribeTo(name: PositionSignalName, listener: (position: bigint) => void): () => void {
    let listeners = this.listeners.get(name);
    if (!listeners) this.listeners.set(name, (listeners = new Set()));
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** On every (re)connection: subscribed only once Redis has confirmed every channel. */
  private async subscribe(subscriber: Redis): Promise<void> {
    if (this.closed) return;
    try {
      await subscriber.subscribe(...this.options.listen.map((name) => this.channel(name)));
      if (this.closed) return;
      this.subscribed = true;
      this.restored();
    } catch (error) {
      this.outage(error);
    }
  }

  private received(channel: string, message: string): void {
    const name = this.options.listen.find((candidate) => this.channel(candidate) === channel);
    if (!name || !/^\d{1,20}$/.test(message)) return;
    this.count(name, 'received');
    const position = BigInt(message);
    for (const listener of [...(this.listeners.get(name) ?? [])]) listener(position);
  }

  private count(name: PositionSignalName, event: SignalCount['event']): void {
    this.countsOf(name)[event] += 1;
  }

  private countsOf(name: PositionSignalName): Record<SignalCount['event'], number> {
    let counts = this.counts.get(name);
    if (!counts) this.counts.set(name, (counts = { published: 0, dropped: 0, received: 0 }));
    return counts;
  }

  private restored(): void {
    if (this.reportedOutage) this.options.logger.info('position signals: Redis answers again');
    this.reportedOutage = false;
  }

  /** Said once per outage: the connections retry on their own, and waiters poll meanwhile. */
  private outage(error: unknown): void {
    if (this.reportedOutage || this.closed) return;
    this.reportedOutage = true;
    this.options.logger.warn({ err: error }, 'position signals: Redis unreachable; waiting on the stores by polling');
  }
}
