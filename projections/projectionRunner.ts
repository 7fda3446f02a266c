import type { AllSubscription, EventStore, RecordedEvent } from '../infra/eventstore/eventStore.ts';
import type { Logger } from '../infra/logger.ts';
import type { ReadStore, ReadStoreTransaction } from '../infra/readstore/readStore.ts';
import type { Projection } from './projection.ts';
import { ProjectionContext } from './projectionContext.ts';
import {
  physicalCollection,
  projectionStateCollection,
  type ProjectionStateDocument,
} from './projectionState.ts';
import type { ReadModels } from './readModels.ts';

/** Lets the API answer a write only once the read models show it (read your writes). */
export interface ProjectionProgress {
  /** Resolves true once every running projection has applied `position`, false on timeout. */
  waitFor(position: bigint, timeoutMs: number): Promise<boolean>;
}

export type ProjectionStatus = Readonly<{
  name: string;
  version: number;
  generation: number;
  servingGeneration: number;
  checkpoint: bigint;
  status: 'running' | 'failed';
  error?: string;
}>;

type RunningProjection = {
  projection: Projection;
  handles: ReadonlySet<string>;
  state: ProjectionStateDocument;
  checkpoint: bigint;
};

export type ProjectionRunnerOptions = Readonly<{
  eventStore: EventStore;
  readStore: ReadStore;
  readModels: ReadModels;
  projections: readonly Projection[];
  logger: Logger;
  /** Events per read-store transaction; default 500. */
  batchSize?: number;
  /** Attempts at a failing batch before the projection at fault is set aside; default 3. */
  attempts?: number;
}>;

class ProjectionFailure extends Error {
  constructor(
    readonly projectionName: string,
    readonly event: RecordedEvent | undefined,
    override readonly cause: unknown,
  ) {
    super(`Projection ${projectionName} failed${event ? ` on ${event.type} at ${event.position}` : ''}: ${String((cause as Error)?.message ?? cause)}`);
  }
}

/**
 * Follows `$all` from the lowest checkpoint of its projections and applies every batch to all of
 * them in one read-store transaction, together with each projection's new checkpoint. A crash
 * therefore loses nothing and duplicates nothing: the next start resumes at the checkpoints, and
 * events at or below a projection's checkpoint are skipped for it.
 *
 * A projection whose `apply` keeps throwing on the same batch is marked failed and set aside (the
 * others go on); `dms projections status` shows it and a restart retries it.
 */
export class ProjectionRunner implements ProjectionProgress {
  private readonly running = new Map<string, RunningProjection>();
  private readonly failed = new Map<string, ProjectionStateDocument>();
  private readonly waiters = new Set<{ position: bigint; resolve: (caughtUp: boolean) => void; timer: NodeJS.Timeout }>();
  private subscription: AllSubscription | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private readonly batchSize: number;
  private readonly attempts: number;

  constructor(private readonly options: ProjectionRunnerOptions) {
    this.batchSize = options.batchSize ?? 500;
    this.attempts = options.attempts ?? 3;
  }

  /** Loads checkpoints, starts new generations for changed versions, and starts following `$all`. */
  async start(): Promise<void> {
    const states = this.options.readStore.collection<ProjectionStateDocument>(projectionStateCollection);
    const head = await this.options.eventStore.headPosition();
    for (const projection of this.options.projections) {
      const stored = await states.get(projection.name);
      const state = this.initialState(projection, stored, head);
      await states.replaceOne({ _id: state._id }, state, { upsert: true });
      for (const collection of projection.collections) {
        // Creating the collections up front keeps DDL out of the batch transactions.
        await this.options.readStore.collection(physicalCollection(collection, state.generation)).count({ _id: '' });
      }
      this.options.readModels.setServingGeneration(projection.name, state.servingGeneration);
      this.running.set(projection.name, {
        projection,
        handles: new Set(projection.handles),
        state,
        checkpoint: BigInt(state.checkpoint),
      });
    }
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.subscription?.close();
    await this.loop;
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.waiters.clear();
  }

  /** The position every running projection has applied. */
  get position(): bigint {
    let lowest: bigint | undefined;
    for (const { checkpoint } of this.running.values()) if (lowest === undefined || checkpoint < lowest) lowest = checkpoint;
    return lowest ?? 0n;
  }

  waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    if (this.position >= position || this.running.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        position,
        resolve,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          resolve(false);
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  status(): ProjectionStatus[] {
    const running = [...this.running.values()].map(({ state, checkpoint }) => toStatus(state, checkpoint));
    const failed = [...this.failed.values()].map((state) => toStatus(state, BigInt(state.checkpoint)));
    return [...running, ...failed].sort((a, b) => a.name.localeCompare(b.name));
  }

  private initialState(projection: Projection, stored: ProjectionStateDocument | null, head: bigint): ProjectionStateDocument {
    const now = new Date().toISOString();
    if (!stored) {
      return { _id: projection.name, version: projection.version, generation: 1, servingGeneration: 1, checkpoint: '0', status: 'running', updatedAt: now };
    }
    if (stored.version === projection.version) {
      // A failed projection gets another chance at every start.
      const { error: _error, ...rest } = stored;
      return { ...rest, status: 'running', updatedAt: now };
    }
    // A new version: fill a new generation from the start; reads stay on the old one until it has caught up.
    this.options.logger.info(
      { projection: projection.name, from: stored.version, to: projection.version },
      'projection version changed, rebuilding beside the serving generation',
    );
    return {
      _id: projection.name,
      version: projection.version,
      generation: stored.generation + 1,
      servingGeneration: stored.servingGeneration ?? stored.generation,
      switchAt: head.toString(),
      checkpoint: '0',
      status: 'running',
      updatedAt: now,
    };
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      this.subscription = this.options.eventStore.subscribeToAll({ after: this.position, batchSize: this.batchSize });
      try {
        for await (const batch of this.subscription) {
          await this.applyBatch(batch);
          if (this.stopping) break;
        }
      } catch (error) {
        if (this.stopping) break;
        this.options.logger.error({ err: error }, 'projection subscription failed; resubscribing');
        await sleep(1000);
      } finally {
        await this.subscription.close();
      }
    }
  }

  private async applyBatch(batch: readonly RecordedEvent[]): Promise<void> {
    const last = batch[batch.length - 1];
    if (!last) return;
    for (let attempt = 1; ; attempt += 1) {
      const targets = [...this.running.values()].filter((running) => running.checkpoint < last.position);
      if (targets.length === 0) return;
      try {
        const written = await this.options.readStore.transaction((transaction) =>
          this.applyToProjections(transaction, targets, batch, last.position),
        );
        this.committed(written);
        return;
      } catch (error) {
        if (this.stopping) return;
        const culprit = error instanceof ProjectionFailure ? error.projectionName : undefined;
        this.options.logger.error({ err: error, attempt, projection: culprit }, 'projection batch failed');
        if (culprit && attempt >= this.attempts) {
          await this.setAside(culprit, error as ProjectionFailure);
          attempt = 0;
          continue;
        }
        await sleep(Math.min(100 * 2 ** attempt, 5000));
      }
    }
  }

  private async applyToProjections(
    transaction: ReadStoreTransaction,
    targets: RunningProjection[],
    batch: readonly RecordedEvent[],
    lastPosition: bigint,
  ): Promise<ProjectionStateDocument[]> {
    const states = transaction.collection<ProjectionStateDocument>(projectionStateCollection);
    const written: ProjectionStateDocument[] = [];
    for (const target of targets) {
      const generation = target.state.generation;
      const context = new ProjectionContext(transaction, (logical) => physicalCollection(logical, generation));
      for (const event of batch) {
        if (event.position <= target.checkpoint || !target.handles.has(event.type)) continue;
        context.beginEvent(event);
        try {
          await target.projection.apply(event, context);
        } catch (error) {
          throw new ProjectionFailure(target.projection.name, event, error);
        }
      }
      try {
        await context.flush();
      } catch (error) {
        throw new ProjectionFailure(target.projection.name, undefined, error);
      }
      const switchNow = target.state.switchAt !== undefined && lastPosition >= BigInt(target.state.switchAt);
      const { switchAt, ...kept } = target.state;
      const state: ProjectionStateDocument = {
        ...(switchNow ? kept : target.state),
        ...(switchNow ? { servingGeneration: generation } : {}),
        checkpoint: lastPosition.toString(),
        updatedAt: new Date().toISOString(),
      };
      await states.replaceOne({ _id: state._id }, state, { upsert: true });
      written.push(state);
    }
    return written;
  }

  private committed(states: ProjectionStateDocument[]): void {
    for (const state of states) {
      const running = this.running.get(state._id);
      if (!running) continue;
      const previousServing = running.state.servingGeneration;
      running.state = state;
      running.checkpoint = BigInt(state.checkpoint);
      if (state.servingGeneration !== previousServing) {
        this.options.readModels.setServingGeneration(state._id, state.servingGeneration);
        void this.dropGeneration(running.projection, previousServing);
      }
    }
    const position = this.position;
    for (const waiter of [...this.waiters]) {
      if (waiter.position <= position) {
        clearTimeout(waiter.timer);
        this.waiters.delete(waiter);
        waiter.resolve(true);
      }
    }
  }

  private async dropGeneration(projection: Projection, generation: number): Promise<void> {
    for (const collection of projection.collections) {
      await this.options.readStore.dropCollection(physicalCollection(collection, generation).name);
    }
    this.options.logger.info({ projection: projection.name, generation }, 'reads switched to the rebuilt generation');
  }

  private async setAside(name: string, failure: ProjectionFailure): Promise<void> {
    const running = this.running.get(name);
    if (!running) return;
    this.running.delete(name);
    const state: ProjectionStateDocument = {
      ...running.state,
      status: 'failed',
      error: failure.message.slice(0, 2000),
      updatedAt: new Date().toISOString(),
    };
    this.failed.set(name, state);
    await this.options.readStore
      .collection<ProjectionStateDocument>(projectionStateCollection)
      .replaceOne({ _id: name }, state, { upsert: true });
    this.options.logger.error({ projection: name, error: state.error }, 'projection set aside after repeated failures');
    // Writers waiting only on the failed projection may go on.
    this.committed([]);
  }
}

const toStatus = (state: ProjectionStateDocument, checkpoint: bigint): ProjectionStatus => ({
  name: state._id,
  version: state.version,
  generation: state.generation,
  servingGeneration: state.servingGeneration,
  checkpoint,
  status: state.status,
  ...(state.error ? { error: state.error } : {}),
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
