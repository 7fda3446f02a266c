import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';
import {
  isWrongExpectedRevision,
  WrongExpectedRevisionError,
  type AllSubscription,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeToAllOptions,
} from './eventStore.ts';
import { StreamLeases, type AcquireOptions, type StreamLease } from './streamLeases.ts';
import {
  assertSameEvents,
  checkOnlyResult,
  derivedId,
  intentOf,
  intentPartSegments,
  isStepStartedData,
  journalStepId,
  nextRevision,
  parseRevision,
  revisionMatches,
  segmentsOf,
  STEP_JOURNAL_STREAM,
  StepEventType,
  stepIdOf,
  stepMetadata,
  stepStreamName,
  type Intent,
  type IntentAppend,
  type IntentSegment,
  type StepAbandonedData,
  type StepStartedData,
} from './stepIntent.ts';

export {
  STEP_JOURNAL_STREAM,
  StepEventType,
  stepIdOf,
  stepStreamName,
  type StepAbandonedData,
  type StepStartedData,
} from './stepIntent.ts';

/**
 * Multi-stream appends, all or nothing as the caller sees it, over an event store that writes
 * one stream per call (EventStoreDB). Every append goes through leases on its stream names
 * (streamLeases.ts), so no other writer of this service comes between a check and a write.
 * An append to two or more streams is a step:
 *
 * 1. leases on every stream, and each stream's pending key set to the step id, in one script;
 * 2. each stream's head revision compared with the caller's expected one: a mismatch releases
 *    everything and throws WrongExpectedRevisionError, nothing written;
 * 3. the intent, `StepStarted` in `step-<id>`: every stream with its exact revision and its
 *    events (ids, types, data, metadata), then `StepOpened` in the journal `steps-journal`;
 * 4. each stream appended at its recorded revision, with the recorded event ids, so appending it
 *    again after a crash is a no-op (both adapters treat a stored batch of ids as done, and at an
 *    exact revision EventStoreDB does so even after the stream has moved on);
 * 5. `StepCompleted` in `step-<id>` and `StepClosed` in the journal, pending keys cleared, leases
 *    released: only now does the caller hear success.
 *
 * A step whose writer died is completed by whoever meets one of its pending keys, by the sweep
 * at start and every few seconds (journal), always under the leases: a live writer holds them,
 * so it is never overtaken. Every event of a step carries `metadata.step = { id, count }`, so
 * readers can hold a step's events until they have all of them.
 *
 * Hashes (`metadata.hash`, eventHashes.ts) are computed by the inner store as it appends each
 * stream, over the marked metadata; a step completed again appends the same events at the same
 * revisions after the same previous events, so its hashes come out the same.
 */

type StoredStep = Readonly<{
  /** Revision of the step stream's last event. */
  head: bigint | 'no_stream';
  started?: Readonly<{ intent: Intent; revision: bigint }>;
  finished?: 'completed' | 'abandoned';
}>;

export type SteppedEventStoreOptions = Readonly<{
  /** The Redis every process of the deployment shares: a URL, or a client the caller owns. */
  redis: string | Redis;
  /** Prefix of the lease keys (the deployment's DMS_QUEUE_PREFIX); default `dms`. */
  keyPrefix?: string;
  /** Lifetime of a lease that is not renewed (a writer that died); default 30 s. */
  leaseTtlMs?: number;
  /** How long an append waits for streams another writer holds; default the lease TTL + 5 s. */
  leaseWaitMs?: number;
  /** Sweep for unfinished steps this often (ms); 0 = never. Default 5 s. Only `open` starts it. */
  recoveryIntervalMs?: number;
  /** How many of the journal's newest events a sweep or a read-back after a Redis loss reads; default 10 000. */
  journalWindow?: number;
  /** Largest intent event, in bytes of JSON; larger intents are written in parts. Default 512 KiB (EventStoreDB accepts 1 MiB per append). */
  maxIntentBytes?: number;
  /** Streams read or appended at once by one step; default 16. */
  concurrency?: number;
  logger?: Logger;
}>;

/** Leases stayed held by another writer for longer than the append may wait. */
export class StreamBusyError extends Error {
  constructor(readonly streamNames: readonly string[]) {
    super(
      `Streams held by another writer for too long: ${streamNames.slice(0, 5).join(', ')}${streamNames.length > 5 ? ', ...' : ''}`,
    );
    this.name = 'StreamBusyError';
  }
}

/**
 * A step could not be completed: some of its streams refused their events at the recorded
 * revision, which only happens when the leases were broken (Redis lost its keys while a writer
 * was inside a step). The step is recorded as `StepAbandoned`; what it wrote stays written.
 */
export class StepAbandonedError extends Error {
  constructor(
    readonly stepId: string,
    readonly conflicts: readonly string[],
  ) {
    super(
      `Step ${stepId} was abandoned: ${conflicts.length > 0 ? `streams ${conflicts.join(', ')} refused its events` : 'recorded as abandoned'}`,
    );
    this.name = 'StepAbandonedError';
  }
}

type CompleteOutcome = 'finished' | 'progress' | 'busy';

export class SteppedEventStore implements EventStore {
  readonly leases: StreamLeases;
  private readonly redis: Redis;
  private readonly ownsRedis: boolean;
  private readonly leaseWaitMs: number;
  private readonly recoveryIntervalMs: number;
  private readonly journalWindow: number;
  private readonly maxIntentBytes: number;
  private readonly concurrency: number;
  private readonly logger: Logger | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;
  private restoring: Promise<void> | undefined;
  /** Next journal revision a sweep reads; steps opened before it and not closed are in `openSteps`. */
  private journalCursor: bigint | undefined;
  private readonly openSteps = new Set<string>();
  private closed = false;

  /** Without the sweeps: use `open` for a store that also completes what earlier writers left. */
  constructor(
    private readonly inner: EventStore,
    options: SteppedEventStoreOptions,
  ) {
    this.ownsRedis = typeof options.redis === 'string';
    this.redis =
      typeof options.redis === 'string' ? new Redis(options.redis, { maxRetriesPerRequest: 3 }) : options.redis;
    if (this.ownsRedis)
      this.redis.on('error', (error: Error) =>
        this.logger?.warn({ err: error }, 'step leases: Redis connection error'),
      );
    this.logger = options.logger;
    const ttlMs = options.leaseTtlMs ?? 30_000;
    this.leases = new StreamLeases(this.redis, {
      keyPrefix: options.keyPrefix ?? 'dms',
      ttlMs,
      onLost: (streamNames) =>
        this.logger?.warn(
          { streams: streamNames.slice(0, 10) },
          'step leases: a lease lapsed while its writer was still working',
        ),
    });
    this.leaseWaitMs = options.leaseWaitMs ?? ttlMs + 5000;
    this.recoveryIntervalMs = options.recoveryIntervalMs ?? 5000;
    this.journalWindow = options.journalWindow ?? 10_000;
    this.maxIntentBytes = options.maxIntentBytes ?? 512 * 1024;
    this.concurrency = options.concurrency ?? 16;
  }

  /**
   * Opens the store: completes the steps earlier writers left unfinished (waiting, up to the
   * lease wait, for leases of writers that died to lapse), then sweeps every few seconds.
   */
  static async open(inner: EventStore, options: SteppedEventStoreOptions): Promise<SteppedEventStore> {
    const store = new SteppedEventStore(inner, options);
    try {
      const { unfinished } = await store.completePendingSteps({ waitForLeases: true });
      if (unfinished > 0)
        store.logger?.warn(
          { unfinished },
          'steps still held by other writers; the sweep will complete them if they die',
        );
    } catch (error) {
      await store.close();
      throw error;
    }
    store.startSweeping();
    return store;
  }

  async appendToStream(
    streamName: string,
    events: readonly NewEvent[],
    expectedRevision: ExpectedRevision = 'any',
  ): Promise<AppendResult> {
    const [result] = await this.appendToStreams([{ streamName, events, expectedRevision }]);
    return result!;
  }

  async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    this.assertOpen();
    if (appends.length === 0) return [];
    const names = appends.map((append) => append.streamName);
    if (new Set(names).size !== names.length) throw new Error('A multi-stream append names each stream once');
    const writing = appends.filter((append) => append.events.length > 0).length;
    return writing >= 2 ? this.appendAsStep(appends) : this.appendUnderLeases(appends);
  }

  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamName, options);
  }

  readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  streamRevision(streamName: string): Promise<bigint | 'no_stream'> {
    return this.inner.streamRevision(streamName);
  }

  readEventsAt(positions: readonly bigint[]): Promise<RecordedEvent[]> {
    return this.inner.readEventsAt(positions);
  }

  subscribeToAll(options?: SubscribeToAllOptions): AllSubscription {
    return this.inner.subscribeToAll(options);
  }

  headPosition(): Promise<bigint> {
    return this.inner.headPosition();
  }

  /**
   * Completes the unfinished steps the journal names (reading it back into Redis first when
   * Redis lost its keys). Steps whose leases are held are left to their writer, or with
   * `waitForLeases` waited for (one lease wait for the whole call). Runs at `open` and every
   * `recoveryIntervalMs`.
   */
  async completePendingSteps(
    options: Readonly<{ waitForLeases?: boolean }> = {},
  ): Promise<{ finished: number; unfinished: number }> {
    while (this.sweeping) await this.sweeping.catch(() => undefined);
    const sweep = this.sweep(options.waitForLeases ? this.leaseWaitMs : 0);
    this.sweeping = sweep;
    try {
      return await sweep;
    } finally {
      if (this.sweeping === sweep) this.sweeping = undefined;
    }
  }

  /**
   * Completes the steps writers of this protocol left unfinished, then lets go, leaving `inner`
   * open: for a deployment whose server now appends several streams atomically (KurrentDB 25.1),
   * whose writers take no leases, so no step of this protocol may stay half-written (readers would
   * hold at it for ever). Waits, up to the lease wait, for the leases of writers that died to
   * lapse; answers how many steps are still held, by writers of this protocol still running.
   */
  static async finishLeftSteps(
    inner: EventStore,
    options: SteppedEventStoreOptions,
  ): Promise<{ finished: number; unfinished: number }> {
    const store = new SteppedEventStore(inner, { ...options, recoveryIntervalMs: 0 });
    try {
      return await store.completePendingSteps({ waitForLeases: true });
    } finally {
      await store.letGo();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.letGo();
    await this.inner.close();
  }

  /** Stops the sweeps and closes the Redis connection this store made; the inner store stays open. */
  private async letGo(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.sweeping?.catch(() => undefined);
    if (this.ownsRedis) await this.redis.quit().catch(() => this.redis.disconnect());
  }

  // ---- appends

  /** One stream (atomic in the inner store), or one writing stream and others only checked. */
  private async appendUnderLeases(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const lease = await this.acquireForWriting(
      appends.map((append) => append.streamName),
      {},
    );
    try {
      if (appends.length === 1) return await this.inner.appendToStreams(appends);
      const heads = await this.checkRevisions(appends);
      return await mapLimit(appends, this.concurrency, (append, index) =>
        append.events.length > 0
          ? this.inner.appendToStream(append.streamName, append.events, heads[index])
          : Promise.resolve(checkOnlyResult(append.streamName, heads[index]!)),
      );
    } finally {
      await this.release(lease);
    }
  }

  private async appendAsStep(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const stepId = stepIdOf(appends);
    const lease = await this.acquireForWriting(
      appends.map((append) => append.streamName),
      { pendingStep: stepId },
    );
    let started = false;
    try {
      const stored = await this.readStep(stepId);
      // An unfinished step of this id keeps its pending keys whatever happens to this call.
      started = stored.started !== undefined && stored.finished === undefined;
      if (stored.started) {
        // The same events again (a retried job): finish what the first attempt started.
        assertSameEvents(stored.started.intent, appends);
        if (stored.finished === 'abandoned') throw new StepAbandonedError(stepId, []);
        started = true;
        const results = await this.finishStep(stored.started.intent, stored.started.revision, lease, {
          closeInJournal: stored.finished === undefined,
        });
        return await Promise.all(
          appends.map(
            async (append) =>
              results.get(append.streamName) ??
              checkOnlyResult(append.streamName, await this.inner.streamRevision(append.streamName)),
          ),
        );
      }
      const heads = await this.checkRevisions(appends);
      const intent = intentOf(stepId, appends, heads);
      // From here on the step may exist: a failure leaves its pending keys for whoever comes next.
      started = true;
      const startedRevision = await this.writeIntent(intent, stored.head, stepMetadata(intent));
      await this.inner.appendToStream(
        STEP_JOURNAL_STREAM,
        [
          {
            id: derivedId(stepId, 'opened'),
            type: StepEventType.opened,
            data: { stepId, count: intent.count, streams: intent.appends.length },
            metadata: stepMetadata(intent),
          },
        ],
        'any',
      );
      const results = await this.finishStep(intent, startedRevision, lease, { closeInJournal: true });
      return appends.map(
        (append, index) => results.get(append.streamName) ?? checkOnlyResult(append.streamName, heads[index]!),
      );
    } catch (error) {
      await this.release(lease, started ? {} : { clearPendingOf: stepId });
      throw error;
    }
  }

  /**
   * Appends every stream of a started step at its recorded revision (a no-op where it is
   * there already), records the completion and releases the leases and pending keys.
   */
  private async finishStep(
    intent: Intent,
    startedRevision: bigint,
    lease: StreamLease,
    options: Readonly<{ closeInJournal: boolean }>,
  ): Promise<Map<string, AppendResult>> {
    const results = new Map<string, AppendResult>();
    const conflicts: string[] = [];
    await mapLimit(intent.appends, this.concurrency, async (append) => {
      try {
        results.set(
          append.streamName,
          await this.inner.appendToStream(append.streamName, append.events, append.expectedRevision),
        );
      } catch (error) {
        if (!isWrongExpectedRevision(error)) throw error;
        conflicts.push(append.streamName);
      }
    });
    const metadata = stepMetadata(intent);
    if (conflicts.length > 0) {
      await this.abandon(intent, startedRevision, lease, conflicts);
      throw new StepAbandonedError(intent.stepId, conflicts);
    }
    try {
      await this.inner.appendToStream(
        stepStreamName(intent.stepId),
        [
          {
            id: derivedId(intent.stepId, 'completed'),
            type: StepEventType.completed,
            data: { stepId: intent.stepId },
            metadata,
          },
        ],
        startedRevision,
      );
    } catch (error) {
      if (!isWrongExpectedRevision(error) || (await this.readStep(intent.stepId)).finished !== 'completed') throw error;
    }
    if (options.closeInJournal) await this.closeInJournal(intent, 'completed');
    await lease.release({ clearPendingOf: intent.stepId });
    return results;
  }

  private async abandon(
    intent: Intent,
    startedRevision: bigint,
    lease: StreamLease,
    conflicts: readonly string[],
  ): Promise<void> {
    this.logger?.error(
      { stepId: intent.stepId, conflicts },
      'a step could not be completed: other writers appended to its streams while its leases were lost',
    );
    const data: StepAbandonedData = {
      stepId: intent.stepId,
      reason: 'streams refused the recorded events at the recorded revisions',
      conflicts,
    };
    try {
      await this.inner.appendToStream(
        stepStreamName(intent.stepId),
        [
          {
            id: derivedId(intent.stepId, 'abandoned'),
            type: StepEventType.abandoned,
            data,
            metadata: stepMetadata(intent),
          },
        ],
        startedRevision,
      );
    } catch (error) {
      if (!isWrongExpectedRevision(error)) throw error;
    }
    await this.closeInJournal(intent, 'abandoned');
    await lease.release({ clearPendingOf: intent.stepId });
  }

  private async closeInJournal(intent: Intent, outcome: 'completed' | 'abandoned'): Promise<void> {
    await this.inner.appendToStream(
      STEP_JOURNAL_STREAM,
      [
        {
          id: derivedId(intent.stepId, 'closed'),
          type: StepEventType.closed,
          data: { stepId: intent.stepId, outcome },
          metadata: stepMetadata(intent),
        },
      ],
      'any',
    );
    this.openSteps.delete(intent.stepId);
  }

  /** Each stream's head, checked against what the caller expected (fresh streams are not read). */
  private checkRevisions(appends: readonly StreamAppend[]): Promise<(bigint | 'no_stream')[]> {
    return mapLimit(appends, this.concurrency, async (append) => {
      const expected = append.expectedRevision ?? 'any';
      if (append.fresh && expected === 'no_stream') return 'no_stream' as const;
      const head = await this.inner.streamRevision(append.streamName);
      if (!revisionMatches(expected, head)) throw new WrongExpectedRevisionError(append.streamName, expected, head);
      return head;
    });
  }

  /** Writes the intent after the step stream's head; answers the revision of its `StepStarted`. */
  private async writeIntent(intent: Intent, stepHead: bigint | 'no_stream', metadata: EventMetadata): Promise<bigint> {
    const streamName = stepStreamName(intent.stepId);
    const chunks = segmentsOf(intent, this.maxIntentBytes);
    const base = { stepId: intent.stepId, count: intent.count, streams: intent.appends.length };
    let revision = stepHead;
    let data: StepStartedData;
    if (chunks.length <= 1) {
      data = { ...base, parts: 0, segments: chunks[0] ?? [] };
    } else {
      // Parts first (each an append of its own), then the small StepStarted that names them: a
      // step exists only once its StepStarted does.
      const firstPart = nextRevision(revision);
      for (const [index, segments] of chunks.entries()) {
        await this.inner.appendToStream(
          streamName,
          [
            {
              id: randomUUID(),
              type: StepEventType.intentPart,
              data: { stepId: intent.stepId, index, segments },
              metadata,
            },
          ],
          revision,
        );
        revision = nextRevision(revision);
      }
      data = { ...base, parts: chunks.length, firstPartRevision: String(firstPart) };
    }
    await this.inner.appendToStream(
      streamName,
      [{ id: derivedId(intent.stepId, 'started'), type: StepEventType.started, data, metadata }],
      revision,
    );
    return nextRevision(revision);
  }

  private async readStep(stepId: string): Promise<StoredStep> {
    const events = await this.inner.readStream(stepStreamName(stepId));
    const head = events.length > 0 ? events[events.length - 1]!.revision : 'no_stream';
    const startedIndex = events.findIndex((event) => event.type === StepEventType.started);
    if (startedIndex < 0) return { head };
    const started = events[startedIndex]!;
    const data = started.data;
    if (!isStepStartedData(data)) throw new Error(`Step ${stepId}: its ${started.type} holds no intent`);
    let segments: IntentSegment[];
    if (data.parts === 0) {
      segments = [...(data.segments ?? [])];
    } else {
      const first = BigInt(data.firstPartRevision!);
      const parts = events.filter(
        (event) =>
          event.type === StepEventType.intentPart &&
          event.revision >= first &&
          event.revision < first + BigInt(data.parts),
      );
      if (parts.length !== data.parts)
        throw new Error(`Step ${stepId}: its intent names ${data.parts} parts, ${parts.length} are stored`);
      segments = parts.flatMap((part) => {
        const partSegments = intentPartSegments(part.data);
        if (!partSegments) throw new Error(`Step ${stepId}: its intent part ${part.revision} holds no segments`);
        return partSegments;
      });
    }
    const byStream = new Map<string, IntentAppend>();
    for (const segment of segments) {
      const append = byStream.get(segment.streamName);
      if (append) append.events.push(...segment.events);
      else
        byStream.set(segment.streamName, {
          streamName: segment.streamName,
          expectedRevision: parseRevision(segment.expectedRevision),
          events: [...segment.events],
        });
    }
    const later = events.slice(startedIndex + 1);
    const finished = later.some((event) => event.type === StepEventType.completed)
      ? 'completed'
      : later.some((event) => event.type === StepEventType.abandoned)
        ? 'abandoned'
        : undefined;
    return {
      head,
      started: { intent: { stepId, count: data.count, appends: [...byStream.values()] }, revision: started.revision },
      ...(finished ? { finished } : {}),
    };
  }

  // ---- leases

  private async acquireForWriting(streamNames: readonly string[], options: AcquireOptions): Promise<StreamLease> {
    const lease = await this.acquire(streamNames, options, this.leaseWaitMs, 0);
    if (!lease) throw new StreamBusyError(streamNames);
    return lease;
  }

  /**
   * Takes leases on every stream, waiting (with jitter) while other writers hold some, completing
   * the unfinished steps it meets and reading the journal back when Redis lost its keys.
   * Undefined when the streams stayed held for `waitMs`.
   */
  private async acquire(
    streamNames: readonly string[],
    options: AcquireOptions,
    waitMs: number,
    depth: number,
  ): Promise<StreamLease | undefined> {
    const deadline = Date.now() + waitMs;
    for (let attempt = 0; ; attempt += 1) {
      this.assertOpen();
      const outcome = await this.leases.tryAcquire(streamNames, options);
      if (outcome.kind === 'taken') return outcome.lease;
      let progress = false;
      if (outcome.kind === 'reset') {
        await this.restoreFromJournal();
        progress = true;
      } else if (outcome.kind === 'pending' && depth < 3) {
        const completed = await this.completeStep(outcome.stepId, {
          waitMs: Math.max(0, deadline - Date.now()),
          knownStream: outcome.streamName,
          depth: depth + 1,
        });
        progress = completed !== 'busy';
      }
      if (Date.now() >= deadline) return undefined;
      if (!progress) await sleep(backoffMs(attempt));
    }
  }

  private async release(lease: StreamLease, options: Readonly<{ clearPendingOf?: string }> = {}): Promise<void> {
    try {
      await lease.release(options);
    } catch (error) {
      // The leases lapse by themselves; pending keys are cleared by whoever completes the step.
      lease.abandon();
      this.logger?.warn({ err: error }, 'step leases: could not release');
    }
  }

  // ---- recovery

  /**
   * Completes one unfinished step under the leases of all its streams. `knownStream` is a stream
   * whose pending key named the step: without an intent, the step never started (its writer
   * died before writing it), and the key is cleared once the stream's lease can be taken.
   */
  private async completeStep(
    stepId: string,
    options: Readonly<{ waitMs: number; knownStream?: string; depth: number; fromJournal?: boolean }>,
  ): Promise<CompleteOutcome> {
    let step = await this.readStep(stepId);
    if (!step.started) {
      if (!options.knownStream) return 'finished';
      const lease = await this.acquire(
        [options.knownStream],
        { allowPendingOf: stepId },
        options.waitMs,
        options.depth,
      );
      if (!lease) return 'busy';
      step = await this.readStep(stepId);
      // An intent written meanwhile: try again with the leases of all its streams.
      await this.release(lease, step.started ? {} : { clearPendingOf: stepId });
      return step.started ? 'progress' : 'finished';
    }
    const { intent } = step.started;
    const names = intent.appends.map((append) => append.streamName);
    // A stream the step only checked (no events) is not in its intent but had a pending key too.
    const checkedOnly =
      options.knownStream !== undefined && !names.includes(options.knownStream) ? [options.knownStream] : [];
    if (step.finished) {
      await this.leases.clearPending([...names, ...checkedOnly], stepId);
      if (options.fromJournal) await this.closeInJournal(intent, step.finished);
      return 'finished';
    }
    const lease = await this.acquire(names, { allowPendingOf: stepId }, options.waitMs, options.depth);
    if (!lease) return 'busy';
    try {
      // Under the leases: its writer may have finished it meanwhile.
      step = await this.readStep(stepId);
      if (step.finished) {
        await lease.release({ clearPendingOf: stepId });
        if (options.fromJournal) await this.closeInJournal(intent, step.finished);
      } else {
        await this.finishStep(intent, step.started!.revision, lease, { closeInJournal: true });
        this.logger?.info({ stepId, streams: names.length }, 'completed a step its writer left unfinished');
      }
      await this.leases.clearPending(checkedOnly, stepId);
      return 'finished';
    } catch (error) {
      if (!(error instanceof StepAbandonedError)) throw error;
      await this.leases.clearPending(checkedOnly, stepId);
      return 'finished';
    } finally {
      await this.release(lease);
    }
  }

  private async sweep(waitMs: number): Promise<{ finished: number; unfinished: number }> {
    const deadline = Date.now() + waitMs;
    if (!(await this.leases.isReady())) await this.restoreFromJournal();
    await this.scanJournal();
    let finished = 0;
    for (const stepId of [...this.openSteps]) {
      if (this.closed) break;
      try {
        const outcome = await this.completeStep(stepId, {
          waitMs: Math.max(0, deadline - Date.now()),
          depth: 0,
          fromJournal: true,
        });
        if (outcome === 'finished') {
          this.openSteps.delete(stepId);
          finished += 1;
        }
      } catch (error) {
        this.logger?.error({ err: error, stepId }, 'could not complete an unfinished step');
      }
    }
    return { finished, unfinished: this.openSteps.size };
  }

  /** Reads the journal since the last sweep (at most its newest `journalWindow` events). */
  private async scanJournal(): Promise<void> {
    this.journalCursor = await this.readJournal(this.journalCursor, this.openSteps);
  }

  private async readJournal(from: bigint | undefined, open: Set<string>): Promise<bigint | undefined> {
    const head = await this.inner.streamRevision(STEP_JOURNAL_STREAM);
    if (head === 'no_stream') return from;
    const windowStart = head + 1n - BigInt(this.journalWindow);
    let next = from === undefined || from < windowStart ? (windowStart > 0n ? windowStart : 0n) : from;
    while (next <= head) {
      const page = await this.inner.readStream(STEP_JOURNAL_STREAM, { fromRevision: next, maxCount: 1000 });
      if (page.length === 0) break;
      for (const event of page) {
        const stepId = journalStepId(event.data);
        if (stepId === undefined) continue;
        if (event.type === StepEventType.opened) open.add(stepId);
        else if (event.type === StepEventType.closed) open.delete(stepId);
      }
      next = page[page.length - 1]!.revision + 1n;
    }
    return next;
  }

  /**
   * Redis lost its keys: reads the unfinished steps back from the journal, sets their pending
   * keys and marks Redis ready again. Until then every acquisition is refused, so no writer can
   * slip into a stream of a step whose pending key was lost.
   */
  private restoreFromJournal(): Promise<void> {
    this.restoring ??= (async () => {
      try {
        const open = new Set<string>();
        await this.readJournal(undefined, open);
        const unfinished: { stepId: string; streamNames: string[] }[] = [];
        for (const stepId of open) {
          const step = await this.readStep(stepId);
          if (step.started && !step.finished)
            unfinished.push({ stepId, streamNames: step.started.intent.appends.map((append) => append.streamName) });
          this.openSteps.add(stepId);
        }
        await this.leases.restore(unfinished);
        this.logger?.warn(
          { unfinished: unfinished.length },
          'step leases: Redis had no step keys; unfinished steps read back from the journal',
        );
      } finally {
        this.restoring = undefined;
      }
    })();
    return this.restoring;
  }

  private startSweeping(): void {
    if (this.recoveryIntervalMs <= 0 || this.closed) return;
    this.timer = setInterval(() => {
      if (this.sweeping || this.closed) return;
      this.completePendingSteps().catch((error: unknown) => this.logger?.error({ err: error }, 'step sweep failed'));
    }, this.recoveryIntervalMs);
    this.timer.unref();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The event store is closed');
  }
}

// ---- helpers

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** 2, 4, 8 ... up to 100 ms, each between half and one and a half times that. */
const backoffMs = (attempt: number): number => Math.min(100, 2 ** (attempt + 1)) * (0.5 + Math.random());

/** Maps with at most `limit` calls in flight; the first failure stops new calls and is thrown once the others settled. */
const mapLimit = async <T, R>(
  items: readonly T[],
  limit: number,
  map: (item: T, index: number) => Promise<R>,
): Promise<R[]> => {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await map(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.error;
  return results;
};
