import type { EventStore, RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import type { CollectionSpec } from '../../infra/readstore/readStore.ts';
import type { Projected } from '../projection.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import {
  accountKey,
  auditFeedCollection,
  auditIndexCollection,
  bucketId,
  positionKey,
  typeKey,
  type AuditFeedDocument,
} from './auditIndex.ts';
import { AUDITED_EVENT_TYPES } from './auditSubjects.ts';

/**
 * What auditors read: the positions the audit index holds for a subject or an account (or the
 * whole feed), then the events themselves from the event store, in pages, oldest first.
 */

/** A bound of a history: a global position, or a time (ISO 8601 in UTC, as events record it). */
export type HistoryBound = Readonly<{ position: bigint }> | Readonly<{ time: string }>;

export type HistoryRange = Readonly<{
  /** From this position or time on (inclusive). */
  since?: HistoryBound;
  /** Up to this position or time (inclusive). */
  until?: HistoryBound;
  /** Only events of these types. */
  types?: readonly string[];
}>;

/** The range as bounds: positions bound the primary-key range, times are checked on each entry. */
type Bounds = {
  fromPosition?: bigint;
  toPosition?: bigint;
  fromTime?: string;
  toTime?: string;
  types?: readonly string[];
};

const boundsOf = (range: HistoryRange): Bounds => ({
  ...(range.since && 'position' in range.since ? { fromPosition: range.since.position } : {}),
  ...(range.since && 'time' in range.since ? { fromTime: range.since.time } : {}),
  ...(range.until && 'position' in range.until ? { toPosition: range.until.position } : {}),
  ...(range.until && 'time' in range.until ? { toTime: range.until.time } : {}),
  ...(range.types && range.types.length > 0 ? { types: range.types } : {}),
});

/** An event of a history as the index holds it. */
export type IndexEntry = Readonly<{ position: number; type: string; at: string }>;

/**
 * The entries of one key of a bucketed collection (auditIndex.ts), oldest first: the key's
 * buckets that may hold the range, one range of ids (a space ends the key in every id, and '!' is
 * the next character), then their entries within the bounds. An event's time is when its command
 * was decided, which follows the log's order only closely, so times are checked on each entry.
 */
async function* bucketEntries(
  readModels: ReadModels,
  collection: CollectionSpec,
  key: string,
  bounds: Bounds,
  decode: (entry: unknown) => IndexEntry | undefined,
): AsyncGenerator<IndexEntry> {
  const id: Record<string, string> = {};
  if (bounds.fromPosition !== undefined) id.$gte = bucketId(key, bounds.fromPosition);
  else id.$gt = `${key} `;
  if (bounds.toPosition !== undefined) id.$lte = bucketId(key, bounds.toPosition);
  else id.$lt = `${key}!`;
  for await (const bucket of readModels.collection<StoredBucket>(collection).find({ _id: id }, { sort: { _id: 1 } })) {
    for (const stored of storedEntries(bucket)) {
      const entry = decode(stored);
      if (entry && entryWithin(entry, bounds)) yield entry;
    }
  }
}

/** A bucket as either version of the index stored it (see `storedEntries`). */
type StoredBucket = Projected<{ entries?: unknown; position?: unknown; type?: unknown; at?: unknown }>;

/**
 * The entries of a bucket. The index's first version kept one entry per document, as fields of
 * its own (`position`, `type`, `at`, under ids `<subject> <position>` that the subject's range
 * still finds): after an upgrade that generation keeps serving until the new one is rebuilt, so
 * its documents are read as buckets of one.
 */
const storedEntries = (document: StoredBucket): readonly unknown[] => {
  if (Array.isArray(document.entries)) return document.entries;
  const { position, type, at } = document;
  return typeof position === 'number' ? [[position, type, at]] : [];
};

/** Whether an index entry lies within the bounds (positions, times and types). */
const entryWithin = (entry: IndexEntry, bounds: Bounds): boolean =>
  (bounds.fromPosition === undefined || entry.position >= Number(bounds.fromPosition)) &&
  (bounds.toPosition === undefined || entry.position <= Number(bounds.toPosition)) &&
  (bounds.fromTime === undefined || entry.at >= bounds.fromTime) &&
  (bounds.toTime === undefined || entry.at <= bounds.toTime) &&
  (bounds.types === undefined || bounds.types.includes(entry.type));

/*
 * Entries as the index writes them (auditIndex.ts): `HistoryEntry` for subjects and accounts,
 * `TypeEntry` for types. One of another shape (nothing this code wrote) is left out.
 */
const historyEntry = (entry: unknown): IndexEntry | undefined => {
  if (!Array.isArray(entry)) return undefined;
  const [position, type, at]: unknown[] = entry;
  return typeof position === 'number' && typeof type === 'string' && typeof at === 'string'
    ? { position, type, at }
    : undefined;
};

const typeEntry = (entry: unknown, type: string): IndexEntry | undefined => {
  if (!Array.isArray(entry)) return undefined;
  const [position, at]: unknown[] = entry;
  return typeof position === 'number' && typeof at === 'string' ? { position, type, at } : undefined;
};

/** The index entries of one subject (`did:<scope>:<name>`, `rule:<id>`, `rse:<name>`), oldest first. */
export const subjectEntries = (
  readModels: ReadModels,
  subject: string,
  range: HistoryRange,
): AsyncGenerator<IndexEntry> =>
  bucketEntries(readModels, auditIndexCollection, subject, boundsOf(range), historyEntry);

export type FeedQuery = HistoryRange &
  Readonly<{
    /** Only what this account did. */
    account?: string;
    /** Only what this identity did (`identityKey`: `<kind>:<value>`). */
    identity?: string;
    /** Only what one request caused: the events of its trace (a W3C trace id). */
    trace?: string;
    /** Only events after this position (the last one of the previous page). */
    after?: bigint;
    /** At most this many events; default all. */
    limit?: number;
  }>;

/**
 * The feed, oldest first: what one account did (its entries in the index), the events of some
 * types (their entries, merged by position), or every event (the event store's own order, the
 * step machinery left out). Reads a page at a time; stops at `limit`.
 */
export async function* feedEvents(
  readModels: ReadModels,
  eventStore: EventStore,
  query: FeedQuery,
  pageSize = 500,
): AsyncGenerator<RecordedEvent | MissingEvent> {
  const bounds = boundsOf(query);
  if (query.after !== undefined && (bounds.fromPosition === undefined || bounds.fromPosition <= query.after))
    bounds.fromPosition = query.after + 1n;
  // Version 3 kept the feed in buckets per account and type: while version 4 is rebuilt, the
  // serving generation holds those, and a query for the new documents finds none (and after, the
  // other way round).
  const feed = (
    field: 'account' | 'type',
    value: string,
    key: string,
    decode: (entry: unknown) => IndexEntry | undefined,
  ) =>
    mergedByPosition([
      feedEntries(readModels, field, { [field]: value }, bounds),
      bucketEntries(readModels, auditFeedCollection, key, bounds, decode),
    ]);
  // A trace or an identity leads (fewest entries), the account, when given too, narrows; neither
  // was in version 3's buckets.
  const lead = query.trace !== undefined ? 'trace' : query.identity !== undefined ? 'identity' : undefined;
  const equal = {
    ...(query.trace !== undefined ? { trace: query.trace } : {}),
    ...(query.identity !== undefined ? { identity: query.identity } : {}),
    ...(query.account !== undefined ? { account: query.account } : {}),
  };
  const events =
    lead !== undefined
      ? eventsOf(eventStore, feedEntries(readModels, lead, equal, bounds), pageSize)
      : query.account !== undefined
        ? eventsOf(eventStore, feed('account', query.account, accountKey(query.account), historyEntry), pageSize)
        : bounds.types !== undefined
          ? eventsOf(
              eventStore,
              mergedByPosition(
                bounds.types.map((type) => feed('type', type, typeKey(type), (entry) => typeEntry(entry, type))),
              ),
              pageSize,
            )
          : loggedEvents(eventStore, bounds, pageSize);
  let left = query.limit ?? Number.POSITIVE_INFINITY;
  if (left <= 0) return;
  for await (const event of events) {
    yield event;
    left -= 1;
    if (left <= 0) return;
  }
}

/**
 * The feed's events of one account, type, identity or trace (`field`, the index read, among the
 * `equal` fields), within the bounds, oldest first: one index range.
 */
async function* feedEntries(
  readModels: ReadModels,
  field: 'account' | 'type' | 'identity' | 'trace',
  equal: Readonly<Record<string, string>>,
  bounds: Bounds,
): AsyncGenerator<IndexEntry> {
  const id: Record<string, string> = {};
  if (bounds.fromPosition !== undefined) id.$gte = positionKey(bounds.fromPosition);
  if (bounds.toPosition !== undefined) id.$lte = positionKey(bounds.toPosition);
  const filter = Object.keys(id).length > 0 ? { ...equal, _id: id } : equal;
  for await (const document of readModels
    .collection<AuditFeedDocument>(auditFeedCollection)
    .find(filter, { sort: { [field]: 1, _id: 1 } })) {
    const entry = { position: Number(document._id), type: document.type, at: document.at };
    if (entryWithin(entry, bounds)) yield entry;
  }
}

/** Every audited event of the log within the bounds, read from the event store a page at a time. */
async function* loggedEvents(eventStore: EventStore, bounds: Bounds, pageSize: number): AsyncGenerator<RecordedEvent> {
  for (let after = bounds.fromPosition !== undefined ? bounds.fromPosition - 1n : 0n; ;) {
    const page = await eventStore.readAll({ after, maxCount: pageSize });
    for (const event of page) {
      if (bounds.toPosition !== undefined && event.position > bounds.toPosition) return;
      if (Object.hasOwn(AUDITED_EVENT_TYPES, event.type) && withinRange(event, bounds)) yield event;
    }
    if (page.length < pageSize) return;
    after = page[page.length - 1]!.position;
  }
}

/** Several ascending sequences of entries as one, by position. */
async function* mergedByPosition(sources: readonly AsyncIterable<IndexEntry>[]): AsyncGenerator<IndexEntry> {
  const iterators = sources.map((source) => source[Symbol.asyncIterator]());
  const next = async (iterator: AsyncIterator<IndexEntry>): Promise<IndexEntry | undefined> => {
    const result = await iterator.next();
    return result.done ? undefined : result.value;
  };
  const heads = await Promise.all(iterators.map(next));
  for (;;) {
    let lowest = -1;
    heads.forEach((head, index) => {
      if (head && (lowest < 0 || head.position < heads[lowest]!.position)) lowest = index;
    });
    if (lowest < 0) return;
    yield heads[lowest]!;
    heads[lowest] = await next(iterators[lowest]!);
  }
}

/** Whether a stored event lies within the range (what the index filters do for its entries). */
const withinRange = (event: RecordedEvent, bounds: Bounds): boolean =>
  (bounds.fromPosition === undefined || event.position >= bounds.fromPosition) &&
  (bounds.toPosition === undefined || event.position <= bounds.toPosition) &&
  (bounds.fromTime === undefined || event.metadata.at >= bounds.fromTime) &&
  (bounds.toTime === undefined || event.metadata.at <= bounds.toTime) &&
  (bounds.types === undefined || bounds.types.includes(event.type));

/** The events of one stream within the range, read a page at a time. */
async function* streamEvents(
  eventStore: EventStore,
  streamName: string,
  bounds: Bounds,
  pageSize: number,
): AsyncGenerator<RecordedEvent> {
  for (let fromRevision = 0n; ;) {
    const page = await eventStore.readStream(streamName, { fromRevision, maxCount: pageSize });
    for (const event of page) {
      if (bounds.toPosition !== undefined && event.position > bounds.toPosition) return;
      if (withinRange(event, bounds)) yield event;
    }
    if (page.length < pageSize) return;
    fromRevision = page[page.length - 1]!.revision + 1n;
  }
}

/**
 * The history of a DID, rule or RSE, oldest first: the events of its own stream merged by
 * position with those of other streams the audit index names for it.
 */
export async function* subjectHistory(
  readModels: ReadModels,
  eventStore: EventStore,
  subject: Readonly<{ subject: string; streamName: string }>,
  range: HistoryRange,
  pageSize = 500,
): AsyncGenerator<RecordedEvent | MissingEvent> {
  const own = streamEvents(eventStore, subject.streamName, boundsOf(range), pageSize)[Symbol.asyncIterator]();
  const others = eventsOf(eventStore, subjectEntries(readModels, subject.subject, range), pageSize)[
    Symbol.asyncIterator
  ]();
  let a = await own.next();
  let b = await others.next();
  while (!a.done || !b.done) {
    if (b.done || (!a.done && a.value.position < b.value.position)) {
      yield a.value!;
      a = await own.next();
    } else {
      yield b.value;
      b = await others.next();
    }
  }
}

/** An index entry whose event the event store does not hold (it never should). */
export type MissingEvent = Readonly<{ position: bigint; missing: true }>;

/**
 * The events at the entries' positions, read from the event store `pageSize` at a time, in the
 * entries' order. Memory holds one page, however long the history.
 */
export async function* eventsOf(
  eventStore: EventStore,
  entries: AsyncIterable<Readonly<{ position: number }>>,
  pageSize = 500,
): AsyncGenerator<RecordedEvent | MissingEvent> {
  let page: bigint[] = [];
  const flush = async function* (): AsyncGenerator<RecordedEvent | MissingEvent> {
    const found = new Map((await eventStore.readEventsAt(page)).map((event) => [event.position, event]));
    for (const position of page) yield found.get(position) ?? { position, missing: true };
    page = [];
  };
  for await (const entry of entries) {
    page.push(BigInt(entry.position));
    if (page.length >= pageSize) yield* flush();
  }
  if (page.length > 0) yield* flush();
}
