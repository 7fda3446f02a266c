import type { Event } from '../../domain/shared/event.ts';
import { inSpan, isTraceId, tracingOn, type SpanSpec, type TraceContext } from '../../infra/tracing.ts';
import type { Upcasters } from '../../domain/shared/upcasting.ts';
import type {
  AllSubscription,
  EventStore,
  RecordedEvent,
  SubscriptionBatch,
} from '../../infra/eventstore/eventStore.ts';
import type { Logger } from '../../infra/logger.ts';
import type { BulkOperation, ReadStore, ReadStoreTransaction } from '../../infra/readstore/readStore.ts';
import { asHandled, type AnyProjection } from '../projection.ts';
import { ProjectionContext } from './projectionContext.ts';
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
 * One subscription to `$all` and the projections it feeds, for the event types they handle only.
 * Each batch is applied to every entry that has not seen it yet, in one read-store transaction
 * together with their checkpoints, so a crash neither loses nor repeats work. A batch none of
 * them handles an event of (the log read on through other groups' events) writes nothing: the
 * checkpoints move in memory and are stored shortly after (CHECKPOINT_SAVE_MS), since reading
 * those events again after a crash would change nothing. The runner keeps a live lane for the
 * serving projections and one lane per rebuild, so a rebuild never holds up the projections
 * readers are waiting for.
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
  /** The types the current subscription delivers. */
  private subscribedTypes: ReadonlySet<string> = new Set();
  /** Checkpoints moved in memory and not stored yet, and the timer that stores them. */
  private unsaved = false;
  private saveTimer: NodeJS.Timeout | undefined;
  private saving: Promise<void> | undefined;

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
    clearTimeout(this.saveTimer);
    await this.saving;
    await this.saveCheckpoints();
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

  /** The types the entries handle: what the subscription delivers. */
  private handledTypes(): Set<string> {
    const types = new Set<string>();
    for (const entry of this.entries.values()) for (const type of entry.handles) types.add(type);
    return types;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      this.subscribedTypes = this.handledTypes();
      this.subscription = this.dependencies.eventStore.subscribeToAll({
        after: this.cursor,
        batchSize: this.dependencies.batchSize,
        eventTypes: this.subscribedTypes,
      });
      try {
        for await (const batch of this.subscription) {
          await this.gate;
          if (this.stopping) break;
          // An entry that came in meanwhile (a rebuild handed over) may handle types this
          // subscription leaves out: read again from the cursor, for all of them.
          if (!isSubset(this.handledTypes(), this.subscribedTypes)) break;
          await this.applyBatch(batch);
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

  private async applyBatch({ events, through }: SubscriptionBatch): Promise<void> {
    if (through <= this.cursor) return;
    this.applying = true;
    try {
      for (let attempt = 1; ; attempt += 1) {
        const targets = [...this.entries.values()].filter((entry) => entry.checkpoint < through);
        if (targets.length === 0) break;
        if (!targets.some((target) => handlesAny(target, events))) {
          for (const target of targets) target.checkpoint = through;
          this.scheduleSave();
          break;
        }
        try {
          const apply = () =>
            this.dependencies.readStore.transaction((transaction) =>
              this.applyToEntries(transaction, targets, events, through),
            );
          await (tracingOn()
            ? inSpan(`projection batch ${this.name}`, batchSpan(targets, events, through), apply)
            : apply());
          for (const target of targets) target.checkpoint = through;
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
      this.cursor = through;
    } finally {
      this.applying = false;
    }
    this.dependencies.committed(this);
  }

  /** Stores the checkpoints moved in memory, soon (at most every CHECKPOINT_SAVE_MS). */
  private scheduleSave(): void {
    this.unsaved = true;
    if (this.saveTimer || this.stopping) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.saving = this.saveCheckpoints().catch((error: unknown) =>
        this.dependencies.logger.warn({ err: error, lane: this.name }, 'could not store projection checkpoints'),
      );
    }, CHECKPOINT_SAVE_MS);
    this.saveTimer.unref();
  }

  private async saveCheckpoints(): Promise<void> {
    if (!this.unsaved) return;
    // A batch being applied writes them with its documents; an earlier value must not follow it.
    if (this.applying) {
      this.scheduleSave();
      return;
    }
    this.unsaved = false;
    const updatedAt = new Date().toISOString();
    const targets = [...this.entries.values()];
    await this.dependencies.readStore.transaction(async (transaction) => {
      await transaction
        .collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection)
        .bulkWrite(targets.map((target) => checkpointWrite(target, target.checkpoint, updatedAt)));
    });
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
      checkpoints.push(checkpointWrite(target, lastPosition, updatedAt));
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
const batchSpan = (targets: readonly LaneEntry[], events: readonly RecordedEvent[], through: bigint): SpanSpec => {
  const links = new Map<string, TraceContext>();
  for (const event of events) {
    const { correlationId, spanId } = event.metadata;
    if (!correlationId || links.has(correlationId) || !isTraceId(correlationId)) continue;
    links.set(correlationId, { traceId: correlationId, ...(spanId ? { spanId } : {}) });
    if (links.size >= LINKED_TRACES) break;
  }
  return {
    attributes: {
      'dms.projections': targets.map((target) => target.projection.name),
      'dms.events': events.length,
      'dms.first_position': Number(events[0]?.position ?? through),
      'dms.last_position': Number(through),
    },
    links: [...links.values()],
  };
};

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How soon checkpoints moved without a write (batches of other groups' events) are stored. */
const CHECKPOINT_SAVE_MS = 100;

const checkpointWrite = (
  entry: LaneEntry,
  position: bigint,
  updatedAt: string,
): BulkOperation<ProjectionCheckpointDocument> => {
  const name = entry.projection.name;
  const id = entry.target === 'serving' ? servingCheckpointId(name) : rebuildCheckpointId(name);
  return {
    replaceOne: {
      filter: { _id: id },
      replacement: { _id: id, checkpoint: position.toString(), updatedAt },
      upsert: true,
    },
  };
};

/** Whether the batch holds an event the entry has not applied and handles. */
const handlesAny = (entry: LaneEntry, events: readonly RecordedEvent[]): boolean =>
  events.some((event) => event.position > entry.checkpoint && entry.handles.has(event.type));

const isSubset = (types: ReadonlySet<string>, of: ReadonlySet<string>): boolean => {
  for (const type of types) if (!of.has(type)) return false;
  return true;
};
