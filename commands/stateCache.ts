/**
 * Recently used aggregate states with the stream revision they reflect (least recently used
 * entries are dropped first). A cached state is never trusted blindly: loadState reads the events
 * after its revision before deciding, so the cache only saves replaying the past.
 *
 * Two bounds: the number of states, and their weight (`weightOf`: roughly the entries they hold),
 * since one state may hold a hundred thousand entries (the content of a large dataset) where most
 * hold a few. A state heavier than the whole weight bound is not kept: it would push every other
 * one out, and reading it again costs what replaying it does.
 */
export class StateCache {
  private readonly entries = new Map<string, { revision: bigint; state: unknown; weight: number }>();
  private totalWeight = 0;

  constructor(
    private readonly maxEntries: number,
    /** Default 200 000: about 40 MB of states on the development machine (a file DID state weighs 3 to 5). */
    private readonly maxWeight = 200_000,
  ) {}

  /** States kept now, and their weight. */
  get size(): Readonly<{ entries: number; weight: number }> {
    return { entries: this.entries.size, weight: this.totalWeight };
  }

  /** The entry of a stream, with the state the aggregate's decider (named by `aggregateName`) left. */
  get(aggregateName: string, streamName: string): { revision: bigint; state: unknown } | undefined {
    const key = `${aggregateName}\u0000${streamName}`;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return { revision: entry.revision, state: entry.state };
  }

  /** Drops a stream's entry: its next load reads the stream from the start. */
  forget(aggregateName: string, streamName: string): void {
    const key = `${aggregateName}\u0000${streamName}`;
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.totalWeight -= entry.weight;
  }

  set(aggregateName: string, streamName: string, revision: bigint, state: unknown): void {
    const key = `${aggregateName}\u0000${streamName}`;
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.totalWeight -= previous.weight;
    }
    const weight = weightOf(state);
    if (weight > this.maxWeight) return;
    this.entries.set(key, { revision, state, weight });
    this.totalWeight += weight;
    while (this.entries.size > this.maxEntries || this.totalWeight > this.maxWeight) {
      const oldest = this.entries.entries().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest[0]);
      this.totalWeight -= oldest[1].weight;
    }
  }
}

/**
 * A rough measure of what a state holds, cheap enough for every command: 1, plus the number of
 * entries of each map, set and array found in the state's objects down to three levels (their
 * entries are counted, not visited). An aggregate's state keeps its collections there.
 */
export const weightOf = (value: unknown, depth = 3): number => {
  if (value instanceof Map || value instanceof Set) return 1 + value.size;
  if (Array.isArray(value)) return 1 + value.length;
  if (typeof value !== 'object' || value === null || depth === 0) return 1;
  let weight = 1;
  for (const member of Object.values(value)) if (typeof member === 'object') weight += weightOf(member, depth - 1) - 1;
  return weight;
};
