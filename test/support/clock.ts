import type { Clock } from '../../infra/clock.ts';

/**
 * A clock a test moves (infra/clock.ts): handed to `startTestServer({ clock })`, it is what the
 * server decides by (token and challenge expiry, the login throttle, tombstones, lifetimes, grace
 * periods, delayed injections, heartbeats), so a test jumps over an hour instead of sleeping.
 *
 * It starts at the real time. Standing (the default), it reads the same until `set` or `advance`:
 * for a server whose daemons do not run, or are run by hand. Running (`{ running: true }`), it
 * goes on at the real pace from wherever it was set: for a server whose daemons work on their own,
 * with transfers and polls that expect time to pass between their cycles.
 */
export class ManualClock implements Clock {
  /** Standing: the reading. Running: what is added to the real time. */
  private value: number;

  constructor(private readonly options: Readonly<{ running?: boolean; at?: number }> = {}) {
    const at = options.at ?? Date.now();
    this.value = options.running ? at - Date.now() : at;
  }

  now(): number {
    return this.options.running ? Date.now() + this.value : this.value;
  }

  /** Moves the clock to `time` (milliseconds since the epoch, or a date), forwards or back. */
  set(time: number | Date): void {
    const at = typeof time === 'number' ? time : time.getTime();
    this.value = this.options.running ? at - Date.now() : at;
  }

  /** Moves the clock forwards by `ms`. */
  advance(ms: number): void {
    if (ms < 0) throw new Error(`a clock advances by a positive time, not ${ms} ms`);
    this.value += ms;
  }

  /** The clock's time as a `Date`. */
  date(): Date {
    return new Date(this.now());
  }
}
