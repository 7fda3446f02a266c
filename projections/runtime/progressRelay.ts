import { GroupPositions } from './groupPositions.ts';
import type { ProjectionProgress } from './projectionProgress.ts';
import type { ReadModels } from './readModels.ts';

/**
 * What the projections tell the processes that read their models: where each group stands (the
 * position every serving projection of the group has applied) and the generation each projection
 * serves, then every step after. The same reports a projection thread sends its process
 * (projectorThread.ts).
 */
export type ProgressReport =
  | { type: 'ready'; positions: Record<string, bigint>; generations: Record<string, number> }
  | { type: 'progress'; group: string; position: bigint }
  | { type: 'generation'; name: string; generation: number };

/**
 * The projections' side of the relay (`dms serve` with several API workers): the process running
 * them keeps where they stand, for a worker that starts later (`snapshot`), and hands each report
 * to the listeners, which pass it on to every worker in order.
 */
export class ProgressFeed {
  private readonly positions = new Map<string, bigint>();
  private readonly generations = new Map<string, number>();
  private readonly listeners = new Set<(report: ProgressReport) => void>();

  report(report: ProgressReport): void {
    if (report.type === 'ready') {
      for (const [name, generation] of Object.entries(report.generations)) this.generations.set(name, generation);
      for (const [group, position] of Object.entries(report.positions)) this.move(group, position);
    } else if (report.type === 'progress') {
      if (!this.move(report.group, report.position)) return;
    } else {
      this.generations.set(report.name, report.generation);
    }
    for (const listener of [...this.listeners]) listener(report);
  }

  snapshot(): ProgressReport {
    return {
      type: 'ready',
      positions: Object.fromEntries(this.positions),
      generations: Object.fromEntries(this.generations),
    };
  }

  subscribe(listener: (report: ProgressReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private move(group: string, position: bigint): boolean {
    if (position <= (this.positions.get(group) ?? -1n)) return false;
    this.positions.set(group, position);
    return true;
  }
}

/**
 * The workers' side: read-your-writes in an API worker whose projections run in another process
 * of the same `dms serve`. The reports come over the cluster's IPC channel, which loses and
 * reorders nothing while it lives (and the worker exits when it breaks), so unlike a Redis signal
 * (checkpointWatcher.ts) they are trusted as the projection threads' own: a wait ends at the
 * report, without looking at the stores, and `appliedVersion` may key caches. The groups are
 * those of the first report (the primary's snapshot, sent before the worker starts).
 */
export class RelayedProgress implements ProjectionProgress {
  private positions: GroupPositions | undefined;
  private readonly generations = new Map<string, number>();
  private readModels: ReadModels | undefined;
  private closed = false;

  receive(report: ProgressReport): void {
    if (report.type === 'generation') {
      this.serve(report.name, report.generation);
      return;
    }
    if (report.type === 'ready') {
      for (const [name, generation] of Object.entries(report.generations)) this.serve(name, generation);
      this.positions ??= new GroupPositions(Object.keys(report.positions));
      for (const [group, position] of Object.entries(report.positions)) this.positions.advance(group, position);
      return;
    }
    this.positions?.advance(report.group, report.position);
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

  waitFor(position: bigint, timeoutMs: number, groups?: readonly string[]): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    // Before the primary's snapshot nothing is known to be applied.
    if (!this.positions) return Promise.resolve(position <= 0n);
    return this.positions.wait(position, timeoutMs, groups);
  }

  appliedVersion(): bigint {
    return this.positions?.version() ?? 0n;
  }

  close(): void {
    this.closed = true;
    this.positions?.close();
  }
}

const isPositionRecord = (value: unknown): value is Record<string, bigint> =>
  typeof value === 'object' && value !== null && Object.values(value).every((position) => typeof position === 'bigint');

/** Whether a value that crossed a process boundary is a report (structured-cloned: bigints stay bigints). */
export const isProgressReport = (value: unknown): value is ProgressReport => {
  if (typeof value !== 'object' || value === null || !('type' in value)) return false;
  if (value.type === 'progress')
    return (
      'group' in value && typeof value.group === 'string' && 'position' in value && typeof value.position === 'bigint'
    );
  if (value.type === 'generation')
    return (
      'name' in value && typeof value.name === 'string' && 'generation' in value && typeof value.generation === 'number'
    );
  if (value.type === 'ready')
    return (
      'positions' in value &&
      isPositionRecord(value.positions) &&
      'generations' in value &&
      typeof value.generations === 'object' &&
      value.generations !== null &&
      Object.values(value.generations).every((generation) => typeof generation === 'number')
    );
  return false;
};
