import type { Collection, CollectionSpec, Document, ReadStore } from '../readstore/readStore.ts';
import { timeOrderedUuid } from '../eventstore/eventIds.ts';

/**
 * The reads traces report, between the API that takes the traces and kronos, which records them
 * in batches (workers/trace/kronosRole.ts). Rucio hands its traces to a message broker kronos
 * listens to; here they wait in the read store, outside the projections (like tokens and
 * heartbeats: every process sees them, a rebuild leaves them alone), until a batch records them.
 * Each has a time-ordered id, so the oldest come first, and a batch that failed half-way is read
 * again the same.
 */
export type BufferedRead = Document & {
  /** When the API took the trace (ISO). */
  receivedAt: string;
  /** The read, as the domain parsed it from the trace (domain/trace/kronos.ts). */
  read: Readonly<Record<string, unknown>>;
};

const traceBufferCollection: CollectionSpec = { name: 'trace_buffer', indexes: [] };

/** The smallest time-ordered id of a millisecond: ids below it were made before it. */
const firstIdAt = (time: Date): string => {
  const hex = time.getTime().toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
};

export class TraceBuffer {
  private readonly reads: Collection<BufferedRead>;

  constructor(readStore: ReadStore) {
    this.reads = readStore.collection<BufferedRead>(traceBufferCollection);
  }

  /** Keeps the reads of one request, in one write. */
  async add(reads: readonly Readonly<Record<string, unknown>>[], now: Date): Promise<void> {
    if (reads.length === 0) return;
    const receivedAt = now.toISOString();
    await this.reads.bulkWrite(
      reads.map((read) => ({ insertOne: { document: { _id: timeOrderedUuid(now.getTime()), receivedAt, read } } })),
    );
  }

  /**
   * The oldest reads taken before `settledBefore`, at most `limit`. Reads younger than that are
   * left for the next batch: another API process may still be writing reads of that moment, and
   * a batch read again after a crash must be the same batch.
   */
  oldest(limit: number, settledBefore: Date): Promise<BufferedRead[]> {
    return this.reads.find({ _id: { $lt: firstIdAt(settledBefore) } }, { sort: { _id: 1 }, limit }).toArray();
  }

  /** Forgets reads a batch recorded. */
  async remove(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.reads.deleteMany({ _id: { $in: ids } });
  }

  count(): Promise<number> {
    return this.reads.count();
  }
}
