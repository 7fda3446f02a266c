/**
 * Lets the API answer a write only once the read models show it (read your writes), and lets
 * daemons read facts only once the read models show the event they react to. Positions are
 * followed per projection group (projections/index.ts): each group applies the log on its own.
 */
export interface ProjectionProgress {
  /**
   * Resolves true once every serving projection of `groups` (default: every group) has applied
   * `position`, false on timeout.
   */
  waitFor(position: bigint, timeoutMs: number, groups?: readonly string[]): Promise<boolean>;
  /**
   * A number that grows whenever a serving projection applies an event, as this process knows it
   * without asking the stores; undefined when it only learns that by asking (then nothing may be
   * cached against it). While it stays the same, no read model has changed.
   */
  appliedVersion(): bigint | undefined;
}
