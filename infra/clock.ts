/**
 * Where the service reads the time of day for what it decides by time: when a token or challenge
 * expires, how long a failed login waits, when a tombstone, a lifetime or a grace period has
 * passed, when a delayed rule is due, what a command's events say happened when. Production runs
 * `systemClock`; tests pass a clock they move (test/support/clock.ts), so that an hour's lifetime
 * passes in an instant instead of a sleep.
 *
 * The clock is handed down from `startRuntime` (bin/runtime.ts), never imported as a global, and
 * the domain never reads it: deciders get the time in their command's metadata, which is made from
 * it. Durations measured for metrics, logs and progress (how long a job or a request took) stay on
 * `performance.now()` or `Date.now()`: they decide nothing. docs/architecture.md ("Time") lists
 * which is which.
 */
export type Clock = Readonly<{
  /** Milliseconds since the epoch, as `Date.now()`. */
  now(): number;
}>;

export const systemClock: Clock = { now: () => Date.now() };

/** The clock's time as a `Date` (command metadata, expiries). */
export const dateOf = (clock: Clock): Date => new Date(clock.now());

/** The clock's time as an ISO 8601 text (what the read models and the workflows compare). */
export const isoOf = (clock: Clock): string => new Date(clock.now()).toISOString();
