import { SETTINGS, settingValue } from '../../domain/config/settings.ts';
import type { Message } from '../../domain/message/message.ts';
import { pythonDate } from '../../domain/message/pythonText.ts';
import { destinationOf, type MessageRouting } from '../../domain/message/messageRouting.ts';
import type { EventStore } from '../../infra/eventstore/eventStore.ts';
import type { StompMessage } from '../../infra/messaging/stompPublisher.ts';
import type { ReadStore } from '../../infra/readstore/readStore.ts';
import { MessageFeed, type FedMessage } from '../../projections/message/messageFeed.ts';
import { workerCheckpointsCollection } from '../reactor.ts';
import type { Upcasters } from '../../domain/shared/upcasting.ts';
import type { ScheduledRole } from '../role.ts';
import { brokerEndpoints, brokerHosts, messageRouting } from './hermesEndpoints.ts';

const DAEMON = 'hermes';

/** A cycle stops taking new pages after this long, so a backlog shows its progress cycle by cycle. */
const CYCLE_BUDGET_MS = 60_000;

type CheckpointDocument = { _id: string; checkpoint: string; updatedAt: string };

/**
 * The feed of each event store, kept between cycles: its folded request batches stay valid
 * (checked by revision), so a cycle does not read a batch's stream again for each new event.
 */
const feeds = new WeakMap<EventStore, MessageFeed>();
const feedOf = (eventStore: EventStore, upcasters: Upcasters): MessageFeed => {
  let feed = feeds.get(eventStore);
  if (!feed) {
    feed = new MessageFeed(eventStore, upcasters);
    feeds.set(eventStore, feed);
  }
  return feed;
};

/** The position of the last event whose messages the broker acknowledged (0: none yet). */
const storedCheckpoint = async (store: ReadStore): Promise<bigint> =>
  BigInt((await store.collection<CheckpointDocument>(workerCheckpointsCollection).get(DAEMON))?.checkpoint ?? '0');

/** Moves the checkpoint forward, never back (a cycle that lost its job to another may finish late). */
const advanceCheckpoint = async (store: ReadStore, position: bigint): Promise<void> => {
  if ((await storedCheckpoint(store)) >= position) return;
  await store
    .collection<CheckpointDocument>(workerCheckpointsCollection)
    .replaceOne(
      { _id: DAEMON },
      { _id: DAEMON, checkpoint: position.toString(), updatedAt: new Date().toISOString() },
      { upsert: true },
    );
};

/**
 * What Rucio's hermes puts on the wire: a JSON body of the event type (lower case), the payload and
 * the creation time as Python prints it, persistent, with the event type as a header too.
 */
export const stompMessageOf = (message: Message, destination: string): StompMessage => {
  const eventType = message.eventType.toLowerCase();
  return {
    destination,
    body: JSON.stringify({
      event_type: eventType,
      payload: message.payload,
      created_at: pythonDate(message.createdAt),
    }),
    headers: { persistent: 'true', event_type: eventType },
  };
};

const framesOf = (messages: readonly FedMessage[], routing: MessageRouting): StompMessage[] =>
  messages.flatMap(({ message }) => {
    const destination = destinationOf(routing, message.eventType);
    return destination === undefined ? [] : [stompMessageOf(message, destination)];
  });

/**
 * Hermes (Rucio's daemon of that name, its ActiveMQ service) on a schedule (`hermes.interval`,
 * 1 s): the messages of the event log after its checkpoint (projections/message/messageFeed.ts,
 * what `GET /admin/messages` lists), routed to their destinations, sent over STOMP in log order
 * `hermes.bulk` at a time, each batch acknowledged by the broker's receipts before the checkpoint
 * moves past it. So a broker that is down, or fails half-way, delays messages and loses none: the
 * next cycle sends again from the checkpoint (a message may arrive twice, never not at all). One
 * cycle runs at a time across all worker processes (`exclusive`), so the order holds.
 */
export const hermesRole: ScheduledRole = {
  kind: 'scheduled',
  name: DAEMON,
  interval: SETTINGS.hermesInterval,
  exclusive: true,
  settings: [
    SETTINGS.hermesBulk,
    SETTINGS.brokers,
    SETTINGS.useSsl,
    SETTINGS.port,
    SETTINGS.nonsslPort,
    SETTINGS.username,
    SETTINGS.brokerVirtualHost,
    SETTINGS.destination,
    SETTINGS.routes,
    SETTINGS.eventTypes,
  ],
  async run(_trigger, context) {
    const sections = await context.settings();
    const store = context.readModels.store;
    let after = await storedCheckpoint(store);
    if (brokerHosts(sections).length === 0) {
      // A broker configured before and removed since is let go.
      await context.messaging.brokers.close();
      return {
        done: 0,
        skipped: [],
        detail: `no broker configured (messaging-hermes.brokers): messages after position ${after} wait in the log`,
      };
    }
    const connection = await context.messaging.brokers.publisher(brokerEndpoints(sections, context.messaging.password));
    if ('unavailable' in connection)
      return {
        done: 0,
        skipped: [
          {
            what: `messages after position ${after}`,
            reason: `no broker reachable (${connection.reason}); next attempt at ${connection.retryAt.toISOString()}`,
          },
        ],
      };
    const routing = messageRouting(sections);
    const bulk = settingValue(sections, SETTINGS.hermesBulk);
    const feed = feedOf(context.commands.eventStore, context.commands.upcasters);
    const deadline = Date.now() + CYCLE_BUDGET_MS;
    let sent = 0;
    for (;;) {
      const page = await feed.page(after, bulk);
      const frames = framesOf(page.messages, routing);
      try {
        await connection.publish(frames);
      } catch (error) {
        await context.messaging.brokers.lost();
        const reason = error instanceof Error ? error.message : String(error);
        context.logger.warn({ daemon: DAEMON, after: after.toString(), err: error }, 'message delivery interrupted');
        return {
          done: sent,
          skipped: [{ what: `messages after position ${after}`, reason: `delivery interrupted: ${reason}` }],
        };
      }
      sent += frames.length;
      if (page.through > after) {
        await advanceCheckpoint(store, page.through);
        after = page.through;
      }
      if (page.atEnd || Date.now() > deadline) break;
    }
    return {
      done: sent,
      skipped: [],
      detail: `${sent} messages sent; the broker has every message through position ${after}`,
    };
  },
};
