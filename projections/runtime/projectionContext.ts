import type { RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import type {
  BulkOperation,
  Collection,
  CollectionSpec,
  Filter,
  FindOptions,
  ReadStoreTransaction,
} from '../../infra/readstore/readStore.ts';
import { asDocument } from '../../infra/readstore/documents.ts';
import type { Projected } from '../projection.ts';

/**
 * What a projection sees while it applies one batch: its collections inside the batch's
 * transaction, each with a write-back cache, so a document touched by many events of the batch (a
 * dataset receiving thousands of attachments) is read once and written once, and every write of
 * the batch reaches the store at its end, grouped by collection, as bulk statements. Reads see
 * the batch's own writes: `get` answers from the cache, and a query first writes what is pending.
 *
 * Idempotence: a document remembers in `_pos` the position of the last event applied to it. An
 * update for an event at or below that position is skipped, unless this very delivery of the
 * event already touched the document (one event may update a document in several steps).
 */
export class ProjectionContext {
  private readonly collections = new Map<string, CachedCollection>();
  private event: RecordedEvent | undefined;
  /** The current event's position as a number (documents keep `_pos` as one). */
  private eventPosition = 0;
  /** Counts the events begun, so a cache entry can tell whether the current one touched it. */
  private ordinal = 0;

  constructor(
    private readonly transaction: ReadStoreTransaction,
    private readonly physicalSpec: (logical: CollectionSpec) => CollectionSpec,
  ) {}

  /** Called by the runner before each event; handlers never call it. */
  beginEvent(event: RecordedEvent): void {
    this.event = event;
    this.eventPosition = Number(event.position);
    this.ordinal += 1;
  }

  get position(): number {
    if (!this.event) throw new Error('No event is being applied');
    return this.eventPosition;
  }

  /** Which event of the batch is being applied (see `beginEvent`). */
  get eventOrdinal(): number {
    return this.ordinal;
  }

  currentEvent(): RecordedEvent {
    if (!this.event) throw new Error('No event is being applied');
    return this.event;
  }

  /** The collection as documents of type `T`: every call for one collection shares its cache. */
  collection<T extends Projected>(logical: CollectionSpec): ProjectionCollection<T> {
    let collection = this.collections.get(logical.name);
    if (!collection) {
      collection = new CachedCollection(this.transaction.collection(this.physicalSpec(logical)), this);
      this.collections.set(logical.name, collection);
    }
    return new ProjectionCollection<T>(collection);
  }

  /** Writes every collection's pending changes (the runner calls it at the end of the batch). */
  async flush(): Promise<void> {
    for (const collection of this.collections.values()) await collection.flush();
  }
}

/**
 * A document of the batch. `blind`: written by `create` without reading the store, so a row may
 * exist already (the event being delivered again); it is written only if absent. `touchedBy`: the
 * ordinal of the last event that changed it (see ProjectionContext).
 */
type CacheEntry = { document: Projected | null; dirty: boolean; blind: boolean; touchedBy: number };

/**
 * One collection of a batch as a projection reads and writes it, typed by its documents. The
 * documents come from the collection's cache shared by every view of it, typed as the collection
 * is (the read store's `asDocument`).
 */
export class ProjectionCollection<T extends Projected> {
  constructor(private readonly cached: CachedCollection) {}

  async get(id: string): Promise<T | null> {
    const document = await this.cached.get(id);
    return document && asDocument<T>(document);
  }

  /**
   * Creates a document the current event brings into being (a DID's creation, a new replica),
   * without reading the store first. If the document exists when the batch is written, the event
   * was applied before, so the stored one is kept. A document this batch already knows is simply
   * replaced, as `update` would.
   */
  create(id: string, document: T): Promise<void> {
    return this.cached.create(id, document);
  }

  /**
   * Changes one document: `change` gets the current document (or null) and returns the new one,
   * null to delete it, or undefined to leave it as it is. Skipped when the document already
   * reflects the current event.
   */
  update(id: string, change: (document: T | null) => T | null | undefined): Promise<void> {
    return this.cached.update(id, (document) => change(document && asDocument<T>(document)));
  }

  /** Queries see every change made earlier in the batch: pending writes are flushed first. */
  async find(filter: Filter, options?: FindOptions): Promise<T[]> {
    return (await this.cached.find(filter, options)).map((document) => asDocument<T>(document));
  }

  async *stream(filter: Filter, options?: FindOptions): AsyncGenerator<T> {
    for await (const document of this.cached.stream(filter, options)) yield asDocument<T>(document);
  }
}

/** A collection of the batch with its write-back cache (see ProjectionContext). */
class CachedCollection {
  private readonly cache = new Map<string, CacheEntry>();
  /** Entries changed since the last flush, in the order they were first changed. */
  private readonly dirty: string[] = [];

  constructor(
    private readonly collection: Collection<Projected>,
    private readonly context: ProjectionContext,
  ) {}

  async get(id: string): Promise<Projected | null> {
    const cached = this.cache.get(id);
    if (cached && !cached.blind) return cached.document;
    const document = await this.collection.get(id);
    if (cached) {
      // A row next to a blind creation is the truth: this event was delivered before.
      cached.blind = false;
      if (document) {
        cached.document = document;
        cached.dirty = false;
      }
      return cached.document;
    }
    this.cache.set(id, { document, dirty: false, blind: false, touchedBy: 0 });
    return document;
  }

  async create(id: string, document: Projected): Promise<void> {
    if (this.cache.has(id)) return this.update(id, () => document);
    this.dirty.push(id);
    this.cache.set(id, {
      document: { ...document, _id: id, _pos: this.context.position },
      dirty: true,
      blind: true,
      touchedBy: this.context.eventOrdinal,
    });
  }

  async update(id: string, change: (document: Projected | null) => Projected | null | undefined): Promise<void> {
    const current = await this.get(id);
    const entry = this.cache.get(id)!;
    const ordinal = this.context.eventOrdinal;
    if (current?._pos !== undefined && current._pos >= this.context.position && entry.touchedBy !== ordinal) return;
    const next = change(current);
    if (next === undefined) return;
    entry.touchedBy = ordinal;
    entry.document = next === null ? null : { ...next, _id: id, _pos: this.context.position };
    if (!entry.dirty) {
      entry.dirty = true;
      this.dirty.push(id);
    }
  }

  async find(filter: Filter, options?: FindOptions): Promise<Projected[]> {
    await this.flush();
    return this.collection.find(filter, options).toArray();
  }

  async *stream(filter: Filter, options?: FindOptions): AsyncGenerator<Projected> {
    await this.flush();
    yield* this.collection.find(filter, options);
  }

  /**
   * Writes the changed documents as one bulk write: replaced whole by `_id` (or deleted), blind
   * creations inserted only where absent. The read store turns runs of alike operations into
   * multi-row statements.
   */
  async flush(): Promise<void> {
    if (this.dirty.length === 0) return;
    const operations: BulkOperation<Projected>[] = [];
    for (const id of this.dirty) {
      const entry = this.cache.get(id);
      if (!entry?.dirty) continue;
      entry.dirty = false;
      if (entry.document === null) {
        operations.push({ deleteOne: { filter: { _id: id } } });
      } else if (entry.blind) {
        const { _id, ...fields } = entry.document;
        operations.push({ updateOne: { filter: { _id: id }, update: { $setOnInsert: fields }, upsert: true } });
      } else {
        operations.push({ replaceOne: { filter: { _id: id }, replacement: entry.document, upsert: true } });
      }
    }
    this.dirty.length = 0;
    await this.collection.bulkWrite(operations);
  }
}
