import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';
import type { ProjectionCollection } from '../runtime/projectionContext.ts';
import { AUDITED_EVENT_TYPES, auditSubjects, streamSubject, type AuditedEvent } from './auditSubjects.ts';

/**
 * The audit's index of the event log: where to find the events that concern a DID, a rule or an
 * RSE, and what each account did. It holds positions, not events: the audit reads the events
 * themselves from the event store by position (`readEventsAt`), so the index stays small and an
 * edited read model can never change what an auditor is shown. The whole feed needs no index:
 * it is the event store's own order (auditQueries.ts reads it from there).
 *
 * Entries are kept in buckets of `POSITIONS_PER_BUCKET` positions: one document per key and
 * bucket, `_id` `<key> <first position of the bucket>` (20 digits, so ids sort as positions),
 * holding the entries of its positions in order. A key's entries are one range of the primary key,
 * in order, without a secondary index; and a projection batch writes one document per key and
 * bucket it touched, however many of its events share the key. A 5 000-lock rule step (15 000
 * events) writes about 150 documents for its rule, as many for its RSE, a few for root and for
 * each event type, and one per file for the file's transfer request, where one document per event
 * and per key made 75 000.
 *
 * - `audit_index`, keys `did:<scope>:<name>`, `rule:<id>`, `rse:<name>`: the events that concern
 *   a DID, rule or RSE (auditSubjects.ts) other than those of its own stream, which are read from
 *   the stream (short, by design) and merged with these by position. Entries `[position, type,
 *   time]`.
 * - `audit_feed`, keys `account:<account>` (entries `[position, type, time]`: what the account
 *   did) and `type:<type>` (entries `[position, time]`: the events of one type).
 */

/** An event of a subject's or an account's history: position, type, time. */
export type HistoryEntry = readonly [position: number, type: string, at: string];
/** An event of a type's history: position, time. */
export type TypeEntry = readonly [position: number, at: string];

export type AuditIndexDocument = Projected<{ subject: string; entries: HistoryEntry[] }>;
export type AuditFeedDocument = Projected<{ key: string; entries: (HistoryEntry | TypeEntry)[] }>;

/**
 * Positions per bucket. Small enough that a busy key's bucket (root's, or a busy RSE's), rewritten
 * by every small batch of a quiet service, stays a few kilobytes; large enough that bulk steps
 * write few documents.
 */
export const POSITIONS_PER_BUCKET = 100;

export const auditFeedCollection: CollectionSpec = { name: 'audit_feed', indexes: [] };
export const auditIndexCollection: CollectionSpec = { name: 'audit_index', indexes: [] };

/** A position as 20 digits: the widest bigint position a store can reach keeps the order of text. */
export const positionKey = (position: bigint | number): string => position.toString().padStart(20, '0');

/** The id of the bucket of `key` that holds `position`. */
export const bucketId = (key: string, position: bigint | number): string => {
  const at = BigInt(position);
  return `${key} ${positionKey(at - (at % BigInt(POSITIONS_PER_BUCKET)))}`;
};

export const accountKey = (account: string): string => `account:${account}`;
export const typeKey = (type: string): string => `type:${type}`;

/** Adds an entry to the bucket of `key` holding `position`; the batch's cache holds the bucket, so it is written once. */
const addEntry = async <D extends Projected<{ entries: unknown[] }>>(
  collection: ProjectionCollection<D>,
  key: string,
  position: bigint,
  entry: D['entries'][number],
  fresh: (id: string) => D,
): Promise<void> => {
  const id = bucketId(key, position);
  await collection.update(id, (bucket) => {
    const next = bucket ?? fresh(id);
    next.entries.push(entry);
    return next;
  });
};

export const auditIndexProjection: Projection<AuditedEvent> = {
  name: 'audit_index',
  // 3: subscriptions, lifetime exceptions, transfer limits, open data and archives are indexed too.
  version: 3,
  collections: [auditFeedCollection, auditIndexCollection],
  handles: AUDITED_EVENT_TYPES,
  async apply(event, context) {
    const { position, metadata, streamName } = context.currentEvent();
    const at = metadata.at;
    const feed = context.collection<AuditFeedDocument>(auditFeedCollection);
    await addEntry(feed, accountKey(metadata.account), position, [Number(position), event.type, at], (id) => ({
      _id: id,
      key: accountKey(metadata.account),
      entries: [],
    }));
    await addEntry(feed, typeKey(event.type), position, [Number(position), at], (id) => ({
      _id: id,
      key: typeKey(event.type),
      entries: [],
    }));
    const index = context.collection<AuditIndexDocument>(auditIndexCollection);
    const own = streamSubject(streamName);
    for (const subject of auditSubjects(event)) {
      if (subject === own) continue;
      await addEntry(index, subject, position, [Number(position), event.type, at], (id) => ({
        _id: id,
        subject,
        entries: [],
      }));
    }
  },
};
