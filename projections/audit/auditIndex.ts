import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected, Projection } from '../projection.ts';
import type { ProjectionCollection, ProjectionContext } from '../runtime/projectionContext.ts';
import { AUDITED_EVENT_TYPES, auditSubjects, didSubject, streamSubject, type AuditedEvent } from './auditSubjects.ts';

/**
 * The audit's index of the event log: where to find the events that concern a DID, a rule or an
 * RSE, and what each account did. It holds positions, not events: the audit reads the events
 * themselves from the event store by position (`readEventsAt`), so the index stays small and an
 * edited read model can never change what an auditor is shown. The whole feed needs no index:
 * it is the event store's own order (auditQueries.ts reads it from there).
 *
 * Subjects' entries are kept in buckets of `POSITIONS_PER_BUCKET` positions: one document per key
 * and bucket, `_id` `<key> <first position of the bucket>` (20 digits, so ids sort as positions),
 * holding the entries of its positions in order. A key's entries are one range of the primary key,
 * in order, without a secondary index; and a projection batch writes one document per key and
 * bucket it touched, however many of its events share the key. A 5 000-lock rule step (15 000
 * events) writes about 150 documents for its rule, as many for its RSE, and one per file for the
 * file's transfer request, where one document per event and per key made 75 000. Per event, the
 * index writes less than the models it indexes (`npm run bench rebuild` and docs/architecture.md,
 * "Audit", give the figures).
 *
 * - `audit_index`, keys `did:<scope>:<name>`, `rule:<id>`, `rse:<name>`: the events that concern
 *   a DID, rule or RSE (auditSubjects.ts) other than those of its own stream, which are read from
 *   the stream (short, by design) and merged with these by position. Entries `[position, type,
 *   time]`.
 * - `audit_feed`: one small document per event, `_id` its position, with the account that acted,
 *   its type and time, indexed by account and by type (what an account did, the events of some
 *   types). Every event has both keys, so buckets of them were rewritten by every event of a
 *   quiet service: a command of one event rewrote two buckets of up to a hundred entries (4 kB)
 *   to index a 240-byte document. Written once and never again, an event's entry costs about
 *   what its model does, in small writes as in bulk.
 */

/** An event of a subject's or an account's history: position, type, time. */
export type HistoryEntry = readonly [position: number, type: string, at: string];
/** An event of a type's history in the feed buckets of version 3: position, time. */
export type TypeEntry = readonly [position: number, at: string];

export type AuditIndexDocument = Projected<{ subject: string; entries: HistoryEntry[] }>;
/**
 * An event of the feed: `_id` is its position as 20 digits (`positionKey`); `identity` the
 * identity that acted (`identityKey`), `trace` the request's trace id, each absent on events
 * that do not record it.
 */
export type AuditFeedDocument = Projected<{
  account: string;
  type: string;
  at: string;
  identity?: string;
  trace?: string;
}>;

/** The DIDs of a lifetime exception, kept from its request for the decisions that follow. */
type ExceptionDidsDocument = Projected<{ dids: string[] }>;

/**
 * Positions per bucket. Small enough that a busy key's bucket (root's, or a busy RSE's), rewritten
 * by every small batch of a quiet service, stays a few kilobytes; large enough that bulk steps
 * write few documents.
 */
export const POSITIONS_PER_BUCKET = 100;

export const auditFeedCollection: CollectionSpec = {
  name: 'audit_feed',
  indexes: [
    { fields: ['account', '_id'] },
    { fields: ['type', '_id'] },
    { fields: ['identity', '_id'] },
    { fields: ['trace', '_id'] },
  ],
};
export const auditIndexCollection: CollectionSpec = { name: 'audit_index', indexes: [] };
const exceptionDidsCollection: CollectionSpec = { name: 'audit_exception_dids', indexes: [] };

/** An identity as the feed indexes it: `<kind>:<value>` (`USERPASS:jdoe`, `X509:/DC=ch/...`). */
export const identityKey = (identity: Readonly<{ kind: string; value: string }>): string =>
  `${identity.kind}:${identity.value}`;

/** A position as 20 digits: the widest bigint position a store can reach keeps the order of text. */
export const positionKey = (position: bigint | number): string => position.toString().padStart(20, '0');

/** The id of the bucket of `key` that holds `position`. */
export const bucketId = (key: string, position: bigint | number): string => {
  const at = BigInt(position);
  return `${key} ${positionKey(at - (at % BigInt(POSITIONS_PER_BUCKET)))}`;
};

/** The keys of the feed buckets of version 3, read while version 4 is rebuilt (auditQueries.ts). */
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
  // 4: the feed holds one document per event instead of buckets per account and type.
  // 5: the feed by acting identity and by trace; a lifetime exception's decisions under its DIDs.
  version: 5,
  collections: [auditFeedCollection, auditIndexCollection, exceptionDidsCollection],
  handles: AUDITED_EVENT_TYPES,
  async apply(event, context) {
    const { position, metadata, streamName } = context.currentEvent();
    const at = metadata.at;
    const id = positionKey(position);
    await context.collection<AuditFeedDocument>(auditFeedCollection).create(id, {
      _id: id,
      account: metadata.account,
      type: event.type,
      at,
      ...(metadata.identity ? { identity: identityKey(metadata.identity) } : {}),
      ...(metadata.correlationId ? { trace: metadata.correlationId } : {}),
    });
    const index = context.collection<AuditIndexDocument>(auditIndexCollection);
    const own = streamSubject(streamName);
    for (const subject of [...auditSubjects(event), ...(await rememberedSubjects(event, context))]) {
      if (subject === own) continue;
      await addEntry(index, subject, position, [Number(position), event.type, at], (id) => ({
        _id: id,
        subject,
        entries: [],
      }));
    }
  },
};

/**
 * Subjects an event concerns that its data does not name, remembered from an earlier event: a
 * lifetime exception's approval or rejection names only the exception, but concerns every DID its
 * request covered, so the DIDs are kept from the request (ExceptionRequested comes first in the
 * exception's stream, hence in the log).
 */
const rememberedSubjects = async (event: AuditedEvent, context: ProjectionContext): Promise<string[]> => {
  const remembered = context.collection<ExceptionDidsDocument>(exceptionDidsCollection);
  switch (event.type) {
    case 'ExceptionRequested': {
      const { id, dids } = event.data.exception;
      await remembered.create(id, { _id: id, dids: dids.map((did) => didSubject(did.scope, did.name)) });
      return [];
    }
    case 'ExceptionApproved':
    case 'ExceptionRejected':
      return (await remembered.get(event.data.id))?.dids ?? [];
    default:
      return [];
  }
};
