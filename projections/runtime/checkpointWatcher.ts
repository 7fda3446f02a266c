import type { PositionSignal } from '../../infra/positionSignal.ts';
import { GroupPositions } from './groupPositions.ts';
import type { ProjectionProgress } from './projectionProgress.ts';
import type { ProjectionStores } from './projectionStores.ts';
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
   * Each group's projector's "applied up to P" (published after each batch it commits), by group:
   * a wait ends as soon as they come. Default none: only the checkpoints are looked at.
   */
  applied?: (group: string) => PositionSignal;
  /** Time between two looks at the checkpoints while no signal is heard; default 10 ms. */
  pollMs?: number;
  /**
   * Time between two looks while the signal is heard and has brought announcements (the looks then
   * only make up for lost messages); default 250 ms.
   */
  fallbackPollMs?: number;
}>;

/**
 * Read-your-writes for a process whose projections run in other processes (`dms api` or
 * `dms worker` beside `dms projector`s). The projector of each group stores its checkpoints with
 * every batch, in the group's store, and announces the position it has applied on its group's
 * `applied` signal. A wait ends at the first of: the signals of the groups it needs reaching the
 * position, the stored checkpoints showing it, the timeout. The signal is
 * trusted because the projector sends it only after its batch is committed; the checkpoints are
 * still looked at, less often while the signal is heard, so a lost message costs time, never a
 * write that waits for ever or answers before the read models show it.
 */
export class CheckpointWatcher implements ProjectionProgress {
  /** The highest position each group's projector has announced. */
  private readonly announced: GroupPositions;
  private readonly signals: ReadonlyMap<string, PositionSignal>;
  /**
   * Whether any announcement came yet: until one does, nobody may be sending them (`dms serve`
   * beside a `dms worker` announces nothing), so the checkpoints are looked at as often as without.
   */
  private heardAny = false;
  private readonly stopHearing: (() => void)[] = [];
  private readonly outcomes: Record<WaitOutcome, number> = { signal: 0, checkpoints: 0, timeout: 0 };

  constructor(
    private readonly stores: ProjectionStores,
    private readonly options: CheckpointWatcherOptions = {},
  ) {
    const groups = stores.groups.map((group) => group.name);
    this.announced = new GroupPositions(groups);
    const applied = options.applied;
    this.signals = new Map(applied ? groups.map((group) => [group, applied(group)] as const) : []);
    for (const [group, signal] of this.signals)
      this.stopHearing.push(
        signal.subscribe((position) => {
          this.heardAny = true;
          this.announced.advance(group, position);
        }),
      );
  }

  /**
   * Other processes apply the events. The announced positions are not offered here: a lost
   * message would leave a cache keyed on them (api/auth/sessionAccess.ts) believing nothing changed.
   */
  appliedVersion(): undefined {
    return undefined;
  }

  async waitFor(position: bigint, timeoutMs: number, groups?: readonly string[]): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const needed = groups ?? this.stores.groups.map((group) => group.name);
    // Registered before anything is read, so an announcement arriving meanwhile is not missed.
    const stop = new AbortController();
    let heard: Promise<boolean> | undefined =
      this.signals.size > 0 ? this.announced.wait(position, timeoutMs, needed, stop.signal) : undefined;
    try {
      for (;;) {
        // The first look answers at once for a position applied before this process heard of it
        // (a worker's job on an older event, say); a write's own position is rarely there yet.
        if (await this.checkpointsReach(position, needed)) return this.ended('checkpoints', true);
        const remaining = deadline - Date.now();
        if (remaining <= 0) return this.ended('timeout', false);
        const listening = needed.every((group) => this.signals.get(group)?.isListening() === true);
        const pause = Math.min(
          remaining,
          this.heardAny && listening ? (this.options.fallbackPollMs ?? 250) : (this.options.pollMs ?? 10),
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
    for (const stop of this.stopHearing) stop();
    this.announced.close();
  }

  private ended(outcome: WaitOutcome, reached: boolean): boolean {
    this.outcomes[outcome] += 1;
    return reached;
  }

  /**
   * Every projection of the groups has applied `position`, as stored in its group's store. One
   * the projector has set aside (failed) is not waited for; one it has not started yet (no
   * state) is: answering before it exists would be answering before the read models show the
   * write.
   */
  private async checkpointsReach(position: bigint, groups: readonly string[]): Promise<boolean> {
    for (const name of groups) {
      const group = this.stores.group(name);
      const store = this.stores.storeOfGroup(name);
      const projectionNames = group.projections.map((projection) => projection.name);
      const states = store.collection<ProjectionStateDocument>(projectionStateCollection);
      const checkpoints = store.collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection);
      const known = await states.find({ _id: { $in: projectionNames } }).toArray();
      if (known.length < projectionNames.length) return false;
      const ids = known.filter((state) => state.status === 'running').map((state) => servingCheckpointId(state._id));
      const positions = await checkpoints.find({ _id: { $in: ids } }).toArray();
      if (positions.length !== ids.length || positions.some((document) => BigInt(document.checkpoint) < position))
        return false;
    }
    return true;
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
