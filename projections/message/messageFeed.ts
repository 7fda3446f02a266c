import type { DomainEvent } from '../../domain/areas.ts';
import { messagesOf, needsRequestBatch, type Message } from '../../domain/message/message.ts';
import { REQUEST_EVENT_TYPES, type RequestEvent } from '../../domain/request/request.ts';
import { evolveRequestBatch, initialRequestBatch, type RequestBatch } from '../../domain/request/requestBatch.ts';
import { upcastEvent, type Upcasters } from '../../domain/shared/upcasting.ts';
import type { EventStore, RecordedEvent } from '../../infra/eventstore/eventStore.ts';

/** A message with the position of the event that gave it and its place among that event's messages. */
export type FedMessage = Readonly<{ position: bigint; index: number; message: Message }>;

/** One page of the feed: the messages of whole events, and how far it read. */
export type MessagePage = Readonly<{
  messages: readonly FedMessage[];
  /** The position of the last event the page accounts for (with or without messages); `after` when none. */
  through: bigint;
  /** True when the page reached the end of the log. */
  atEnd: boolean;
}>;

export type MessageFeedOptions = Readonly<{
  /** Events read from the log at once; default 500. */
  batchSize?: number;
  /** Requests whose batches are kept folded between events, at most; default 50 000. */
  cachedRequests?: number;
}>;

type FoldedBatch = { revision: bigint; batch: RequestBatch };

const isRequestEvent = (event: DomainEvent): event is RequestEvent => Object.hasOwn(REQUEST_EVENT_TYPES, event.type);

/**
 * The messages of the event log, in log order, from any position: the one reader behind
 * `GET /admin/messages` and the hermes role, so what an admin lists is what a broker is sent.
 * Each event goes through the domain's mapping (domain/message/message.ts); an event of a batch
 * of transfer requests also gets the batch as it stood before it, folded from the batch's stream
 * (read from its start the first time the feed meets the batch past its first event, then kept
 * folded, the most recently used batches first, up to `cachedRequests` requests).
 */
export class MessageFeed {
  private readonly batches = new Map<string, FoldedBatch>();
  private cachedRequests = 0;

  constructor(
    private readonly eventStore: EventStore,
    private readonly upcasters: Upcasters,
    private readonly options: MessageFeedOptions = {},
  ) {}

  /**
   * The messages of the events after `after`, whole events only, until at least `maxMessages`
   * messages are gathered or the log ends.
   */
  async page(after: bigint, maxMessages: number): Promise<MessagePage> {
    const batchSize = this.options.batchSize ?? 500;
    const messages: FedMessage[] = [];
    let read = after;
    let through = after;
    for (;;) {
      const batch = await this.eventStore.readAll({ after: read, maxCount: batchSize });
      if (batch.length === 0) return { messages, through, atEnd: true };
      read = batch[batch.length - 1]!.position;
      for (const event of batch) {
        for (const [index, message] of (await this.messagesOfEvent(event)).entries())
          messages.push({ position: event.position, index, message });
        through = event.position;
        if (messages.length >= maxMessages) return { messages, through, atEnd: false };
      }
      if (batch.length < batchSize) return { messages, through, atEnd: true };
    }
  }

  /** Every message after `after`, page by page, until the end of the log as it was when each page was read. */
  async *after(after: bigint, pageMessages = 500): AsyncGenerator<readonly FedMessage[]> {
    let position = after;
    for (;;) {
      const page = await this.page(position, pageMessages);
      if (page.messages.length > 0) yield page.messages;
      if (page.atEnd || page.through === position) return;
      position = page.through;
    }
  }

  private async messagesOfEvent(stored: RecordedEvent): Promise<Message[]> {
    const event = upcastEvent<DomainEvent>(this.upcasters, {
      type: stored.type,
      data: stored.data,
      schemaVersion: stored.metadata.schemaVersion,
    });
    const envelope = { account: stored.metadata.account, at: stored.metadata.at };
    if (!isRequestEvent(event)) return messagesOf(event, envelope);
    const before = await this.batchBefore(stored);
    const messages = messagesOf(event, envelope, needsRequestBatch(event.type) ? { requestsBefore: before } : {});
    this.remember(stored.streamName, { revision: stored.revision, batch: evolveRequestBatch(before, event) });
    return messages;
  }

  /** The batch as its stream stood just before `event`. */
  private async batchBefore(event: RecordedEvent): Promise<RequestBatch> {
    const cached = this.batches.get(event.streamName);
    if (cached && cached.revision === event.revision - 1n) return cached.batch;
    if (event.revision === 0n) return initialRequestBatch();
    const earlier = await this.eventStore.readStream(event.streamName, { maxCount: Number(event.revision) });
    return earlier.reduce(
      (batch, stored) =>
        evolveRequestBatch(
          batch,
          upcastEvent<RequestEvent>(this.upcasters, {
            type: stored.type,
            data: stored.data,
            schemaVersion: stored.metadata.schemaVersion,
          }),
        ),
      initialRequestBatch(),
    );
  }

  private remember(streamName: string, folded: FoldedBatch): void {
    const previous = this.batches.get(streamName);
    if (previous) {
      this.cachedRequests -= previous.batch.requests.size;
      this.batches.delete(streamName);
    }
    this.batches.set(streamName, folded);
    this.cachedRequests += folded.batch.requests.size;
    const limit = this.options.cachedRequests ?? 50_000;
    for (const [name, oldest] of this.batches) {
      if (this.cachedRequests <= limit || name === streamName) break;
      this.batches.delete(name);
      this.cachedRequests -= oldest.batch.requests.size;
    }
  }
}
