type Waiter = { position: bigint; resolve: (reached: boolean) => void; timer: NodeJS.Timeout };

/**
 * Promises on a position that only grows (what the projections have applied): each resolves true
 * once the position reaches it, or false at its timeout or when the waiters are closed.
 */
export class PositionWaiters {
  private readonly waiters = new Set<Waiter>();

  /** Resolves true once `advance` reports `position` or more; `current` is where things stand now. */
  wait(position: bigint, current: bigint, timeoutMs: number): Promise<boolean> {
    if (current >= position) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        position,
        resolve,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** Resolves every waiter at or below `position`. */
  advance(position: bigint): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.position > position) continue;
      clearTimeout(waiter.timer);
      this.waiters.delete(waiter);
      waiter.resolve(true);
    }
  }

  /** Resolves every waiter false: nothing will advance any more. */
  close(): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.waiters.clear();
  }
}
