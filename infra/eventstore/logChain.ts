import { hash } from 'node:crypto';
import { CHAIN_START, eventHash } from './eventHashes.ts';
import type { RecordedEvent } from './eventStore.ts';

/**
 * The log chain: tamper evidence over the order of the whole log, beside each stream's chain
 * (eventHashes.ts). A stream's chain shows an event edited or taken out of the middle of its
 * stream, but not its last events removed, nor a whole stream removed; the log chain links every
 * event to the event before it in `$all`:
 *
 *   log hash = sha256_hex(previous log hash + "\n" + the event's hash)
 *
 * where the event's hash is its stream-chain hash (`metadata.hash`, which covers its content) and
 * the previous log hash of the chain's first event is the empty string. So any event removed,
 * inserted or moved inside the log breaks the chain at the next event, which `dms audit verify`
 * names. What no chain can show by itself is its own end cut off (the newest events removed
 * together): an anchor does (logAnchor.ts), a copy of the chain's head kept elsewhere.
 *
 * Positions are not covered: the order is. An export imported into an empty store gets the same
 * log hashes again, wherever its events land.
 *
 * - SQLite stores the log hash of every event beside it (column `log_hash`), computed in the
 *   append's transaction, where the order is known. Events written before the log chain existed
 *   have none; the chain starts at the first event written after (`verify` says where).
 * - EventStoreDB gives an event its place in `$all` only as it commits, after the event (and its
 *   hash) is written: nothing can be stored. There the chain is computed by `dms audit anchor`
 *   and `verify` as they read the log, over every event but the step bookkeeping streams (whose
 *   old events `$maxAge` removes), and an anchor is what it is checked against.
 */

/** The previous log hash of the chain's first event. */
export const LOG_CHAIN_START = '';

/** The log hash of an event after `previous`, from the event's stream-chain hash. */
export const logHash = (previous: string, eventHashText: string): string =>
  hash('sha256', `${previous}\n${eventHashText}`, 'hex');

/** How a store keeps its log chain: stored with every event (SQLite), or computed by the readers (EventStoreDB). */
export type LogChainMode = 'stored' | 'computed';

/** Streams the computed chain leaves out: the step bookkeeping, which `$maxAge` trims on EventStoreDB. */
export const isStepBookkeeping = (streamName: string): boolean =>
  streamName === 'steps-journal' || streamName.startsWith('step-');

type ChainedEvent = Pick<RecordedEvent, 'id' | 'streamName' | 'revision' | 'position' | 'type' | 'data' | 'metadata'> &
  Readonly<{ logHash?: string }>;

/** The head of the log chain at one event. */
export type LogChainHead = Readonly<{ position: bigint; logHash: string; events: number }>;

/** A break of the log chain found by the checker. */
export type LogChainBreak = Readonly<{
  reason: 'log-chain-mismatch' | 'unchained-after-chained';
  detail: string;
}>;

/**
 * Follows the log chain event by event, in the order of `$all`. In `stored` mode it checks each
 * stored log hash against the one recomputed from the event and the log hash before it; in
 * `computed` mode it computes them. `head` is the chain's value after the last event taken.
 */
export class LogChainChecker {
  /** The log hash of the last chained event, undefined before the chain starts. */
  private last: LogChainHead | undefined;
  /** Position of the chain's first event, undefined until it starts. */
  startsAt: bigint | undefined;
  /** Events before the chain starts (written before it existed). */
  unchained = 0;
  /** Events of the chain so far. */
  chained = 0;

  constructor(readonly mode: LogChainMode) {}

  get head(): LogChainHead | undefined {
    return this.last;
  }

  check(event: ChainedEvent): LogChainBreak | undefined {
    if (this.mode === 'computed') {
      if (isStepBookkeeping(event.streamName)) return undefined;
      // Events written before stream hashing are chained by the hash they would have had.
      const digest = event.metadata.hash ?? eventHash(CHAIN_START, event);
      this.take(event.position, logHash(this.last?.logHash ?? LOG_CHAIN_START, digest));
      return undefined;
    }
    const stored = event.logHash;
    if (stored === undefined) {
      if (this.last !== undefined) {
        return {
          reason: 'unchained-after-chained',
          detail: `the event has no log hash, but the one before it in the log (position ${this.last.position}) has: the log hash was taken away, or the event was put here`,
        };
      }
      this.unchained += 1;
      return undefined;
    }
    const recomputed = logHash(this.last?.logHash ?? LOG_CHAIN_START, event.metadata.hash ?? '');
    if (recomputed !== stored) {
      const after =
        this.last === undefined
          ? 'before it, since the chain started'
          : `between position ${this.last.position} and it`;
      return {
        reason: 'log-chain-mismatch',
        detail: `the stored log hash is ${stored}, the log hash before it and this event give ${recomputed}: events were removed, inserted or moved ${after}, or this event's hash was changed`,
      };
    }
    this.take(event.position, stored);
    return undefined;
  }

  private take(position: bigint, value: string): void {
    if (this.startsAt === undefined) this.startsAt = position;
    this.chained += 1;
    this.last = { position, logHash: value, events: this.chained };
  }
}
