import { CHAIN_START, eventHash } from './eventHashes.ts';
import type { EventStore, RecordedEvent } from './eventStore.ts';
import { AnchorComparison, type LogAnchor } from './logAnchor.ts';
import { isStepBookkeeping, LogChainChecker, type LogChainHead, type LogChainMode } from './logChain.ts';

/** Where a stream's hash chain breaks, and why. */
export type StreamChainBreak = Readonly<{
  streamName: string;
  revision: bigint;
  position: bigint;
  reason: 'hash-mismatch' | 'missing-events' | 'unhashed-after-hashed';
  detail: string;
}>;

/**
 * Where the event log's tamper evidence breaks: a stream's chain, the log chain at an event (its
 * stream and revision named), or the log against an anchor (a position only).
 */
export type ChainBreak =
  | StreamChainBreak
  | Readonly<{
      streamName: string;
      revision: bigint;
      position: bigint;
      reason: 'log-chain-mismatch' | 'unchained-after-chained';
      detail: string;
    }>
  | Readonly<{
      streamName?: undefined;
      revision?: undefined;
      position: bigint;
      reason: 'anchor-mismatch' | 'cut-tail';
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
  ): StreamChainBreak | undefined {
    this.events += 1;
    const head = this.heads.get(event.streamName);
    const broken = (reason: StreamChainBreak['reason'], detail: string): StreamChainBreak => ({
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

/** What verify found of the log chain. */
export type LogChainReport = Readonly<{
  mode: LogChainMode;
  /** Position of the chain's first event; undefined when no event is chained. */
  startsAt?: bigint;
  /** Events before the chain starts (stored chains: written before it existed). */
  unchained: number;
  chained: number;
  /** The chain's value at its last event: what an anchor of the log now holds. */
  head?: LogChainHead;
}>;

export type VerifyReport = Readonly<{
  events: number;
  streams: number;
  hashed: number;
  unhashed: number;
  truncatedStreams: number;
  logChain: LogChainReport;
  /** The anchor checked against, and how many of its points the log matched (the head is the last). */
  anchor?: Readonly<{ takenAt: string; position: bigint; points: number; matched: number }>;
  firstBreak?: ChainBreak;
}>;

export type VerifyOptions = Readonly<{
  /** How the store keeps its log chain: `stored` (SQLite, the default) or `computed` (EventStoreDB). */
  logChain?: LogChainMode;
  /** An anchor taken earlier (logAnchor.ts), already trusted (`trustAnchor`). */
  anchor?: LogAnchor;
  batchSize?: number;
  onProgress?: (events: number, position: bigint) => void;
}>;

/**
 * Reads `$all` from the start, `batchSize` events at a time, and checks every stream's chain, the
 * log chain, and the log against the anchor when one is given; stops at the first break.
 * `onProgress` hears the number of events checked and the position reached after every batch.
 */
export const verifyHashChains = async (eventStore: EventStore, options: VerifyOptions = {}): Promise<VerifyReport> => {
  const checker = new HashChainChecker();
  const logChecker = new LogChainChecker(options.logChain ?? 'stored');
  const anchor = options.anchor ? new AnchorComparison(options.anchor) : undefined;
  const report = (firstBreak?: ChainBreak): VerifyReport => ({
    events: checker.events,
    streams: checker.streams,
    hashed: checker.hashed,
    unhashed: checker.unhashed,
    truncatedStreams: checker.truncatedStreams,
    logChain: {
      mode: logChecker.mode,
      ...(logChecker.startsAt !== undefined ? { startsAt: logChecker.startsAt } : {}),
      unchained: logChecker.unchained,
      chained: logChecker.chained,
      ...(logChecker.head ? { head: logChecker.head } : {}),
    },
    ...(options.anchor && anchor
      ? {
          anchor: {
            takenAt: options.anchor.taken_at,
            position: BigInt(options.anchor.head.position),
            points: options.anchor.checkpoints.length + 1,
            matched: anchor.matched,
          },
        }
      : {}),
    ...(firstBreak ? { firstBreak } : {}),
  });
  let after = 0n;
  for (;;) {
    const batch = await eventStore.readAll({ after, maxCount: options.batchSize ?? 1000 });
    if (batch.length === 0) return report(anchor?.finish(after));
    for (const event of batch) {
      const broken = checker.check(event);
      if (broken) return report(broken);
      const logBroken = logChecker.check(event);
      if (logBroken)
        return report({
          streamName: event.streamName,
          revision: event.revision,
          position: event.position,
          ...logBroken,
        });
      const anchorBroken = anchor?.after(event.position, logChecker.head);
      if (anchorBroken) return report(anchorBroken);
    }
    after = batch[batch.length - 1]!.position;
    options.onProgress?.(checker.events, after);
  }
};
