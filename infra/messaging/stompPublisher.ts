import { Client, type IFrame } from '@stomp/stompjs';
import { TCPWrapper } from '@stomp/tcp-wrapper';
import { readFileSync } from 'node:fs';
import { isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/**
 * Sending to a message broker over STOMP 1.2 (ActiveMQ, RabbitMQ's STOMP plugin, Artemis), one
 * connection at a time, every frame with a receipt: `publish` resolves once the broker has
 * acknowledged every frame it was given, so a caller that moves a checkpoint after it loses
 * nothing to a broker that fails half-way (it sends the unacknowledged frames again: at least once).
 *
 * The protocol is @stomp/stompjs's (frames, escaping, heart-beats, receipts), over a TCP or TLS
 * socket through @stomp/tcp-wrapper; the library's own reconnection is off, since the caller
 * decides when to try again and from where.
 */
export type StompEndpoint = Readonly<{
  host: string;
  port: number;
  /** The CONNECT frame's `host` header: the broker's virtual host (RabbitMQ), else the host name. */
  virtualHost: string;
  login?: string;
  passcode?: string;
  /** TLS, with a client certificate when `certFile` and `keyFile` are given, and `caFile` to trust. */
  tls?: Readonly<{ keyFile?: string; certFile?: string; caFile?: string }>;
}>;

export type StompMessage = Readonly<{ destination: string; body: string; headers: Readonly<Record<string, string>> }>;

export type StompTimings = Readonly<{
  /** From opening the socket to the broker's CONNECTED; default 5 s. */
  connectTimeoutMs?: number;
  /** How long a batch may wait for its receipts; default 30 s. */
  receiptTimeoutMs?: number;
  /** Heart-beats asked for both ways; default 10 s (0: none). */
  heartbeatMs?: number;
}>;

export class StompError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StompError';
  }
}

const describeFrame = (frame: IFrame): string =>
  [frame.headers.message, frame.body.trim()].filter((part) => part && part.length > 0).join(': ') || 'ERROR frame';

/** A TCP wrapper whose socket is TLS (a class per endpoint: the wrapper opens its socket in its constructor). */
const tlsWrapper = (tls: NonNullable<StompEndpoint['tls']>) => {
  const options = {
    ...(tls.keyFile ? { key: readFileSync(tls.keyFile) } : {}),
    ...(tls.certFile ? { cert: readFileSync(tls.certFile) } : {}),
    ...(tls.caFile ? { ca: readFileSync(tls.caFile) } : {}),
  };
  return class TlsWrapper extends TCPWrapper {
    protected override getSocket(port: number, host: string): Socket {
      return tlsConnect({ ...options, host, port, ...(isIP(host) === 0 ? { servername: host } : {}) });
    }
  };
};

type Waiting = { resolve: () => void; reject: (error: Error) => void };

export class StompPublisher {
  private readonly waiting = new Map<string, Waiting>();
  private failure: Error | undefined;
  private sent = 0;

  private constructor(
    private readonly client: Client,
    private readonly timings: StompTimings,
  ) {}

  /** Opens a connection and waits for the broker's CONNECTED; rejects with why it could not. */
  static connect(endpoint: StompEndpoint, timings: StompTimings = {}): Promise<StompPublisher> {
    const Wrapper = endpoint.tls ? tlsWrapper(endpoint.tls) : TCPWrapper;
    const heartbeat = timings.heartbeatMs ?? 10_000;
    const client = new Client({
      webSocketFactory: () => new Wrapper(endpoint.host, endpoint.port),
      connectHeaders: {
        host: endpoint.virtualHost,
        ...(endpoint.login !== undefined ? { login: endpoint.login } : {}),
        ...(endpoint.passcode !== undefined ? { passcode: endpoint.passcode } : {}),
      },
      reconnectDelay: 0,
      connectionTimeout: timings.connectTimeoutMs ?? 5000,
      heartbeatIncoming: heartbeat,
      heartbeatOutgoing: heartbeat,
      debug: () => undefined,
    });
    const publisher = new StompPublisher(client, timings);
    return new Promise((resolve, reject) => {
      let settled = false;
      const refuse = (error: Error) => {
        publisher.fail(error);
        if (settled) return;
        settled = true;
        void client.deactivate({ force: true }).catch(() => undefined);
        reject(error);
      };
      client.onConnect = () => {
        settled = true;
        resolve(publisher);
      };
      client.onStompError = (frame) => refuse(new StompError(`the broker refused: ${describeFrame(frame)}`));
      client.onWebSocketError = (event: unknown) =>
        refuse(new StompError(`could not reach ${endpoint.host}:${endpoint.port}: ${socketErrorText(event)}`));
      client.onWebSocketClose = () =>
        refuse(new StompError(`the connection to ${endpoint.host}:${endpoint.port} closed`));
      client.activate();
    });
  }

  /** Whether the connection is still usable (no error, no close). */
  get usable(): boolean {
    return this.failure === undefined && this.client.connected;
  }

  /**
   * Sends every message in order, each with a receipt, and resolves when the broker has
   * acknowledged them all; rejects (and the connection is of no further use) when the broker
   * refuses one, the connection drops, or the receipts do not come in time.
   */
  async publish(messages: readonly StompMessage[]): Promise<void> {
    if (this.failure) throw this.failure;
    const receipts = messages.map((message) => {
      this.sent += 1;
      const receipt = `dms-${this.sent}`;
      const acknowledged = new Promise<void>((resolve, reject) => this.waiting.set(receipt, { resolve, reject }));
      this.client.watchForReceipt(receipt, () => {
        this.waiting.get(receipt)?.resolve();
        this.waiting.delete(receipt);
      });
      this.client.publish({
        destination: message.destination,
        body: message.body,
        headers: { ...message.headers, receipt },
      });
      return acknowledged;
    });
    const timeoutMs = this.timings.receiptTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StompError(`the broker did not acknowledge the messages within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([Promise.all(receipts), late]);
    } catch (error) {
      this.fail(error instanceof Error ? error : new StompError(String(error)));
      throw this.failure;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the connection (a DISCONNECT when it is still open). */
  async close(): Promise<void> {
    this.fail(new StompError('the connection was closed'));
    await this.client.deactivate().catch(() => undefined);
  }

  /** Every frame still waiting for its receipt fails with `error`; later calls fail with it too. */
  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.waiting.values()) waiting.reject(this.failure);
    this.waiting.clear();
  }
}

const socketErrorText = (event: unknown): string => {
  if (typeof event === 'object' && event !== null && 'message' in event) {
    const message: unknown = event.message;
    if (message instanceof Error) return message.message;
    if (typeof message === 'string') return message;
  }
  return 'socket error';
};
