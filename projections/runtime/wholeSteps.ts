import type { RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import { isRecord } from '../../domain/shared/narrowing.ts';

/** The event that ends a multi-stream step without all its events (infra/eventstore/steppedEventStore.ts). */
const STEP_ABANDONED = 'StepAbandoned';

/**
 * Keeps a reader from showing half a multi-stream decision. On EventStoreDB a decision spanning
 * several streams is appended stream by stream (SteppedEventStore), and every event of it carries
 * `metadata.step = { id, count }`; other streams' events may come in between. A lane passes each
 * batch through `release`, which hands back the events up to (not including) the first event of a
 * step whose `count` events have not all been read yet, and keeps the rest until they have. A
 * step ended by `StepAbandoned` is released with what it has. Events of atomic appends (SQLite,
 * single streams) carry no mark and pass straight through.
 *
 * Held events are not applied, so the lane's checkpoint stays before them and a restart reads
 * them again: nothing here needs to survive the process.
 */
export class WholeSteps {
  private held: RecordedEvent[] = [];
  /** Steps seen but not released whole: the ids of their events read so far. */
  private readonly seen = new Map<string, Set<string>>();
  private readonly abandoned = new Set<string>();

  /** The events of `batch` (after any held before) that may be applied now, in order. */
  release(batch: readonly RecordedEvent[]): readonly RecordedEvent[] {
    const events = this.held.length === 0 ? batch : [...this.held, ...batch];
    for (const event of batch) {
      const step = event.metadata?.step;
      if (step) {
        const ids = this.seen.get(step.id) ?? new Set<string>();
        ids.add(event.id);
        this.seen.set(step.id, ids);
      } else if (event.type === STEP_ABANDONED && event.streamName.startsWith('step-')) {
        const stepId = isRecord(event.data) ? event.data.stepId : undefined;
        // Its events come before it in `$all`; a step that wrote none has nothing to release.
        if (typeof stepId === 'string' && this.seen.has(stepId)) this.abandoned.add(stepId);
      }
    }
    const cut = events.findIndex((event) => event.metadata?.step !== undefined && !this.isWhole(event.metadata.step));
    if (cut < 0) {
      this.held = [];
      this.forgetReleased(events);
      return events;
    }
    const released = events.slice(0, cut);
    this.held = events.slice(cut);
    this.forgetReleased(released);
    return released;
  }

  /** Events read but held back, waiting for the rest of a step. */
  get heldCount(): number {
    return this.held.length;
  }

  /** The first held event's position: where the lane is waiting. */
  get heldFrom(): bigint | undefined {
    return this.held[0]?.position;
  }

  private isWhole(step: { id: string; count: number }): boolean {
    return this.abandoned.has(step.id) || (this.seen.get(step.id)?.size ?? 0) >= step.count;
  }

  /** Steps released whole no longer need tracking; a held step keeps its ids. */
  private forgetReleased(released: readonly RecordedEvent[]): void {
    const stillHeld = new Set(
      this.held.map((event) => event.metadata?.step?.id).filter((id): id is string => id !== undefined),
    );
    for (const event of released) {
      const id = event.metadata?.step?.id;
      if (id && !stillHeld.has(id)) {
        this.seen.delete(id);
        this.abandoned.delete(id);
      }
    }
  }
}
