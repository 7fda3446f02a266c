import { PositionWaiters } from './positionWaiters.ts';
import type { ProjectionProgress } from './projectionRunner.ts';
import type { ReadModels } from './readModels.ts';

/**
 * What the projections tell the processes that read their models: where they stand (the position
 * every serving projection has applied, and the generation each serves), then every step after.
 * The same reports the projection thread sends its process (projectorThread.ts).
 */
export type ProgressReport =
  | { type: 'ready'; position: bigint; generations: Record<string, number> }
  | { type: 'progress'; position: bigint }
  | { type: 'generation'; name: string; generation: number };

/**
 * The projections' side of the relay (`dms serve` with several API workers): the process running
 * them keeps where they stand, for a worker that starts later (`snapshot`), and hands each report
 * to the listeners, which pass it on to every worker in order.
 */
export class ProgressFeed {
  private position = 0n;
  private readonly generations = new Map<string, number>();
  private readonly listeners = new Set<(report: ProgressReport) => void>();

  report(report: ProgressReport): void {
    if (report.type === 'ready') {
      for (const [name, generation] of Object.entries(report.generations)) this.generations.set(name, generation);
      if (report.position > this.position) this.position = report.position;
    } else if (report.type === 'progress') {
      if (report.position <= this.position) return;
      this.position = report.position;
    } else {
      this.generations.set(report.name, report.generation);
    }
    for (const listener of [...this.listeners]) listener(report);
  }

  snapshot(): ProgressReport {
    return { type: 'ready', position: this.position, generations: Object.fromEntries(this.generations) };
  }

  subscribe(listener: (report: ProgressReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * The workers' side: read-your-writes in an API worker whose projections run in another process
 * of the same `dms serve`. The reports come over the cluster's IPC channel, which loses and
 * reorders nothing while it lives (and the worker exits when it breaks), so unlike a Redis signal
 * (checkpointWatcher.ts) they are trusted as the projection thread's own: a wait ends at the
 * report, without looking at the stores, and `appliedPosition` may key caches.
 */
export class RelayedProgress implements ProjectionProgress {
  private position = 0n;
  private readonly waiters = new PositionWaiters();
  private readonly generations = new Map<string, number>();
  private readModels: ReadModels | undefined;

  receive(report: ProgressReport): void {
    if (report.type === 'generation') {
      this.serve(report.name, report.generation);
      return;
    }
    if (report.type === 'ready')
      for (const [name, generation] of Object.entries(report.generations)) this.serve(name, generation);
    if (report.position > this.position) this.position = report.position;
    this.waiters.advance(this.position);
  }

  /** Reads of `readModels` follow the generations reported, from now on (reports may come before it exists). */
  follow(readModels: ReadModels): void {
    this.readModels = readModels;
    for (const [name, generation] of this.generations) readModels.setServingGeneration(name, generation);
  }

  private serve(name: string, generation: number): void {
    this.generations.set(name, generation);
    this.readModels?.setServingGeneration(name, generation);
  }

  waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    return this.waiters.wait(position, this.position, timeoutMs);
  }

  appliedPosition(): bigint {
    return this.position;
  }

  close(): void {
    this.waiters.close();
  }
}

/** Whether a value that crossed a process boundary is a report (structured-cloned: bigints stay bigints). */
export const isProgressReport = (value: unknown): value is ProgressReport => {
  if (typeof value !== 'object' || value === null || !('type' in value)) return false;
  if (value.type === 'progress') return 'position' in value && typeof value.position === 'bigint';
  if (value.type === 'generation')
    return (
      'name' in value && typeof value.name === 'string' && 'generation' in value && typeof value.generation === 'number'
    );
  if (value.type === 'ready')
    return (
      'position' in value &&
      typeof value.position === 'bigint' &&
      'generations' in value &&
      typeof value.generations === 'object' &&
      value.generations !== null &&
      Object.values(value.generations).every((generation) => typeof generation === 'number')
    );
  return false;
};
