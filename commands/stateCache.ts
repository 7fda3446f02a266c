/**
 * Recently used aggregate states with the stream revision they reflect (least recently used
 * entries are dropped first). A cached state is never trusted blindly: loadState reads the events
 * after its revision before deciding, so the cache only saves replaying the past.
 */
export class StateCache {
  private readonly entries = new Map<string, { revision: bigint; state: unknown }>();

  constructor(private readonly maxEntries: number) {}

  /** The entry of a stream, with the state the aggregate's decider (named by `aggregateName`) left. */
  get(aggregateName: string, streamName: string): { revision: bigint; state: unknown } | undefined {
    const key = `${aggregateName}\u0000${streamName}`;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  set(aggregateName: string, streamName: string, revision: bigint, state: unknown): void {
    const key = `${aggregateName}\u0000${streamName}`;
    this.entries.delete(key);
    this.entries.set(key, { revision, state });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }
}
