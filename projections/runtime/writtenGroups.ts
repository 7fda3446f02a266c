import { DelegatingEventStore } from '../../infra/eventstore/delegatingEventStore.ts';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  StreamAppend,
} from '../../infra/eventstore/eventStore.ts';
import type { ProjectionGroup } from '../index.ts';
import { handledTypes } from '../projection.ts';
import type { ProjectionProgress } from './projectionProgress.ts';

/**
 * Read your writes, group by group. A write answers once the read models show it; the models it
 * changes are those of the groups whose projections handle one of its events, and only those
 * need to have applied it: a group handling none of them shows the same before and after it. So
 * the appends of this process are recorded (the command context's event store goes through
 * `recording`), and a write waits for the groups touched by appends here that no wait has yet
 * seen applied, the write's own among them, up to the write's position. The other groups may lag
 * (a rebuild's backlog, a burst of transfers) without holding it back.
 *
 * Why this keeps read-your-writes: every earlier write of a client waited, before it answered,
 * for the groups it touched, wherever it was served; this one waits for the groups it touched
 * (and, conservatively, for those other writes of this process touched and no wait has confirmed
 * yet). What a later read shows of a group is then at least everything the client wrote to it.
 */
export class WrittenGroups {
  private readonly groupsOfType = new Map<string, string[]>();
  /** Per group, the highest position an append here touched it at, until a wait has seen it applied. */
  private readonly unconfirmed = new Map<string, bigint>();

  constructor(groups: readonly ProjectionGroup[]) {
    for (const group of groups)
      for (const type of new Set(group.projections.flatMap((projection) => [...handledTypes(projection)]))) {
        const handling = this.groupsOfType.get(type);
        if (handling) handling.push(group.name);
        else this.groupsOfType.set(type, [group.name]);
      }
  }

  /** An event store that records here every append made through it. */
  recording(eventStore: EventStore): EventStore {
    return new RecordingEventStore(eventStore, this);
  }

  record(appends: readonly StreamAppend[], results: readonly AppendResult[]): void {
    appends.forEach((append, index) => {
      const position = results[index]?.position;
      if (position === undefined || position === 0n) return;
      for (const event of append.events)
        for (const group of this.groupsOfType.get(event.type) ?? []) {
          const known = this.unconfirmed.get(group);
          if (known === undefined || position > known) this.unconfirmed.set(group, position);
        }
    });
  }

  /** The groups a write answered now waits for. */
  pending(): string[] {
    return [...this.unconfirmed.keys()];
  }

  /**
   * Resolves true once the groups appends here touched have applied `position`, as `progress`
   * tells (at once when every such group was seen to apply what it was given), false at the timeout.
   */
  async afterWrite(progress: ProjectionProgress, position: bigint, timeoutMs: number): Promise<boolean> {
    const groups = this.pending();
    if (groups.length === 0) return true;
    const reached = await progress.waitFor(position, timeoutMs, groups);
    if (reached)
      for (const group of groups) {
        const touched = this.unconfirmed.get(group);
        if (touched !== undefined && touched <= position) this.unconfirmed.delete(group);
      }
    return reached;
  }
}

class RecordingEventStore extends DelegatingEventStore {
  constructor(
    inner: EventStore,
    private readonly written: WrittenGroups,
  ) {
    super(inner);
  }

  override async appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision?: ExpectedRevision,
  ): Promise<AppendResult> {
    const result = await this.inner.appendToStream(streamName, events, expectedRevision);
    this.written.record([{ streamName, events }], [result]);
    return result;
  }

  override async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const results = await this.inner.appendToStreams(appends);
    this.written.record(appends, results);
    return results;
  }
}
