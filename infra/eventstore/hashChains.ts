import { CHAIN_START, eventHash } from './eventHashes.ts';
import type { EventStore, RecordedEvent } from './eventStore.ts';

/** Where a stream's hash chain breaks, and why. */
export type ChainBreak = Readonly<{
  streamName: string;
  revision: bigint;
  position: bigint;
  reason: 'hash-mismatch' | 'missing-events' | 'unhashed-after-hashed';
  detail: string;
}>;

/**
 * Checks events one by one, in the order of `$all`, against the chain of their stream
 * (eventHashes.ts): each stream must start at revision 0 and go on without gaps, and each hash
 * must be the one recomputed from the event and the hash before it. Events written before
 * hashing have none: they are counted, and a stream's chain starts at its first hashed event
 * (which is what the stores do when they append after them); a hashed event followed by an
 * unhashed one is a break.
 *
 * It keeps the last revision and hash of every stream in memory (about 150 bytes a stream,
 * 150 MB for a million streams): one map lookup per event, where a temporary table would cost a
 * query per event; streams, unlike events, stay few enough. The bookkeeping streams of
 * multi-stream steps (`step-*`, `steps-journal`) may start above revision 0 on EventStoreDB when
 * a `$maxAge` removed their oldest events: their chain starts at the first event left.
 */
export class HashChainChecker {
  private readonly heads = new Map<string, { revision: bigint; hash: string | undefined }>();
  events = 0;
  hashed = 0;
  unhashed = 0;
  truncatedStreams = 0;

  get streams(): number {
    return this.heads.size;
  }

  /** The first break this event shows, or undefined when it continues its chain. */
  check(
    event: Pick<RecordedEvent, 'id' | 'streamName' | 'revision' | 'position' | 'type' | 'data' | 'metadata'>,
  ): ChainBreak | undefined {
    this.events += 1;
    const head = this.heads.get(event.streamName);
    const broken = (reason: ChainBreak['reason'], detail: string): ChainBreak => ({
      streamName: event.streamName,
      revision: event.revision,
      position: event.position,
      reason,
      detail,
    });
    const expected = head ? head.revision + 1n : 0n;
    // The chain of a truncated bookkeeping stream starts at its first event left, unchecked.
    const truncatedStart = !head && event.revision !== 0n && isStepBookkeeping(event.streamName);
    if (event.revision !== expected && !truncatedStart) {
      return broken(
        'missing-events',
        `expected revision ${expected} of the stream, found ${event.revision}: events are missing`,
      );
    }
    if (truncatedStart) this.truncatedStreams += 1;
    const hash = event.metadata.hash;
    if (hash === undefined) {
      if (head?.hash !== undefined)
        return broken('unhashed-after-hashed', 'the event has no hash, but the one before it in its stream has');
      this.unhashed += 1;
      this.heads.set(event.streamName, { revision: event.revision, hash: undefined });
      return undefined;
    }
    if (!truncatedStart) {
      const recomputed = eventHash(head?.hash ?? CHAIN_START, event);
      if (recomputed !== hash) {
        return broken(
          'hash-mismatch',
          `the stored hash is ${hash}, the event and the hash before it give ${recomputed}: the event, or the hash of the one before it, was changed`,
        );
      }
    }
    this.hashed += 1;
    this.heads.set(event.streamName, { revision: event.revision, hash });
    return undefined;
  }
}

const isStepBookkeeping = (streamName: string): boolean =>
  streamName === 'steps-journal' || streamName.startsWith('step-');

export type VerifyReport = Readonly<{
  events: number;
  streams: number;
  hashed: number;
  unhashed: number;
  truncatedStreams: number;
  firstBreak?: ChainBreak;
}>;

/**
 * Reads `$all` from the start, `batchSize` events at a time, and checks every stream's chain;
 * stops at the first break. `onProgress` hears the number of events checked and the position
 * reached after every batch.
 */
export const verifyHashChains = async (
  eventStore: EventStore,
  options: Readonly<{ batchSize?: number; onProgress?: (events: number, position: bigint) => void }> = {},
): Promise<VerifyReport> => {
  const checker = new HashChainChecker();
  const report = (firstBreak?: ChainBreak): VerifyReport => ({
    events: checker.events,
    streams: checker.streams,
    hashed: checker.hashed,
    unhashed: checker.unhashed,
    truncatedStreams: checker.truncatedStreams,
    ...(firstBreak ? { firstBreak } : {}),
  });
  let after = 0n;
  for (;;) {
    const batch = await eventStore.readAll({ after, maxCount: options.batchSize ?? 1000 });
    if (batch.length === 0) return report();
    for (const event of batch) {
      const broken = checker.check(event);
      if (broken) return report(broken);
    }
    after = batch[batch.length - 1]!.position;
    options.onProgress?.(checker.events, after);
  }
};
