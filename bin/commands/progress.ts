/**
 * Progress of a long command (a rebuild, a verify, an export or import) on stderr: on a terminal
 * a bar redrawn in place, at most ten times a second; otherwise (a log, a pipe) a plain line every
 * `plainEveryMs` (default 5 s), counted from the start, and the final line once, so logs stay
 * readable. Results go to stdout.
 *
 *   verify  [##########..........]  51%  512 000 events  98 400 events/s  ETA 0:05
 */
export type ProgressOutput = Readonly<{ isTTY?: boolean; columns?: number; write(text: string): unknown }>;

export class Progress {
  private readonly started: number;
  private lastDrawn: number;
  private lastLine = '';
  /** What the last line drawn showed, so that `finish` does not print the same again. */
  private drawnState: string | undefined;
  private done = 0;
  private fraction: number | undefined;

  constructor(
    private readonly label: string,
    private readonly unit = 'events',
    private readonly output: ProgressOutput = process.stderr,
    private readonly plainEveryMs = 5000,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
    this.lastDrawn = this.started;
  }

  /** `done` units so far; `fraction` (0 to 1) of the whole when it is known, for the bar and the ETA. */
  update(done: number, fraction?: number): void {
    this.done = done;
    this.fraction = fraction === undefined ? undefined : Math.min(1, Math.max(0, fraction));
    const now = this.now();
    if (now - this.lastDrawn < (this.output.isTTY ? 100 : this.plainEveryMs)) return;
    this.lastDrawn = now;
    this.draw(now);
  }

  /** Draws the final state and ends the line. */
  finish(): void {
    if (this.output.isTTY) {
      this.draw(this.now());
      this.output.write('\n');
    } else if (this.drawnState !== this.state()) this.draw(this.now());
  }

  private state(): string {
    return `${this.done}/${this.fraction}`;
  }

  private draw(now: number): void {
    const seconds = Math.max(0.001, (now - this.started) / 1000);
    const rate = this.done / seconds;
    const parts = [this.label];
    if (this.fraction !== undefined) {
      if (this.output.isTTY) parts.push(`[${'#'.repeat(Math.round(this.fraction * 20)).padEnd(20, '.')}]`);
      parts.push(`${Math.floor(this.fraction * 100)}%`.padStart(4));
    }
    parts.push(`${grouped(this.done)} ${this.unit}`, `${grouped(Math.round(rate))} ${this.unit}/s`);
    if (this.fraction !== undefined && this.fraction > 0 && this.fraction < 1)
      parts.push(`ETA ${clock((seconds * (1 - this.fraction)) / this.fraction)}`);
    else parts.push(`in ${clock(seconds)}`);
    const line = parts.join('  ');
    if (this.output.isTTY) {
      const width = this.output.columns ?? 100;
      this.output.write(`\r${line.slice(0, width - 1).padEnd(Math.min(width - 1, this.lastLine.length))}`);
    } else {
      this.output.write(`${line}\n`);
    }
    this.lastLine = line;
    this.drawnState = this.state();
  }
}

/** 1234567 → "1 234 567". */
export const grouped = (value: number): string => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');

/** Seconds as m:ss, or h:mm:ss past an hour. */
export const clock = (seconds: number): string => {
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
};
