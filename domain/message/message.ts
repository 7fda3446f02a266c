import type { DomainEvent } from '../areas.ts';
import type { RequestBatch } from '../request/requestBatch.ts';
import { didMessages } from './didMessages.ts';
import { replicaMessages } from './replicaMessages.ts';
import { transferMessages } from './transferMessages.ts';

/**
 * The messages of Rucio's `messages` table (what its hermes hands to a message broker), derived
 * from the event log by one pure mapping: each event gives the messages Rucio would have added in
 * the same transaction, with Rucio's event types (`CREATE_DTS`, `transfer-done`, `RULE_OK`, ...)
 * and payload fields. `GET /admin/messages` lists them and the hermes role sends them, both
 * through projections/message/messageFeed.ts, which feeds this mapping in log order.
 */
export type Message = Readonly<{
  eventType: string;
  payload: Readonly<Record<string, unknown>>;
  /** When the event that gave it was decided (Rucio: when the message row was added). */
  createdAt: string;
}>;

/** What the mapping reads of an event's envelope: who acted, when. */
export type MessageEnvelope = Readonly<{ account: string; at: string }>;

/**
 * What no single event holds: for an event of a batch of transfer requests, the batch as it was
 * just before the event (its stream folded up to there), since Rucio's transfer messages repeat
 * the request's facts (file, checksums, source, destination URL, submission time).
 */
export type MessageFacts = Readonly<{ requestsBefore?: RequestBatch }>;

/** The messages one event gives, in the order Rucio adds them. */
export const messagesOf = (event: DomainEvent, envelope: MessageEnvelope, facts: MessageFacts = {}): Message[] =>
  payloadsOf(event, envelope, facts).map(({ eventType, payload }) => ({ eventType, payload, createdAt: envelope.at }));

export type MessagePayload = Readonly<{ eventType: string; payload: Readonly<Record<string, unknown>> }>;

const payloadsOf = (event: DomainEvent, envelope: MessageEnvelope, facts: MessageFacts): readonly MessagePayload[] => {
  switch (event.type) {
    case 'RuleNotified':
      // The rule decider computed Rucio's notifications (rule.py generate_rule_notifications).
      return event.data.messages.map((message) => ({ eventType: message.eventType, payload: message.payload }));
    case 'DidCreated':
    case 'DidsAttached':
    case 'DidsDetached':
    case 'DidClosed':
    case 'DidReopened':
    case 'DidErased':
      return [...(event.type === 'DidErased' ? replicaMessages(event) : []), ...didMessages(event, envelope)];
    case 'ReplicaDeleted':
    case 'ReplicaLost':
      return replicaMessages(event);
    case 'RequestQueued':
    case 'RequestHopsQueued':
    case 'RequestSubmitted':
    case 'RequestSubmissionFailed':
    case 'TransferSucceeded':
    case 'TransferFailed':
    case 'TransferLost':
      return transferMessages(event, facts.requestsBefore);
    default:
      return [];
  }
};

/** Whether an event's messages need its request batch folded (`MessageFacts.requestsBefore`). */
export const needsRequestBatch = (type: string): boolean =>
  type === 'RequestSubmitted' ||
  type === 'RequestSubmissionFailed' ||
  type === 'TransferSucceeded' ||
  type === 'TransferFailed' ||
  type === 'TransferLost';
