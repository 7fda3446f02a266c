import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from './eventHashes.ts';
import type { EventStore } from './eventStore.ts';
import { LogChainChecker, type LogChainMode } from './logChain.ts';

/**
 * An anchor: the head of the log chain (logChain.ts) at one moment, as a small JSON document that
 * operators keep away from the service (another machine, a ticket, a mail to themselves). A log
 * chain shows events removed or moved inside the log, but not its newest events cut off together;
 * `dms audit verify --anchor FILE` shows that too, for every event up to the anchor's head: the
 * log must still hold an event at the head's position, and the chain must have the anchored value
 * there. Events written after the anchor are covered by the next one: take anchors regularly.
 *
 * With a key (`--key-file`), the anchor carries an HMAC-SHA256 of the rest of its canonical JSON,
 * so a copy kept where others can write it cannot be replaced by an anchor of a rewritten log
 * without the key.
 *
 * On SQLite the head is read from the newest event's stored log hash (one read, whatever the size
 * of the log). On EventStoreDB the chain is computed by reading the whole log, and the anchor also
 * keeps the chain's value every `checkpointEvery` events, so that `verify` can say between which
 * positions a difference lies.
 */

export const ANCHOR_FORMAT = 'dms-log-anchor/1';

const point = z.object({
  position: z.number().int().nonnegative(),
  log_hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** Events of the chain up to here (computed chains only). */
  events: z.number().int().positive().optional(),
});

const anchorSchema = z.object({
  format: z.literal(ANCHOR_FORMAT),
  log_chain: z.enum(['stored', 'computed']),
  taken_at: z.string(),
  head: point,
  /** Earlier values of a computed chain, oldest first. */
  checkpoints: z.array(point).default([]),
  signature: z
    .string()
    .regex(/^hmac-sha256:[0-9a-f]{64}$/)
    .optional(),
});

export type LogAnchor = z.infer<typeof anchorSchema>;
export type AnchorPoint = z.infer<typeof point>;

/** An anchor that cannot be taken, read or trusted: the message says why. */
export class AnchorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnchorError';
  }
}

/** A computed chain keeps its value every this many events by default (a million events: 100 values, 10 KB). */
export const DEFAULT_CHECKPOINT_EVERY = 10_000;

/** Takes an anchor of the store's log chain now. */
export const takeAnchor = async (
  eventStore: EventStore,
  mode: LogChainMode,
  options: Readonly<{
    checkpointEvery?: number;
    batchSize?: number;
    onProgress?: (events: number, position: bigint) => void;
    now?: Date;
  }> = {},
): Promise<LogAnchor> => {
  const takenAt = (options.now ?? new Date()).toISOString();
  if (mode === 'stored') {
    const position = await eventStore.headPosition();
    if (position === 0n) throw new AnchorError('The event log is empty: there is nothing to anchor');
    const [newest] = await eventStore.readEventsAt([position]);
    if (!newest?.logHash)
      throw new AnchorError(
        `The newest event (position ${position}) has no log hash: the log chain starts with the first event written by this version. Take the anchor after the next write`,
      );
    return {
      format: ANCHOR_FORMAT,
      log_chain: mode,
      taken_at: takenAt,
      head: { position: Number(position), log_hash: newest.logHash },
      checkpoints: [],
    };
  }
  const every = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
  const checker = new LogChainChecker('computed');
  const checkpoints: AnchorPoint[] = [];
  let after = 0n;
  let read = 0;
  for (;;) {
    const batch = await eventStore.readAll({ after, maxCount: options.batchSize ?? 1000 });
    if (batch.length === 0) break;
    for (const event of batch) {
      const chainedBefore = checker.chained;
      checker.check(event);
      const head = checker.head;
      if (head && checker.chained > chainedBefore && checker.chained % every === 0) checkpoints.push(pointOf(head));
    }
    read += batch.length;
    after = batch[batch.length - 1]!.position;
    options.onProgress?.(read, after);
  }
  const head = checker.head;
  if (!head) throw new AnchorError('The event log is empty: there is nothing to anchor');
  if (checkpoints[checkpoints.length - 1]?.position === Number(head.position)) checkpoints.pop();
  return { format: ANCHOR_FORMAT, log_chain: mode, taken_at: takenAt, head: pointOf(head), checkpoints };
};

const pointOf = (head: { position: bigint; logHash: string; events: number }): AnchorPoint => ({
  position: Number(head.position),
  log_hash: head.logHash,
  events: head.events,
});

const signatureOf = (anchor: LogAnchor, key: Buffer): string => {
  const { signature: _signature, ...signed } = anchor;
  return `hmac-sha256:${createHmac('sha256', key).update(canonicalJson(signed)).digest('hex')}`;
};

/** The anchor with its HMAC-SHA256 signature under `key`. */
export const signAnchor = (anchor: LogAnchor, key: Buffer): LogAnchor => ({
  ...anchor,
  signature: signatureOf(anchor, key),
});

/** Reads an anchor's JSON text; throws AnchorError when it is not one. */
export const parseAnchor = (text: string): LogAnchor => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AnchorError('The anchor is not JSON');
  }
  const parsed = anchorSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AnchorError(
      `The anchor is not a ${ANCHOR_FORMAT} document: ${issue ? `${issue.path.join('.') || 'the document'}: ${issue.message}` : 'its shape is wrong'}`,
    );
  }
  return parsed.data;
};

/**
 * Checks the anchor's signature with `key`, and that it anchors the chain the store keeps:
 * a signed anchor needs its key, a key needs a signed anchor, and the signature must match.
 */
export const trustAnchor = (anchor: LogAnchor, key: Buffer | undefined, mode: LogChainMode): void => {
  if (anchor.log_chain !== mode) {
    throw new AnchorError(
      `The anchor is of a ${anchor.log_chain} log chain and this event store's is ${mode}: an anchor holds only for the store it was taken of (take a new one after moving the log between SQLite and EventStoreDB)`,
    );
  }
  if (anchor.signature === undefined) {
    if (key !== undefined)
      throw new AnchorError('The anchor is not signed, but a key was given: it was not taken with that key');
    return;
  }
  if (key === undefined) throw new AnchorError('The anchor is signed: give its key (--key-file) to check it');
  const expected = Buffer.from(signatureOf(anchor, key));
  const actual = Buffer.from(anchor.signature);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    throw new AnchorError(
      "The anchor's signature does not match: the anchor was changed after it was taken, or the key is not the one it was signed with",
    );
  }
};

/** A difference between the log and an anchor. */
export type AnchorBreak = Readonly<{
  position: bigint;
  reason: 'anchor-mismatch' | 'cut-tail';
  detail: string;
}>;

/**
 * Compares the log chain with the anchor's points while the log is read in order: `after` is
 * called after every event with the chain's head, `finish` once the log is read.
 */
export class AnchorComparison {
  private readonly points: readonly AnchorPoint[];
  private next = 0;

  constructor(private readonly anchor: LogAnchor) {
    this.points = [...anchor.checkpoints, anchor.head];
  }

  /** How many of the anchor's points the log has matched so far. */
  get matched(): number {
    return this.next;
  }

  after(
    position: bigint,
    head: Readonly<{ position: bigint; logHash: string; events: number }> | undefined,
  ): AnchorBreak | undefined {
    const point = this.points[this.next];
    if (point === undefined || position < BigInt(point.position)) return undefined;
    if (position > BigInt(point.position) || head === undefined || head.position !== position) {
      return {
        position: BigInt(point.position),
        reason: 'anchor-mismatch',
        detail: `the anchor taken at ${this.anchor.taken_at} holds an event at position ${point.position}, which the log no longer has: it was removed`,
      };
    }
    if (head.logHash !== point.log_hash || (point.events !== undefined && head.events !== point.events)) {
      const counts =
        point.events !== undefined && head.events !== point.events
          ? ` (${head.events} events up to there, the anchor ${point.events})`
          : '';
      return {
        position,
        reason: 'anchor-mismatch',
        detail: `the log up to position ${point.position} is not the one anchored at ${this.anchor.taken_at}: its log hash there is ${head.logHash}, the anchor's ${point.log_hash}${counts}: events up to this position were changed, removed, inserted or moved, and the hashes written again${this.windowOf(this.next)}`,
      };
    }
    this.next += 1;
    return undefined;
  }

  /** After the whole log: the anchor's points the log did not reach are its cut tail. */
  finish(lastPosition: bigint): AnchorBreak | undefined {
    const point = this.points[this.next];
    if (point === undefined) return undefined;
    return {
      position: BigInt(point.position),
      reason: 'cut-tail',
      detail: `the log ends at position ${lastPosition}, but the anchor taken at ${this.anchor.taken_at} holds events up to position ${this.anchor.head.position}: the events after position ${lastPosition} were removed`,
    };
  }

  /** Where the difference lies, for an anchor whose earlier checkpoint matched. */
  private windowOf(index: number): string {
    const before = this.points[index - 1];
    return before ? ` (the log still matched the anchor at position ${before.position})` : '';
  }
}
