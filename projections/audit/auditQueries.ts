import type { EventStore, RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import type { Filter } from '../../infra/readstore/readStore.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import {
  auditFeedCollection,
  auditIndexCollection,
  positionKey,
  subjectEntryId,
  type AuditFeedDocument,
  type AuditIndexDocument,
} from './auditIndex.ts';

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
type Bounds = { fromPosition?: bigint; toPosition?: bigint; fromTime?: string; toTime?: string; types?: readonly string[] };

const boundsOf = (range: HistoryRange): Bounds => ({
  ...(range.since && 'position' in range.since ? { fromPosition: range.since.position } : {}),
  ...(range.since && 'time' in range.since ? { fromTime: range.since.time } : {}),
  ...(range.until && 'position' in range.until ? { toPosition: range.until.position } : {}),
  ...(range.until && 'time' in range.until ? { toTime: range.until.time } : {}),
  ...(range.types && range.types.length > 0 ? { types: range.types } : {}),
});

/**
 * A filter on entries whose ids are `idOf(position)`, between `lowest` and `highest` (exclusive).
 * An event's time is when its command was decided, which follows the log's order only closely,
 * so time bounds and types are checked on each entry of the position range.
 */
const boundsFilter = (bounds: Bounds, idOf: (position: bigint) => string, lowest: string, highest: string): Filter => {
  const id: Record<string, string> = {};
  if (bounds.fromPosition !== undefined) id.$gte = idOf(bounds.fromPosition);
  else id.$gt = lowest;
  if (bounds.toPosition !== undefined) id.$lte = idOf(bounds.toPosition);
  else id.$lt = highest;
  const at: Record<string, string> = {};
  if (bounds.fromTime !== undefined) at.$gte = bounds.fromTime;
  if (bounds.toTime !== undefined) at.$lte = bounds.toTime;
  return {
    _id: id,
    ...(Object.keys(at).length > 0 ? { at } : {}),
    ...(bounds.types ? { type: { $in: [...bounds.types] } } : {}),
  };
};

/** The index entries of one subject (`did:<scope>:<name>`, `rule:<id>`, `rse:<name>`), oldest first. */
export const subjectEntries = (readModels: ReadModels, subject: string, range: HistoryRange): AsyncIterable<AuditIndexDocument> =>
  readModels
    .collection<AuditIndexDocument>(auditIndexCollection)
    // A space ends the subject in every id, and '!' is the next character: the range is the subject's.
    .find(boundsFilter(boundsOf(range), (position) => subjectEntryId(subject, position), `${subject} `, `${subject}!`), { sort: { _id: 1 } });

export type FeedQuery = HistoryRange &
  Readonly<{
    /** Only what this account did. */
    account?: string;
    /** Only events after this position (the last one of the previous page). */
    after?: bigint;
    /** At most this many entries; default all. */
    limit?: number;
  }>;

/** The feed: every event, or those of one account, oldest first. */
export const feedEntries = (readModels: ReadModels, query: FeedQuery): AsyncIterable<AuditFeedDocument> => {
  const bounds = boundsOf(query);
  if (query.after !== undefined && (bounds.fromPosition === undefined || bounds.fromPosition <= query.after)) bounds.fromPosition = query.after + 1n;
  const filter = boundsFilter(bounds, positionKey, positionKey(0), positionKey(10n ** 20n - 1n));
  return readModels
    .collection<AuditFeedDocument>(auditFeedCollection)
    .find({ ...filter, ...(query.account !== undefined ? { account: query.account } : {}) }, { sort: { _id: 1 }, ...(query.limit ? { limit: query.limit } : {}) });
};

/** Whether a stored event lies within the range (what the index filters do for its entries). */
const withinRange = (event: RecordedEvent, bounds: Bounds): boolean =>
  (bounds.fromPosition === undefined || event.position >= bounds.fromPosition) &&
  (bounds.toPosition === undefined || event.position <= bounds.toPosition) &&
  (bounds.fromTime === undefined || event.metadata.at >= bounds.fromTime) &&
  (bounds.toTime === undefined || event.metadata.at <= bounds.toTime) &&
  (bounds.types === undefined || bounds.types.includes(event.type));

/** The events of one stream within the range, read a page at a time. */
async function* streamEvents(eventStore: EventStore, streamName: string, bounds: Bounds, pageSize: number): AsyncGenerator<RecordedEvent> {
  for (let fromRevision = 0n; ; ) {
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
  const others = eventsOf(eventStore, subjectEntries(readModels, subject.subject, range), pageSize)[Symbol.asyncIterator]();
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
