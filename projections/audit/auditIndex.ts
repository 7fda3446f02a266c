import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';
import { AUDITED_EVENT_TYPES, auditSubjects, streamSubject, type AuditedEvent } from './auditSubjects.ts';

/**
 * The audit's index of the event log: where to find the events that concern a DID, a rule or an
 * RSE, and what each account did. It holds positions, not events: the audit reads the events
 * themselves from the event store by position (`readEventsAt`), so the index stays small and an
 * edited read model can never change what an auditor is shown.
 *
 * - `audit_feed`: one document per event, `_id` its position (20 digits, so ids sort as
 *   positions), with the acting account, type, time and stream; indexed by account and by type.
 * - `audit_index`: one document per event and subject it concerns (auditSubjects.ts) other than
 *   the subject whose stream holds the event: a DID's, rule's or RSE's own events are read from
 *   its stream (short, by design), and merged with these by position. `_id` is `<subject>
 *   <position>`, so a subject's entries are one range of the primary key, in order, without a
 *   secondary index. A file registered with a replica costs three documents (the feed's two and
 *   its RSE's one); a 1 000-file attach 1 001 (the feed's and one per file).
 */
export type AuditFeedDocument = Projected<{ position: number; account: string; type: string; at: string; stream: string }>;
export type AuditIndexDocument = Projected<{ subject: string; position: number; type: string; at: string }>;

export const auditFeedCollection: CollectionSpec = {
  name: 'audit_feed',
  indexes: [{ fields: ['account', '_id'] }, { fields: ['type', '_id'] }],
};

export const auditIndexCollection: CollectionSpec = { name: 'audit_index', indexes: [] };

/** A position as 20 digits: the widest bigint position a store can reach keeps the order of text. */
export const positionKey = (position: bigint | number): string => position.toString().padStart(20, '0');

export const subjectEntryId = (subject: string, position: bigint | number): string => `${subject} ${positionKey(position)}`;

export const auditIndexProjection: Projection<AuditedEvent> = {
  name: 'audit_index',
  version: 1,
  collections: [auditFeedCollection, auditIndexCollection],
  handles: AUDITED_EVENT_TYPES,
  async apply(event, context) {
    const { position, metadata, streamName } = context.currentEvent();
    const at = metadata.at;
    // Every document is new: written without reading first (a repeated delivery keeps the stored one).
    const feed = context.collection<AuditFeedDocument>(auditFeedCollection);
    await feed.create(positionKey(position), { _id: positionKey(position), position: Number(position), account: metadata.account, type: event.type, at, stream: streamName });
    const index = context.collection<AuditIndexDocument>(auditIndexCollection);
    const own = streamSubject(streamName);
    for (const subject of auditSubjects(event)) {
      if (subject === own) continue;
      const id = subjectEntryId(subject, position);
      await index.create(id, { _id: id, subject, position: Number(position), type: event.type, at });
    }
  },
};
