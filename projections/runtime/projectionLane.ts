import type { Event } from '../../domain/shared/event.ts';
import { inSpan, isTraceId, tracingOn, type SpanSpec, type TraceContext } from '../../infra/tracing.ts';
import type { Upcasters } from '../../domain/shared/upcasting.ts';
import type { AllSubscription, EventStore, RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import type { Logger } from '../../infra/logger.ts';
import type { BulkOperation, ReadStore, ReadStoreTransaction } from '../../infra/readstore/readStore.ts';
import { asHandled, type AnyProjection } from '../projection.ts';
import { ProjectionContext } from './projectionContext.ts';
import { WholeSteps } from './wholeSteps.ts';
import {
  physicalCollection,
  projectionCheckpointsCollection,
  rebuildCheckpointId,
  servingCheckpointId,
  type ProjectionCheckpointDocument,
} from './projectionState.ts';
import { errorMessage } from '../../domain/shared/narrowing.ts';

/** A projection as a lane runs it: which generation it writes and up to where it has applied `$all`. */
export type LaneEntry = {
  projection: AnyProjection;
  handles: ReadonlySet<string>;
  generation: number;
  checkpoint: bigint;
  /** Which checkpoint document the lane writes: the serving one or the rebuild's. */
  target: 'serving' | 'rebuild';
};

export class ProjectionFailure extends Error {
  constructor(
    readonly projectionName: string,
    readonly event: RecordedEvent | undefined,
    override readonly cause: unknown,
  ) {
    super(
      `Projection ${projectionName} failed${event ? ` on ${event.type} at ${event.position}` : ''}: ` +
        errorMessage(cause),
    );
  }
}

export type LaneDependencies = Readonly<{
  eventStore: EventStore;
  readStore: ReadStore;
  logger: Logger;
  batchSize: number;
  attempts: number;
  /** Bring stored events to the current shape of their type before projections see them. */
  upcasters: Upcasters;
  /** Called after every committed batch (and after a batch nobody needed). */
  committed(lane: ProjectionLane): void;
  /** A projection kept failing on the same batch: take it out of service. */
  setAside(lane: ProjectionLane, failure: ProjectionFailure): Promise<void>;
}>;

/**
 * One subscription to `$all` and the projections it feeds. Each batch is applied to every entry
 * that has not seen it yet, in one read-store transaction together with their checkpoints, so a
 * crash neither loses nor repeats work. The runner keeps a live lane for the serving projections
 * and one lane per rebuild, so a rebuild never holds up the projections readers are waiting for.
 */
export class ProjectionLane {
  readonly entries = new Map<string, LaneEntry>();
  /** The last position this lane has read and applied. */
  cursor: bigint;
  applying = false;
  private subscription: AllSubscription | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private gate: Promise<void> | undefined;
  private openGate: (() => void) | undefined;
  private steps = new WholeSteps();
  private holdingSince: number | undefined;

  constructor(
    readonly name: string,
    private readonly dependencies: LaneDependencies,
    startAfter: bigint,
  ) {
    this.cursor = startAfter;
  }

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.resume();
    await this.subscription?.close();
    await this.loop;
  }

  /** Holds the next batch back until `resume`: used while a projection changes lanes. */
  pause(): void {
    this.gate ??= new Promise((resolve) => (this.openGate = resolve));
  }

  resume(): void {
    this.openGate?.();
    this.gate = undefined;
    this.openGate = undefined;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      this.subscription = this.dependencies.eventStore.subscribeToAll({
        after: this.cursor,
        batchSize: this.dependencies.batchSize,
      });
      // A new subscription reads again from the cursor, which is before anything held.
      this.steps = new WholeSteps();
      try {
        for await (const batch of this.subscription) {
          await this.gate;
          if (this.stopping) break;
          await this.applyBatch(this.steps.release(batch));
          this.noteHold();
        }
      } catch (error) {
        if (this.stopping) break;
        this.dependencies.logger.error(
          { err: error, lane: this.name },
          'projection subscription failed; resubscribing',
        );
        await sleep(1000);
      } finally {
        await this.subscription.close();
      }
    }
  }

  /** The position of the first event held back until the rest of its step arrives; undefined when none is. */
  get heldFrom(): bigint | undefined {
    return this.steps.heldFrom;
  }

  /**
   * A step held for long means its writer died mid-way: the event store's sweep completes it
   * (SteppedEventStore, within about 35 s). Said once per hold, so an operator knows why the lane waits.
   */
  private noteHold(): void {
    if (this.steps.heldCount === 0) {
      this.holdingSince = undefined;
      return;
    }
    this.holdingSince ??= Date.now();
    if (Date.now() - this.holdingSince > HOLD_WARNING_MS) {
      this.dependencies.logger.warn(
        { lane: this.name, from: this.steps.heldFrom?.toString(), held: this.steps.heldCount },
        'waiting for the rest of a multi-stream step',
      );
      this.holdingSince = Number.POSITIVE_INFINITY;
    }
  }

  private async applyBatch(batch: readonly RecordedEvent[]): Promise<void> {
    const last = batch[batch.length - 1];
    if (!last) return;
    this.applying = true;
    try {
      for (let attempt = 1; ; attempt += 1) {
        const targets = [...this.entries.values()].filter((entry) => entry.checkpoint < last.position);
        if (targets.length === 0) break;
        try {
          const apply = () =>
            this.dependencies.readStore.transaction((transaction) =>
              this.applyToEntries(transaction, targets, batch, last.position),
            );
          await (tracingOn() ? inSpan(`projection batch ${this.name}`, batchSpan(targets, batch), apply) : apply());
          for (const target of targets) target.checkpoint = last.position;
          break;
        } catch (error) {
          if (this.stopping) return;
          const failure = error instanceof ProjectionFailure ? error : undefined;
          this.dependencies.logger.error(
            { err: error, attempt, lane: this.name, projection: failure?.projectionName },
            'projection batch failed',
          );
          if (failure && attempt >= this.dependencies.attempts) {
            await this.dependencies.setAside(this, failure);
            attempt = 0;
            continue;
          }
          await sleep(Math.min(100 * 2 ** attempt, 5000));
        }
      }
      this.cursor = last.position;
    } finally {
      this.applying = false;
    }
    this.dependencies.committed(this);
  }

  private async applyToEntries(
    transaction: ReadStoreTransaction,
    targets: LaneEntry[],
    batch: readonly RecordedEvent[],
    lastPosition: bigint,
  ): Promise<void> {
    const updatedAt = new Date().toISOString();
    // Each event is upcast once for every projection of the batch, when one first needs it.
    const typed = new Map<RecordedEvent, Event>();
    const typedOf = (event: RecordedEvent): Event => {
      let result = typed.get(event);
      if (!result) typed.set(event, (result = asHandled(event, this.dependencies.upcasters)));
      return result;
    };
    // Every target's checkpoint moves to the batch's end, written together after the last one.
    const checkpoints: BulkOperation<ProjectionCheckpointDocument>[] = [];
    for (const target of targets) {
      const generation = target.generation;
      const context = new ProjectionContext(transaction, (logical) => physicalCollection(logical, generation));
      for (const event of batch) {
        if (event.position <= target.checkpoint || !target.handles.has(event.type)) continue;
        context.beginEvent(event);
        try {
          await target.projection.apply(typedOf(event), context);
        } catch (error) {
          throw new ProjectionFailure(target.projection.name, event, error);
        }
      }
      try {
        await context.flush();
      } catch (error) {
        throw new ProjectionFailure(target.projection.name, undefined, error);
      }
      const name = target.projection.name;
      const id = target.target === 'serving' ? servingCheckpointId(name) : rebuildCheckpointId(name);
      checkpoints.push({
        replaceOne: {
          filter: { _id: id },
          replacement: { _id: id, checkpoint: lastPosition.toString(), updatedAt },
          upsert: true,
        },
      });
    }
    await transaction.collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection).bulkWrite(checkpoints);
  }
}

/** Traces a batch's span links to at most: a busy batch serves hundreds of requests. */
const LINKED_TRACES = 32;

/**
 * A batch as a span: which projections it fed and which positions, linked to the traces of the
 * requests whose events it applied (a batch serves many requests, so it is the child of none).
 */
const batchSpan = (targets: readonly LaneEntry[], batch: readonly RecordedEvent[]): SpanSpec => {
  const links = new Map<string, TraceContext>();
  for (const event of batch) {
    const { correlationId, spanId } = event.metadata;
    if (!correlationId || links.has(correlationId) || !isTraceId(correlationId)) continue;
    links.set(correlationId, { traceId: correlationId, ...(spanId ? { spanId } : {}) });
    if (links.size >= LINKED_TRACES) break;
  }
  return {
    attributes: {
      'dms.projections': targets.map((target) => target.projection.name),
      'dms.events': batch.length,
      'dms.first_position': Number(batch[0]!.position),
      'dms.last_position': Number(batch[batch.length - 1]!.position),
    },
    links: [...links.values()],
  };
};

/** How long a lane waits for the rest of a step before it says so. */
const HOLD_WARNING_MS = 10_000;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
