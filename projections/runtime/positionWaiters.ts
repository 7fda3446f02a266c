/** `resolve` also clears the timer and forgets the waiter. */
type Waiter = { position: bigint; resolve: (reached: boolean) => void; timer: NodeJS.Timeout };

/**
 * Promises on a position that only grows (what the projections have applied): each resolves true
 * once the position reaches it, or false at its timeout or when the waiters are closed.
 */
export class PositionWaiters {
  private readonly waiters = new Set<Waiter>();

  /**
   * Resolves true once `advance` reports `position` or more; `current` is where things stand now.
   * Resolves false at the timeout, or at once when `abort` fires (the caller learnt it otherwise).
   */
  wait(position: bigint, current: bigint, timeoutMs: number, abort?: AbortSignal): Promise<boolean> {
    if (current >= position) return Promise.resolve(true);
    if (abort?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (reached: boolean) => {
        clearTimeout(waiter.timer);
        this.waiters.delete(waiter);
        abort?.removeEventListener('abort', aborted);
        resolve(reached);
      };
      const aborted = () => finish(false);
      const waiter: Waiter = { position, resolve: finish, timer: setTimeout(aborted, timeoutMs) };
      abort?.addEventListener('abort', aborted, { once: true });
      this.waiters.add(waiter);
    });
  }

  /** Resolves every waiter at or below `position`. */
  advance(position: bigint): void {
    for (const waiter of [...this.waiters]) if (waiter.position <= position) waiter.resolve(true);
  }

  /** Resolves every waiter false: nothing will advance any more. */
  close(): void {
    for (const waiter of [...this.waiters]) waiter.resolve(false);
  }
}
