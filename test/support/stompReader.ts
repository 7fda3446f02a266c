import { Client, type IMessage } from '@stomp/stompjs';
import { TCPWrapper } from '@stomp/tcp-wrapper';
import type { TestBroker } from './rabbitmq.ts';

/** A message as a consumer of the broker receives it. */
export type ReadMessage = Readonly<{
  destination: string;
  headers: Readonly<Record<string, string>>;
  body: Readonly<{ event_type: string; payload: Record<string, unknown>; created_at: string }>;
}>;

/**
 * A STOMP consumer of the tests' broker, as the `reader` account: subscribes to destinations and
 * keeps what arrives, in arrival order. It follows the broker through a restart: when the
 * connection drops it connects again (every 200 ms) and subscribes again.
 */
export class StompReader {
  readonly messages: ReadMessage[] = [];
  private readonly client: Client;
  private readonly destinations: string[] = [];

  private constructor(broker: TestBroker) {
    this.client = new Client({
      webSocketFactory: () => new TCPWrapper(broker.host, broker.stompPort),
      connectHeaders: { host: broker.vhost, login: broker.users.reader.login, passcode: broker.users.reader.passcode },
      reconnectDelay: 200,
      debug: () => undefined,
    });
    this.client.onConnect = () => {
      for (const destination of this.destinations) this.listen(destination);
    };
  }

  static async open(broker: TestBroker, destinations: readonly string[]): Promise<StompReader> {
    const reader = new StompReader(broker);
    reader.destinations.push(...destinations);
    await new Promise<void>((resolve) => {
      const onConnect = reader.client.onConnect;
      reader.client.onConnect = (frame) => {
        onConnect(frame);
        reader.client.onConnect = onConnect;
        resolve();
      };
      reader.client.activate();
    });
    return reader;
  }

  /** The event types received, in order (on one destination, or on all). */
  eventTypes(destination?: string): string[] {
    return this.messages
      .filter((message) => destination === undefined || message.destination === destination)
      .map((message) => message.body.event_type);
  }

  async close(): Promise<void> {
    await this.client.deactivate();
  }

  private listen(destination: string): void {
    this.client.subscribe(destination, (frame: IMessage) => {
      this.messages.push({
        destination,
        headers: frame.headers,
        body: JSON.parse(frame.body) as ReadMessage['body'],
      });
    });
  }
}
