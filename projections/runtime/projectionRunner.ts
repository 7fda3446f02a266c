import { hostname } from 'node:os';
import type { Upcasters } from '../../domain/shared/upcasting.ts';
import { eventUpcasters } from '../../domain/areas.ts';
import type { EventStore } from '../../infra/eventstore/eventStore.ts';
import type { Logger } from '../../infra/logger.ts';
import type { ReadStore } from '../../infra/readstore/readStore.ts';
import { handledTypes, type AnyProjection } from '../projection.ts';
import { ProjectionLane, type LaneEntry, type ProjectionFailure } from './projectionLane.ts';
import {
  physicalCollection,
  projectionCheckpointsCollection,
  projectionRebuildsCollection,
  projectionStateCollection,
  projectorHeartbeatId,
  projectorHeartbeatsCollection,
  rebuildCheckpointId,
  servingCheckpointId,
  type ProjectionCheckpointDocument,
  type ProjectionRebuildDocument,
  type ProjectionStateDocument,
  type ProjectorHeartbeatDocument,
} from './projectionState.ts';
import { PositionWaiters } from './positionWaiters.ts';
import type { ReadModels } from './readModels.ts';

export type { ProjectionProgress } from './projectionProgress.ts';

export type ProjectionStatus = Readonly<{
  name: string;
  version: number;
  servingGeneration: number;
  checkpoint: bigint;
  status: 'running' | 'failed' | 'rebuilding';
  rebuild?: { generation: number; version: number; checkpoint: bigint };
  error?: string;
}>;

export type ProjectionRunnerOptions = Readonly<{
  eventStore: EventStore;
  readStore: ReadStore;
  readModels: ReadModels;
  projections: readonly AnyProjection[];
  /** The projection group these projections are (projections/index.ts), in its heartbeat; default `all`. */
  group?: string;
  logger: Logger;
  /**
   * Events per read-store transaction of the live lane; default 1000. A lane applies what is
   * there, up to this: a quiet service's batches stay small, and a registration of a thousand
   * files (two thousand events) takes two commits instead of four, each writing the pages the
   * batch shares (a dataset, an RSE's bucket, index pages) once.
   */
  batchSize?: number;
  /**
   * Events per transaction of a rebuild lane; default 2000. Nobody waits on a rebuild's batches,
   * so they can be larger (fewer commits, each index page written once for more rows), but the
   * live lane waits for the write lock while one commits.
   */
  rebuildBatchSize?: number;
  /** Attempts at a failing batch before the projection at fault is set aside; default 3. */
  attempts?: number;
  /** Upcasters applied to stored events before projections see them; default all of the domain's. */
  upcasters?: Upcasters;
  /** How long a replaced generation stays readable for other API processes; default 30 s. */
  dropGraceMs?: number;
  /** How often rebuild requests are looked for and the heartbeat is written; default 1 s. */
  housekeepingMs?: number;
  /** Told the position every serving projection here has applied, after each batch of the live lane. */
  onProgress?: (position: bigint) => void;
  /** Told when reads of a projection switch to another generation (a finished rebuild). */
  onServingGeneration?: (name: string, generation: number) => void;
}>;

/**
 * Runs the projections of one group (in its thread or process). A live lane follows `$all` for the serving generations;
 * each rebuild (a new projection version, or `dms projections rebuild`) gets its own lane that
 * fills a new generation from the start while reads stay on the old one. Once a rebuild has caught
 * up with the live lane it moves into it and reads switch over in one step; the old generation is
 * dropped after a grace period.
 */
export class ProjectionRunner {
  private live: ProjectionLane | undefined;
  private readonly rebuilds = new Map<string, ProjectionLane>();
  private readonly failed = new Map<string, string>();
  private readonly byName: ReadonlyMap<string, AnyProjection>;
  private readonly waiters = new PositionWaiters();
  private housekeeping: NodeJS.Timeout | undefined;
  private readonly handovers = new Set<Promise<void>>();
  private readonly replaced: { projection: AnyProjection; generation: number }[] = [];
  private readonly heartbeatId: string;
  private stopped = false;

  constructor(private readonly options: ProjectionRunnerOptions) {
    this.byName = new Map(options.projections.map((projection) => [projection.name, projection]));
    this.heartbeatId = projectorHeartbeatId(options.group ?? 'all');
  }

  async start(): Promise<void> {
    const states = this.options.readStore.collection<ProjectionStateDocument>(projectionStateCollection);
    const rebuilds = this.options.readStore.collection<ProjectionRebuildDocument>(projectionRebuildsCollection);
    const head = await this.options.eventStore.headPosition();
    const liveEntries: LaneEntry[] = [];
    const rebuilding: { projection: AnyProjection; rebuild: ProjectionRebuildDocument }[] = [];
    for (const projection of this.options.projections) {
      let state = await states.get(projection.name);
      let rebuild = await rebuilds.get(projection.name);
      const now = new Date().toISOString();
      if (!state) {
        state = {
          _id: projection.name,
          version: projection.version,
          servingGeneration: 1,
          status: 'running',
          updatedAt: now,
        };
      }
      const { error: _error, ...withoutError } = state;
      await states.replaceOne(
        { _id: projection.name },
        { ...withoutError, status: 'running', updatedAt: now },
        { upsert: true },
      );
      this.options.readModels.setServingGeneration(projection.name, state.servingGeneration);
      if (state.version === projection.version) {
        liveEntries.push(
          entry(
            projection,
            state.servingGeneration,
            await this.checkpointOf(servingCheckpointId(projection.name)),
            'serving',
          ),
        );
      } else if (!rebuild || rebuild.version !== projection.version) {
        // The serving generation was built by other code: it stays readable but cannot be kept up to date.
        this.options.logger.info(
          { projection: projection.name, from: state.version, to: projection.version },
          'projection version changed, rebuilding',
        );
        rebuild = newRebuild(projection, Math.max(state.servingGeneration, rebuild?.generation ?? 0) + 1, now);
        await requestRebuild(this.options.readStore, rebuild);
      }
      if (rebuild && rebuild.version === projection.version) rebuilding.push({ projection, rebuild });
    }
    for (const item of liveEntries) await this.ensureCollections(item.projection, item.generation);
    const start =
      liveEntries.length > 0
        ? liveEntries.reduce((low, item) => (item.checkpoint < low ? item.checkpoint : low), head)
        : head;
    this.live = this.newLane('live', start);
    for (const item of liveEntries) this.live.entries.set(item.projection.name, item);
    this.live.start();
    // After the live lane: a rebuild that catches up at once hands over to it.
    await this.startRebuildLanes(rebuilding);
    await this.dropLeftGenerations();
    await this.writeHeartbeat();
    this.housekeeping = setInterval(() => void this.houseKeep(), this.options.housekeepingMs ?? 1000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.housekeeping);
    await Promise.all([this.live?.stop(), ...[...new Set(this.rebuilds.values())].map((lane) => lane.stop())]);
    await this.options.readStore.collection(projectorHeartbeatsCollection).deleteOne({ _id: this.heartbeatId });
    this.waiters.close();
  }

  /** The position every serving projection here has applied. */
  get position(): bigint {
    let lowest: bigint | undefined;
    for (const { checkpoint } of this.live?.entries.values() ?? [])
      if (lowest === undefined || checkpoint < lowest) lowest = checkpoint;
    return lowest ?? this.live?.cursor ?? 0n;
  }

  /** Resolves true once every serving projection here has applied `position`, false on timeout. */
  waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    return this.waiters.wait(position, this.position, timeoutMs);
  }

  /** Resolves once no rebuild is left running and reads have switched (tests, the rebuild command). */
  async rebuildsFinished(pollMs = 20): Promise<void> {
    while (this.rebuilds.size > 0 || this.handovers.size > 0)
      await new Promise((resolve) => setTimeout(resolve, pollMs));
  }

  /** Drops every replaced generation now instead of after the grace period. */
  async dropReplacedGenerations(): Promise<void> {
    for (const { projection, generation } of this.replaced.splice(0)) await this.dropGeneration(projection, generation);
  }

  status(): ProjectionStatus[] {
    return this.options.projections.map((projection) => {
      const serving = this.live?.entries.get(projection.name);
      const rebuilding = this.rebuilds.get(projection.name)?.entries.get(projection.name);
      const failure = this.failed.get(projection.name);
      return {
        name: projection.name,
        version: serving?.projection.version ?? projection.version,
        servingGeneration: this.options.readModels.servingGeneration(projection.name),
        checkpoint: serving?.checkpoint ?? 0n,
        status: failure ? 'failed' : serving ? 'running' : 'rebuilding',
        ...(rebuilding
          ? {
              rebuild: {
                generation: rebuilding.generation,
                version: rebuilding.projection.version,
                checkpoint: rebuilding.checkpoint,
              },
            }
          : {}),
        ...(failure ? { error: failure } : {}),
      };
    });
  }

  private newLane(name: string, startAfter: bigint, batchSize = this.options.batchSize ?? 1000): ProjectionLane {
    return new ProjectionLane(
      name,
      {
        eventStore: this.options.eventStore,
        readStore: this.options.readStore,
        logger: this.options.logger,
        batchSize,
        attempts: this.options.attempts ?? 3,
        upcasters: this.options.upcasters ?? eventUpcasters,
        committed: (lane) => void this.afterCommit(lane),
        setAside: (lane, failure) => this.setAside(lane, failure),
      },
      startAfter,
    );
  }

  private async checkpointOf(id: string): Promise<bigint> {
    const document = await this.options.readStore
      .collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection)
      .get(id);
    return BigInt(document?.checkpoint ?? '0');
  }

  /**
   * Starts lanes for rebuilds: those starting from the same checkpoint (every rebuild requested
   * together, from the start of the log) share one lane, so the log is read once for all of them
   * and each batch is one transaction for all of them.
   */
  private async startRebuildLanes(
    requested: readonly { projection: AnyProjection; rebuild: ProjectionRebuildDocument }[],
  ): Promise<void> {
    const lanes = new Map<bigint, LaneEntry[]>();
    for (const { projection, rebuild } of requested) {
      await this.ensureCollections(projection, rebuild.generation);
      const checkpoint = await this.checkpointOf(rebuildCheckpointId(projection.name));
      const entries = lanes.get(checkpoint) ?? [];
      entries.push(entry(projection, rebuild.generation, checkpoint, 'rebuild'));
      lanes.set(checkpoint, entries);
    }
    for (const [checkpoint, entries] of lanes) {
      const names = entries.map((item) => item.projection.name);
      const lane = this.newLane(`rebuild:${names.join(',')}`, checkpoint, this.options.rebuildBatchSize ?? 2000);
      for (const item of entries) {
        lane.entries.set(item.projection.name, item);
        this.rebuilds.set(item.projection.name, lane);
      }
      lane.start();
    }
  }

  private async afterCommit(lane: ProjectionLane): Promise<void> {
    for (const name of [...this.rebuilds.keys()]) await this.tryHandOver(name);
    if (lane === this.live) {
      this.resolveWaiters();
      this.options.onProgress?.(this.position);
    }
  }

  private tryHandOver(name: string): Promise<void> {
    const handover = this.handOver(name);
    this.handovers.add(handover);
    return handover.finally(() => this.handovers.delete(handover));
  }

  /**
   * Moves a caught-up rebuild into the live lane. Both lanes must be between batches and the
   * rebuild at or past the live lane's position; the live lane is paused while reads switch, so
   * no event falls between the two.
   */
  private async handOver(name: string): Promise<void> {
    const lane = this.rebuilds.get(name);
    const rebuilt = lane?.entries.get(name);
    const live = this.live;
    if (!lane || !rebuilt || !live || live.applying || lane.applying || rebuilt.checkpoint < live.cursor) return;
    live.pause();
    lane.entries.delete(name);
    this.rebuilds.delete(name);
    const previous = this.options.readModels.servingGeneration(name);
    try {
      await this.options.readStore.transaction(async (transaction) => {
        const updatedAt = new Date().toISOString();
        const state: ProjectionStateDocument = {
          _id: name,
          version: rebuilt.projection.version,
          servingGeneration: rebuilt.generation,
          status: 'running',
          updatedAt,
        };
        await transaction
          .collection<ProjectionStateDocument>(projectionStateCollection)
          .replaceOne({ _id: name }, state, { upsert: true });
        const checkpoints = transaction.collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection);
        const servingId = servingCheckpointId(name);
        await checkpoints.replaceOne(
          { _id: servingId },
          { _id: servingId, checkpoint: rebuilt.checkpoint.toString(), updatedAt },
          { upsert: true },
        );
        await checkpoints.deleteOne({ _id: rebuildCheckpointId(name) });
        await transaction.collection(projectionRebuildsCollection).deleteOne({ _id: name });
      });
      live.entries.set(name, { ...rebuilt, target: 'serving' });
      this.failed.delete(name);
      this.options.readModels.setServingGeneration(name, rebuilt.generation);
      this.options.onServingGeneration?.(name, rebuilt.generation);
    } finally {
      live.resume();
    }
    // A lane shared by several rebuilds goes on for the others.
    if (lane.entries.size === 0) void lane.stop();
    this.options.logger.info(
      { projection: name, generation: rebuilt.generation },
      'reads switched to the rebuilt generation',
    );
    if (previous !== rebuilt.generation) this.dropAfterGrace(rebuilt.projection, previous);
  }

  private resolveWaiters(): void {
    this.waiters.advance(this.position);
  }

  private async setAside(lane: ProjectionLane, failure: ProjectionFailure): Promise<void> {
    const name = failure.projectionName;
    const message = failure.message.slice(0, 2000);
    lane.entries.delete(name);
    this.failed.set(name, message);
    const collection = lane === this.live ? projectionStateCollection : projectionRebuildsCollection;
    const update = lane === this.live ? { status: 'failed', error: message } : { error: message };
    await this.options.readStore.collection(collection).updateOne({ _id: name }, { $set: update });
    if (lane !== this.live) {
      this.rebuilds.delete(name);
      // Called from the lane's own loop: stopping it must not wait for that loop.
      if (lane.entries.size === 0) void lane.stop();
    }
    this.options.logger.error({ projection: name, error: message }, 'projection set aside after repeated failures');
    // Writers waiting only on the failed projection may go on, here and wherever progress is reported.
    this.resolveWaiters();
    if (lane === this.live) this.options.onProgress?.(this.position);
  }

  /** Starts rebuilds that `dms projections rebuild` requested, and says this projector is alive. */
  private async houseKeep(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.writeHeartbeat();
      const requested: { projection: AnyProjection; rebuild: ProjectionRebuildDocument }[] = [];
      for await (const rebuild of this.options.readStore
        .collection<ProjectionRebuildDocument>(projectionRebuildsCollection)
        .find({})) {
        const projection = this.byName.get(rebuild._id);
        if (!projection || this.rebuilds.has(rebuild._id) || rebuild.error || rebuild.version !== projection.version)
          continue;
        this.options.logger.info({ projection: projection.name, generation: rebuild.generation }, 'rebuild requested');
        requested.push({ projection, rebuild });
      }
      await this.startRebuildLanes(requested);
      // A rebuild of an empty or idle log has no batch to trigger its hand-over.
      for (const name of [...this.rebuilds.keys()]) await this.tryHandOver(name);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'projector housekeeping failed');
    }
  }

  private async writeHeartbeat(): Promise<void> {
    const heartbeat: ProjectorHeartbeatDocument = {
      _id: this.heartbeatId,
      host: hostname(),
      pid: process.pid,
      group: this.options.group ?? 'all',
      at: new Date().toISOString(),
    };
    await this.options.readStore
      .collection(projectorHeartbeatsCollection)
      .replaceOne({ _id: heartbeat._id }, heartbeat, { upsert: true });
  }

  private async ensureCollections(projection: AnyProjection, generation: number): Promise<void> {
    // Creating the collections up front keeps DDL out of the batch transactions.
    for (const collection of projection.collections) {
      await this.options.readStore.collection(physicalCollection(collection, generation)).count({ _id: '' });
    }
  }

  /**
   * A replaced generation is dropped a grace period after the switch; a process that stopped
   * within it (a restart right after a rebuild, a crash) left it behind, and nothing else would
   * ever drop it. Generations older than the serving one are found at start and dropped after the
   * same grace, for API processes that may not have heard of the switch yet. Newer ones are left:
   * they may be a rebuild another process has just requested.
   */
  private async dropLeftGenerations(): Promise<void> {
    const existing = new Set(await this.options.readStore.listCollections());
    for (const projection of this.options.projections) {
      const serving = this.options.readModels.servingGeneration(projection.name);
      for (let generation = 1; generation < serving; generation += 1)
        if (projection.collections.some((collection) => existing.has(physicalCollection(collection, generation).name)))
          this.dropAfterGrace(projection, generation);
    }
  }

  private dropAfterGrace(projection: AnyProjection, generation: number): void {
    const replaced = { projection, generation };
    this.replaced.push(replaced);
    setTimeout(() => {
      const index = this.replaced.indexOf(replaced);
      if (index < 0) return;
      this.replaced.splice(index, 1);
      void this.dropGeneration(replaced.projection, replaced.generation);
    }, this.options.dropGraceMs ?? 30_000).unref();
  }

  private async dropGeneration(projection: AnyProjection, generation: number): Promise<void> {
    if (this.stopped || this.options.readModels.servingGeneration(projection.name) === generation) return;
    for (const collection of projection.collections) {
      await this.options.readStore.dropCollection(physicalCollection(collection, generation).name);
    }
    this.options.logger.info({ projection: projection.name, generation }, 'dropped the replaced generation');
  }
}

const entry = (
  projection: AnyProjection,
  generation: number,
  checkpoint: bigint,
  target: LaneEntry['target'],
): LaneEntry => ({
  projection,
  handles: handledTypes(projection),
  generation,
  checkpoint,
  target,
});

/** A rebuild from the start of `$all` into a new generation. */
export const newRebuild = (projection: AnyProjection, generation: number, now: string): ProjectionRebuildDocument => ({
  _id: projection.name,
  version: projection.version,
  generation,
  requestedAt: now,
  updatedAt: now,
});

/** Records a rebuild request, starting from the beginning of the log (any older rebuild progress is dropped). */
export const requestRebuild = async (readStore: ReadStore, rebuild: ProjectionRebuildDocument): Promise<void> => {
  await readStore.transaction(async (transaction) => {
    await transaction.collection(projectionCheckpointsCollection).deleteOne({ _id: rebuildCheckpointId(rebuild._id) });
    await transaction
      .collection<ProjectionRebuildDocument>(projectionRebuildsCollection)
      .replaceOne({ _id: rebuild._id }, rebuild, { upsert: true });
  });
};
