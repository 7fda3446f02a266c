/**
 * How long each phase of a process's start took, in milliseconds: the first, `loading`, from the
 * process's start to the first mark (Node's time origin is the process's start), each other from
 * the mark before. Logged when the API listens and when the start is complete; `npm run bench
 * startup` reads them.
 */
export class StartupPhases {
  private readonly marks: [name: string, ms: number][] = [];
  private last = 0;

  constructor(first = 'loading') {
    this.mark(first);
  }

  /** Ends the phase `name` now. */
  mark(name: string): void {
    const now = performance.now();
    this.marks.push([name, Math.round((now - this.last) * 10) / 10]);
    this.last = now;
  }

  /** Each phase's duration by name, in order; and `total`, from the process's start. */
  durations(): Record<string, number> {
    return { ...Object.fromEntries(this.marks), total: Math.round(this.last * 10) / 10 };
  }
}
