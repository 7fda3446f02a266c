import { expect } from 'chai';
import { Redis } from 'ioredis';
import { join } from 'node:path';
import {
  WrongExpectedRevisionError,
  type AppendResult,
  type RecordedEvent,
  type StreamAppend,
} from '../../infra/eventstore/eventStore.ts';
import {
  STEP_JOURNAL_STREAM,
  StepEventType,
  SteppedEventStore,
  stepIdOf,
  stepStreamName,
  type SteppedEventStoreOptions,
} from '../../infra/eventstore/steppedEventStore.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { expectRejection } from '../support/expectRejection.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { eventStoreContract } from './eventStore.contract.ts';
import { SequentialSqliteEventStore, SimulatedCrash } from './sequentialSqliteEventStore.ts';

/**
 * SteppedEventStore over an event store that appends one stream per call (SQLite made to behave
 * like EventStoreDB), with the test run's real Redis. Each test uses its own key prefix and
 * deletes only its own keys: the Redis is shared by the whole run.
 */

const redisUrl = (): string => {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is set by the root hooks');
  return url;
};

const deleteKeys = async (redis: Redis, prefix: string): Promise<void> => {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
};

const keysOf = async (redis: Redis, prefix: string): Promise<string[]> => {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found.sort();
};

eventStoreContract('SteppedEventStore over one-stream-per-call SQLite', async () => {
  const dir = makeTempDir();
  const prefix = uniqueName('steps-contract-');
  const redis = new Redis(redisUrl());
  const store = await SteppedEventStore.open(new SequentialSqliteEventStore(join(dir.path, 'events.sqlite')), {
    redis,
    keyPrefix: prefix,
    recoveryIntervalMs: 0,
  });
  return {
    store,
    dispose: async () => {
      await store.close();
      await deleteKeys(redis, prefix);
      await redis.quit();
      dir.dispose();
    },
  };
});

describe('SteppedEventStore', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let prefix: string;
  let admin: Redis;
  let cleanups: (() => Promise<unknown>)[];

  beforeEach(() => {
    dir = makeTempDir();
    prefix = uniqueName('steps-test-');
    admin = new Redis(redisUrl());
    cleanups = [];
  });

  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await deleteKeys(admin, prefix);
    await admin.quit();
    dir.dispose();
  });

  type Writer = { inner: SequentialSqliteEventStore; redis: Redis; store: SteppedEventStore };

  /** A writer process: its own connection to the event store file and to Redis. */
  const writer = async (
    how: 'open' | 'construct',
    options: Partial<SteppedEventStoreOptions> = {},
  ): Promise<Writer> => {
    const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
    const inner = new SequentialSqliteEventStore(join(dir.path, 'events.sqlite'));
    const settings: SteppedEventStoreOptions = {
      redis,
      keyPrefix: prefix,
      leaseTtlMs: 300,
      recoveryIntervalMs: 0,
      ...options,
    };
    const store =
      how === 'open' ? await SteppedEventStore.open(inner, settings) : new SteppedEventStore(inner, settings);
    cleanups.push(async () => {
      await store.close().catch(() => inner.close());
      redis.disconnect();
    });
    return { inner, redis, store };
  };

  const threeStreams = (): { streams: string[]; appends: StreamAppend[] } => {
    const streams = [uniqueName('step-a-'), uniqueName('step-b-'), uniqueName('step-c-')];
    return {
      streams,
      appends: streams.map((streamName, index) => ({
        streamName,
        events: [newEvent(`Decided${index}`, { index })],
        expectedRevision: 'no_stream' as const,
      })),
    };
  };

  /**
   * A writer that dies inside a step: it records the intent, appends the first of three streams
   * and stops; its Redis connection goes with it, so its leases stay until they lapse.
   */
  const crashInsideAStep = async (options: Partial<SteppedEventStoreOptions> = {}) => {
    const dying = await writer('open', options);
    const { streams, appends } = threeStreams();
    dying.inner.crashAfter(1, { counts: (name) => streams.includes(name), onCrash: () => dying.redis.disconnect() });
    await expectRejection(dying.store.appendToStreams(appends), SimulatedCrash);
    return { dying, streams, appends, stepId: stepIdOf(appends) };
  };

  const typesOf = (events: readonly RecordedEvent[]): string[] => events.map((event) => event.type);

  /** Every stream holds its one event exactly once, marked with the step, and the step is completed. */
  const expectCompleted = async (
    reader: SequentialSqliteEventStore,
    streams: readonly string[],
    stepId: string,
  ): Promise<void> => {
    for (const [index, stream] of streams.entries()) {
      const events = await reader.readStream(stream);
      expect(typesOf(events), stream).to.deep.equal([`Decided${index}`]);
      expect(events[0]!.metadata.step).to.deep.equal({ id: stepId, count: 3 });
    }
    expect(typesOf(await reader.readStream(stepStreamName(stepId)))).to.deep.equal([
      StepEventType.started,
      StepEventType.completed,
    ]);
    const journal = (await reader.readStream(STEP_JOURNAL_STREAM)).filter(
      (event) => (event.data as { stepId: string }).stepId === stepId,
    );
    expect(typesOf(journal)).to.deep.equal([StepEventType.opened, StepEventType.closed]);
  };

  it('writes a multi-stream append as a step: intent, streams marked with the step, completion', async () => {
    const { store, inner } = await writer('open');
    const { streams, appends } = threeStreams();
    const results = await store.appendToStreams(appends);
    expect(results.map((result) => result.streamName)).to.deep.equal(streams);
    expect(results.map((result) => result.nextExpectedRevision)).to.deep.equal([0n, 0n, 0n]);
    await expectCompleted(inner, streams, stepIdOf(appends));
    expect(await keysOf(admin, prefix)).to.deep.equal([`${prefix}:steps:ready`]);
  });

  it('leaves the intent and one of three streams when the writer dies, and completes them when restarted', async () => {
    const { dying, streams, stepId } = await crashInsideAStep();
    // What readers of the event store see now: the intent, the first stream, nothing of the others.
    expect(typesOf(await dying.inner.readStream(stepStreamName(stepId)))).to.deep.equal([StepEventType.started]);
    expect(await dying.inner.readStream(streams[0]!)).to.have.length(1);
    expect(await dying.inner.readStream(streams[1]!)).to.deep.equal([]);
    expect(await dying.inner.readStream(streams[2]!)).to.deep.equal([]);
    expect(await admin.get(`${prefix}:pending:${streams[1]}`)).to.equal(stepId);

    const restarted = await writer('open');
    await expectCompleted(restarted.inner, streams, stepId);
    expect(await keysOf(admin, prefix)).to.deep.equal([`${prefix}:steps:ready`]);
  });

  it('finds an unfinished step through the journal when Redis lost its keys', async () => {
    const { streams, stepId } = await crashInsideAStep();
    await deleteKeys(admin, prefix);

    const restarted = await writer('open');
    await expectCompleted(restarted.inner, streams, stepId);
  });

  it('reads the journal back before any append once Redis lost its keys, so no writer slips into an unfinished step', async () => {
    const { streams, stepId } = await crashInsideAStep();
    await deleteKeys(admin, prefix);

    // A writer that never ran the start-up sweep appends to the step's second stream.
    const other = await writer('construct');
    await other.store.appendToStream(streams[1]!, [newEvent('Later')], 'any');
    expect(typesOf(await other.inner.readStream(streams[1]!))).to.deep.equal(['Decided1', 'Later']);
    expect(typesOf(await other.inner.readStream(streams[0]!))).to.deep.equal(['Decided0']);
    expect(typesOf(await other.inner.readStream(streams[2]!))).to.deep.equal(['Decided2']);
    expect(typesOf(await other.inner.readStream(stepStreamName(stepId)))).to.deep.equal([
      StepEventType.started,
      StepEventType.completed,
    ]);
  });

  it('makes a writer that meets a pending step complete it first; its own stale append then conflicts', async () => {
    const { streams, stepId } = await crashInsideAStep();
    const other = await writer('construct');
    // It read the second stream before the step (no stream yet) and decided on that.
    const failure = await expectRejection(
      other.store.appendToStream(streams[1]!, [newEvent('Stale')], 'no_stream'),
      WrongExpectedRevisionError,
    );
    expect(failure.actual).to.equal(0n);
    await expectCompleted(other.inner, streams, stepId);
  });

  it('makes a writer that meets a pending step complete it first; its own append after the step then succeeds', async () => {
    const { streams, stepId } = await crashInsideAStep();
    const other = await writer('construct');
    const result = await other.store.appendToStream(streams[2]!, [newEvent('After')], 'any');
    expect(result.nextExpectedRevision).to.equal(1n);
    expect(typesOf(await other.inner.readStream(streams[2]!))).to.deep.equal(['Decided2', 'After']);
    expect(typesOf(await other.inner.readStream(stepStreamName(stepId)))).to.deep.equal([
      StepEventType.started,
      StepEventType.completed,
    ]);
    expect(typesOf(await other.inner.readStream(streams[1]!))).to.deep.equal(['Decided1']);
  });

  it('completes a step whose writer died the next time a retried append of the same event ids comes', async () => {
    const { streams, appends, stepId } = await crashInsideAStep();
    const other = await writer('construct');
    const results = await other.store.appendToStreams(appends);
    expect(results.map((result) => result.nextExpectedRevision)).to.deep.equal([0n, 0n, 0n]);
    await expectCompleted(other.inner, streams, stepId);
    // And once more: nothing is written twice.
    await other.store.appendToStreams(appends);
    await expectCompleted(other.inner, streams, stepId);
  });

  it('clears the pending key of a stream a step only checked, when a writer of that stream completes the step', async () => {
    const dying = await writer('open');
    const checked = uniqueName('checked-');
    await dying.store.appendToStream(checked, [newEvent('Exists')], 'no_stream');
    const { streams, appends } = threeStreams();
    const withCheck = [...appends, { streamName: checked, events: [], expectedRevision: 0n }];
    dying.inner.crashAfter(1, { counts: (name) => streams.includes(name), onCrash: () => dying.redis.disconnect() });
    await expectRejection(dying.store.appendToStreams(withCheck), SimulatedCrash);
    expect(await admin.get(`${prefix}:pending:${checked}`)).to.equal(stepIdOf(withCheck));

    const other = await writer('construct');
    await other.store.appendToStream(checked, [newEvent('Later')], 0n);
    await expectCompleted(other.inner, streams, stepIdOf(withCheck));
    expect(typesOf(await other.inner.readStream(checked))).to.deep.equal(['Exists', 'Later']);
    expect(await keysOf(admin, prefix)).to.deep.equal([`${prefix}:steps:ready`]);
  });

  it('lets exactly one of two concurrent steps on a common stream at the same revision win; nothing of the other is written', async () => {
    const { store, inner } = await writer('open');
    const common = uniqueName('replica-');
    await store.appendToStream(common, [newEvent('ReplicaAdded')], 'no_stream');
    const lock = [
      { streamName: common, events: [newEvent('ReplicaLocked')], expectedRevision: 0n },
      { streamName: uniqueName('rule-'), events: [newEvent('RuleAdded')], expectedRevision: 'no_stream' as const },
    ];
    const deletion = [
      { streamName: common, events: [newEvent('ReplicaDeleted')], expectedRevision: 0n },
      {
        streamName: uniqueName('deletion-'),
        events: [newEvent('DeletionStarted')],
        expectedRevision: 'no_stream' as const,
      },
    ];
    const outcomes = await Promise.allSettled([store.appendToStreams(lock), store.appendToStreams(deletion)]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).to.have.length(1);
    const loserIndex = outcomes.findIndex((outcome) => outcome.status === 'rejected');
    expect((outcomes[loserIndex] as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedRevisionError);
    const [winner, loser] = loserIndex === 1 ? [lock, deletion] : [deletion, lock];

    expect(typesOf(await inner.readStream(common))).to.deep.equal(['ReplicaAdded', winner[0]!.events[0]!.type]);
    expect(await inner.readStream(loser[1]!.streamName)).to.deep.equal([]);
    expect(await inner.readStream(stepStreamName(stepIdOf(loser)))).to.deep.equal([]);
    expect(typesOf(await inner.readStream(winner[1]!.streamName))).to.deep.equal([winner[1]!.events[0]!.type]);
    expect(await keysOf(admin, prefix)).to.deep.equal([`${prefix}:steps:ready`]);
  });

  it("keeps a single-stream append from slipping in between a step's revision check and its append", async () => {
    const { store, inner } = await writer('open');
    const stream = uniqueName('replica-');
    await store.appendToStream(stream, [newEvent('ReplicaAdded')], 'no_stream');
    let racer: Promise<AppendResult> | undefined;
    let racerSettledDuringCheck: boolean | undefined;
    inner.beforeRevisionRead = async (name) => {
      if (name !== stream || racer) return;
      // The step holds its leases and is checking the stream: a single append at the same revision races it.
      let settled = false;
      racer = store.appendToStream(stream, [newEvent('ReplicaDeleted')], 0n);
      racer.then(
        () => (settled = true),
        () => (settled = true),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      racerSettledDuringCheck = settled;
    };
    await store.appendToStreams([
      { streamName: stream, events: [newEvent('ReplicaLocked')], expectedRevision: 0n },
      { streamName: uniqueName('rule-'), events: [newEvent('RuleAdded')], expectedRevision: 'no_stream' },
    ]);
    expect(racerSettledDuringCheck, 'the single append waited for the step').to.equal(false);
    await expectRejection(racer!, WrongExpectedRevisionError);
    expect(typesOf(await inner.readStream(stream))).to.deep.equal(['ReplicaAdded', 'ReplicaLocked']);
  });

  it('(control) without the wrapper, a multi-stream append that meets a concurrent write leaves half a decision', async () => {
    const inner = new SequentialSqliteEventStore(join(dir.path, 'events.sqlite'));
    cleanups.push(() => inner.close());
    const common = uniqueName('replica-');
    await inner.appendToStream(common, [newEvent('ReplicaAdded')], 'no_stream');
    await inner.appendToStream(common, [newEvent('ReplicaDeleted')], 0n);
    const rule = uniqueName('rule-');
    await expectRejection(
      inner.appendToStreams([
        { streamName: rule, events: [newEvent('RuleAdded')], expectedRevision: 'no_stream' },
        { streamName: common, events: [newEvent('ReplicaLocked')], expectedRevision: 0n },
      ]),
      WrongExpectedRevisionError,
    );
    expect(typesOf(await inner.readStream(rule))).to.deep.equal(['RuleAdded']);
  });

  it('writes nothing when a stream of a step has moved on, and answers WrongExpectedRevisionError', async () => {
    const { store, inner } = await writer('open');
    const taken = uniqueName('taken-');
    await store.appendToStream(taken, [newEvent('A')], 'no_stream');
    const fresh = uniqueName('fresh-');
    const appends = [
      { streamName: fresh, events: [newEvent('B')], expectedRevision: 'no_stream' as const },
      { streamName: taken, events: [newEvent('C')], expectedRevision: 'no_stream' as const },
    ];
    await expectRejection(store.appendToStreams(appends), WrongExpectedRevisionError);
    expect(await inner.readStream(fresh)).to.deep.equal([]);
    expect(await inner.readStream(stepStreamName(stepIdOf(appends)))).to.deep.equal([]);
    expect(await keysOf(admin, prefix)).to.deep.equal([`${prefix}:steps:ready`]);
  });

  it('writes a large intent in parts and completes it whole after a restart', async () => {
    const dying = await writer('open', { maxIntentBytes: 2000 });
    const streams = Array.from({ length: 6 }, () => uniqueName('many-'));
    const appends = streams.map((streamName) => ({
      streamName,
      events: Array.from({ length: 4 }, (_, index) => newEvent('Registered', { index, padding: 'x'.repeat(200) })),
      expectedRevision: 'no_stream' as const,
    }));
    dying.inner.crashAfter(2, { counts: (name) => streams.includes(name), onCrash: () => dying.redis.disconnect() });
    await expectRejection(dying.store.appendToStreams(appends), SimulatedCrash);
    const stepId = stepIdOf(appends);
    const stepEvents = await dying.inner.readStream(stepStreamName(stepId));
    expect(typesOf(stepEvents).filter((type) => type === StepEventType.intentPart).length).to.be.greaterThan(2);
    expect(typesOf(stepEvents).at(-1)).to.equal(StepEventType.started);

    const restarted = await writer('open', { maxIntentBytes: 2000 });
    for (const stream of streams) {
      const events = await restarted.inner.readStream(stream);
      expect(
        events.map((event) => (event.data as { index: number }).index),
        stream,
      ).to.deep.equal([0, 1, 2, 3]);
      expect(events[0]!.metadata.step).to.deep.equal({ id: stepId, count: 24 });
    }
    expect(typesOf(await restarted.inner.readStream(stepStreamName(stepId))).at(-1)).to.equal(StepEventType.completed);
  });

  it('completes a step left unfinished by a writer that died, in the periodic sweep', async () => {
    const { streams, stepId } = await crashInsideAStep({ leaseTtlMs: 1000 });
    const sweeping = await writer('open', { leaseTtlMs: 1000, leaseWaitMs: 0, recoveryIntervalMs: 50 });
    expect(await sweeping.inner.readStream(streams[2]!), 'not completed at start').to.deep.equal([]);
    // At its start the dead writer's leases were still held: the sweep picks the step up once they lapse.
    await eventually(
      async () =>
        (await sweeping.inner.readStream(STEP_JOURNAL_STREAM)).some(
          (event) => event.type === StepEventType.closed && (event.data as { stepId: string }).stepId === stepId,
        ),
      5000,
      'the step closed in the journal',
    );
    await expectCompleted(sweeping.inner, streams, stepId);
  });
});
