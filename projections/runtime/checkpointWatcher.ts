import type { PositionSignal } from '../../infra/positionSignal.ts';
import type { ReadStore } from '../../infra/readstore/readStore.ts';
import { PositionWaiters } from './positionWaiters.ts';
import type { ProjectionProgress } from './projectionRunner.ts';
import {
  projectionCheckpointsCollection,
  projectionStateCollection,
  servingCheckpointId,
  type ProjectionCheckpointDocument,
  type ProjectionStateDocument,
} from './projectionState.ts';

/** What ended a wait: the projector's signal, a look at the stored checkpoints, or the timeout. */
export type WaitOutcome = 'signal' | 'checkpoints' | 'timeout';

export type CheckpointWatcherOptions = Readonly<{
  /**
   * The projector's "applied up to P" (published after each batch it commits): a wait ends as
   * soon as it comes. Default none: only the checkpoints are looked at.
   */
  applied?: PositionSignal;
  /** Time between two looks at the checkpoints while no signal is heard; default 10 ms. */
  pollMs?: number;
  /**
   * Time between two looks while the signal is heard and has brought announcements (the looks then
   * only make up for lost messages); default 250 ms.
   */
  fallbackPollMs?: number;
}>;

/**
 * Read-your-writes for a process whose projections run in another process (`dms api` or
 * `dms worker` beside `dms projector`). The projector stores its checkpoints with every batch and
 * announces the position it has applied on the `applied` signal. A wait ends at the first of: the
 * signal reaching the position, the stored checkpoints showing it, the timeout. The signal is
 * trusted because the projector sends it only after its batch is committed; the checkpoints are
 * still looked at, less often while the signal is heard, so a lost message costs time, never a
 * write that waits for ever or answers before the read models show it.
 */
export class CheckpointWatcher implements ProjectionProgress {
  private readonly waiters = new PositionWaiters();
  /** The highest position the projector has announced. */
  private announced = 0n;
  /**
   * Whether any announcement came yet: until one does, nobody may be sending them (`dms serve`
   * beside a `dms worker` announces nothing), so the checkpoints are looked at as often as without.
   */
  private heardAny = false;
  private readonly stopHearing: () => void;
  private readonly outcomes: Record<WaitOutcome, number> = { signal: 0, checkpoints: 0, timeout: 0 };

  constructor(
    private readonly readStore: ReadStore,
    private readonly projectionNames: readonly string[],
    private readonly options: CheckpointWatcherOptions = {},
  ) {
    this.stopHearing =
      options.applied?.subscribe((position) => {
        this.heardAny = true;
        if (position > this.announced) this.announced = position;
        this.waiters.advance(position);
      }) ?? (() => undefined);
  }

  /**
   * Another process applies the events. The announced position is not offered here: a lost
   * message would leave a cache keyed on it (api/auth/sessionAccess.ts) believing nothing changed.
   */
  appliedPosition(): undefined {
    return undefined;
  }

  async waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    // Registered before anything is read, so an announcement arriving meanwhile is not missed.
    const stop = new AbortController();
    let heard: Promise<boolean> | undefined = this.options.applied
      ? this.waiters.wait(position, this.announced, timeoutMs, stop.signal)
      : undefined;
    try {
      for (;;) {
        // The first look answers at once for a position applied before this process heard of it
        // (a worker's job on an older event, say); a write's own position is rarely there yet.
        if (await this.checkpointsReach(position)) return this.ended('checkpoints', true);
        const remaining = deadline - Date.now();
        if (remaining <= 0) return this.ended('timeout', false);
        const pause = Math.min(
          remaining,
          this.heardAny && this.options.applied?.isListening()
            ? (this.options.fallbackPollMs ?? 250)
            : (this.options.pollMs ?? 10),
        );
        const outcome = await raceWithPause(heard, pause);
        if (outcome === true) return this.ended('signal', true);
        // Resolved false: timed out or aborted; the loop's own deadline decides from here.
        if (outcome === false) heard = undefined;
      }
    } finally {
      stop.abort();
    }
  }

  /** How many waits each outcome ended, for the metrics. */
  waitOutcomes(): Readonly<Record<WaitOutcome, number>> {
    return { ...this.outcomes };
  }

  close(): void {
    this.stopHearing();
    this.waiters.close();
  }

  private ended(outcome: WaitOutcome, reached: boolean): boolean {
    this.outcomes[outcome] += 1;
    return reached;
  }

  /**
   * Every projection this process reads has applied `position`, as stored. One the projector has
   * set aside (failed) is not waited for; one it has not started yet (no state) is: answering
   * before it exists would be answering before the read models show the write.
   */
  private async checkpointsReach(position: bigint): Promise<boolean> {
    const states = this.readStore.collection<ProjectionStateDocument>(projectionStateCollection);
    const checkpoints = this.readStore.collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection);
    const known = await states.find({ _id: { $in: [...this.projectionNames] } }).toArray();
    if (known.length < this.projectionNames.length) return false;
    const ids = known.filter((state) => state.status === 'running').map((state) => servingCheckpointId(state._id));
    const positions = await checkpoints.find({ _id: { $in: ids } }).toArray();
    return positions.length === ids.length && positions.every((document) => BigInt(document.checkpoint) >= position);
  }
}

/** `heard`'s outcome if it comes within `ms`, else 'pause'. */
const raceWithPause = async (heard: Promise<boolean> | undefined, ms: number): Promise<boolean | 'pause'> => {
  let timer: NodeJS.Timeout | undefined;
  const pause = new Promise<'pause'>((resolve) => (timer = setTimeout(() => resolve('pause'), ms)));
  try {
    return await (heard ? Promise.race([heard, pause]) : pause);
  } finally {
    clearTimeout(timer);
  }
};
