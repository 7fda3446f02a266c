/** A wait for some groups to reach a position. */
type Waiter = {
  position: bigint;
  groups: readonly string[];
  resolve: (reached: boolean) => void;
};

/**
 * Where each projection group stands (the position every serving projection of the group has
 * applied, as this process has heard), and promises on them: a wait names a position and the
 * groups it needs (all by default) and resolves true once each has reached it, false at its
 * timeout, when aborted or when closed. Positions only grow.
 */
export class GroupPositions {
  private readonly positions: Map<string, bigint>;
  private readonly waiters = new Set<Waiter>();

  constructor(readonly groups: readonly string[]) {
    this.positions = new Map(groups.map((group) => [group, 0n]));
  }

  /** Moves a group on (never back) and resolves the waits it completes; false for a group not here. */
  advance(group: string, position: bigint): boolean {
    const current = this.positions.get(group);
    if (current === undefined) return false;
    if (position > current) {
      this.positions.set(group, position);
      for (const waiter of [...this.waiters]) if (this.reached(waiter.position, waiter.groups)) waiter.resolve(true);
    }
    return true;
  }

  position(group: string): bigint {
    return this.positions.get(group) ?? 0n;
  }

  /** Every group's position, by name. */
  snapshot(): Record<string, bigint> {
    return Object.fromEntries(this.positions);
  }

  /** The lowest group's position: every read model has applied it. */
  lowest(): bigint {
    let lowest: bigint | undefined;
    for (const position of this.positions.values()) if (lowest === undefined || position < lowest) lowest = position;
    return lowest ?? 0n;
  }

  /**
   * A number that grows whenever any group applies events (the sum of their positions): while
   * it stays the same, no read model has changed. What caches of read-model facts are keyed on.
   */
  version(): bigint {
    let sum = 0n;
    for (const position of this.positions.values()) sum += position;
    return sum;
  }

  /** Whether each of `groups` (all when undefined; a group not here counts as reached) is at `position` or past it. */
  reached(position: bigint, groups: readonly string[] = this.groups): boolean {
    return groups.every((group) => (this.positions.get(group) ?? position) >= position);
  }

  wait(
    position: bigint,
    timeoutMs: number,
    groups: readonly string[] = this.groups,
    abort?: AbortSignal,
  ): Promise<boolean> {
    if (this.reached(position, groups)) return Promise.resolve(true);
    if (abort?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (reached: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        abort?.removeEventListener('abort', aborted);
        resolve(reached);
      };
      const aborted = () => finish(false);
      const timer = setTimeout(aborted, timeoutMs);
      const waiter: Waiter = { position, groups, resolve: finish };
      abort?.addEventListener('abort', aborted, { once: true });
      this.waiters.add(waiter);
    });
  }

  /** Resolves every wait false: nothing will advance any more. */
  close(): void {
    for (const waiter of [...this.waiters]) waiter.resolve(false);
  }
}
