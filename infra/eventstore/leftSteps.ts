import { deterministicUuid } from './eventIds.ts';
import { isRecord } from '../typeGuards.ts';
import {
  isNewEvent,
  isWrongExpectedRevision,
  type EventMetadata,
  type EventStore,
  type NewEvent,
  type RecordedEvent,
} from './eventStore.ts';

/**
 * Steps left by the retired stepped protocol. Before KurrentDB 25.1, a multi-stream decision on
 * EventStoreDB was written stream by stream as a *step*: its intent (every stream with its exact
 * revision and its events) in `step-<id>`, `StepOpened` in `steps-journal`, each stream appended,
 * then `StepCompleted` and `StepClosed`. A writer that died in between left a step half written,
 * which readers held back until another writer completed it. The service now writes every
 * decision in one atomic append and reads no such marks, so a log an older deployment wrote must
 * have its steps completed once, before the service starts on it: `dms events finish-steps`
 * (`finishLeftSteps`), which closes the journal with `StepsJournalClosed`. At start the service
 * reads only the journal's last event (`leftStepsCheck`).
 *
 * The shapes below are those the stepped protocol wrote; they are read, never written again,
 * except the completion records a finished step gets.
 */

export const STEP_JOURNAL_STREAM = 'steps-journal';
export const stepStreamName = (stepId: string): string => `step-${stepId}`;

export const StepEventType = {
  /** The intent (stream `step-<id>`): every append of the step, or the number of parts holding them. */
  started: 'StepStarted',
  /** A piece of a large intent, written before its `StepStarted`. */
  intentPart: 'StepIntentPart',
  /** Every stream of the step holds its events. */
  completed: 'StepCompleted',
  /** A stream of the step refused its events (another writer came in): the step stays partial. */
  abandoned: 'StepAbandoned',
  /** Journal: a step was started. */
  opened: 'StepOpened',
  /** Journal: a step was completed or abandoned. */
  closed: 'StepClosed',
  /** Journal: every step before this event is closed (written by `finishLeftSteps`). */
  journalClosed: 'StepsJournalClosed',
} as const;

type IntentSegment = Readonly<{ streamName: string; expectedRevision: string; events: readonly NewEvent[] }>;

type StepStartedData = Readonly<{
  stepId: string;
  count: number;
  streams: number;
  /** 0: `segments` holds the appends; otherwise that many `StepIntentPart` events from `firstPartRevision`. */
  parts: number;
  firstPartRevision?: string;
  segments?: readonly IntentSegment[];
}>;

/** One stream of a step: where it was to be appended, and what. */
type IntentAppend = { streamName: string; expectedRevision: bigint | 'no_stream'; events: NewEvent[] };

type Intent = Readonly<{ stepId: string; appends: readonly IntentAppend[] }>;

/*
 * The records read back are checked as far as the completion relies on them: a step resumed from
 * a wrong shape would append wrong events, so a record that is not one is refused, not replayed.
 */

const isStepStartedData = (value: unknown): value is StepStartedData =>
  isRecord(value) &&
  typeof value.stepId === 'string' &&
  typeof value.count === 'number' &&
  typeof value.streams === 'number' &&
  typeof value.parts === 'number' &&
  (value.firstPartRevision === undefined || typeof value.firstPartRevision === 'string') &&
  (value.segments === undefined || isSegmentList(value.segments));

const isSegmentList = (value: unknown): value is readonly IntentSegment[] =>
  Array.isArray(value) && value.every(isIntentSegment);

const isIntentSegment = (value: unknown): value is IntentSegment =>
  isRecord(value) &&
  typeof value.streamName === 'string' &&
  typeof value.expectedRevision === 'string' &&
  Array.isArray(value.events) &&
  value.events.every(isNewEvent);

const journalStepId = (data: unknown): string | undefined =>
  isRecord(data) && typeof data.stepId === 'string' ? data.stepId : undefined;

const derivedId = (stepId: string, role: string): string => deterministicUuid(`dms-step:${stepId}:${role}`);

const parseRevision = (text: string): bigint | 'no_stream' => (text === 'no_stream' ? 'no_stream' : BigInt(text));

/** What the start of the service finds: nothing to do, or a journal that was never closed. */
export type LeftStepsCheck = Readonly<{ clean: true } | { clean: false; reason: string }>;

/**
 * Whether the log may hold steps an older deployment left: one read of the journal's last event.
 * No journal (a log the stepped protocol never wrote), or one whose last event closes it, is clean.
 */
export const leftStepsCheck = async (store: EventStore, journal = STEP_JOURNAL_STREAM): Promise<LeftStepsCheck> => {
  const head = await store.streamRevision(journal);
  if (head === 'no_stream') return { clean: true };
  const [last] = await store.readStream(journal, { fromRevision: head, maxCount: 1 });
  if (last?.type === StepEventType.journalClosed) return { clean: true };
  return {
    clean: false,
    reason:
      `the event log holds ${journal}, written by an older deployment's stepped protocol, and it was ` +
      'not closed since: some multi-stream steps may be half written. Stop every process of the older deployment, ' +
      'run `dms events finish-steps` once, then start again (docs/operations.md, "Scaling out")',
  };
};

export type FinishedSteps = Readonly<{
  /** Steps found open in the journal. */
  open: number;
  /** Of those, completed now (every stream holds its events). */
  completed: number;
  /** Of those, recorded as abandoned: a stream had moved on without the step's events. */
  abandoned: readonly Readonly<{ stepId: string; streams: readonly string[] }>[];
}>;

/**
 * Completes every step the journal names as open, then closes the journal. Each stream of a step
 * is appended at its recorded revision with its recorded event ids, which both stores treat as
 * done when the events are there already, so running this again, or beside a stepped writer
 * finishing the same step, writes nothing twice. A stream that moved on without the step's events
 * (only possible when that protocol's leases were lost) cannot take them any more: the step is
 * recorded as abandoned, as the protocol itself would have, and reported. `journal` is the
 * protocol's (tests name one of their own).
 */
export const finishLeftSteps = async (
  store: EventStore,
  options: Readonly<{
    journal?: string;
    onStep?: (stepId: string, outcome: 'completed' | 'abandoned') => void;
  }> = {},
): Promise<FinishedSteps> => {
  const journal = options.journal ?? STEP_JOURNAL_STREAM;
  const onStep = options.onStep ?? (() => undefined);
  // A log the stepped protocol never wrote to gets nothing written.
  if ((await store.streamRevision(journal)) === 'no_stream') return { open: 0, completed: 0, abandoned: [] };
  const open = await openSteps(store, journal);
  let completed = 0;
  const abandoned: { stepId: string; streams: string[] }[] = [];
  for (const stepId of open) {
    const step = await readStep(store, stepId);
    if (!step) {
      // Its writer died before writing the intent: nothing of it was appended anywhere.
      await closeInJournal(store, journal, stepId, 'abandoned', undefined);
      onStep(stepId, 'abandoned');
      abandoned.push({ stepId, streams: [] });
      continue;
    }
    const outcome = step.finished ?? (await complete(store, step));
    await closeInJournal(store, journal, stepId, outcome.kind, step);
    onStep(stepId, outcome.kind);
    if (outcome.kind === 'completed') completed += 1;
    else abandoned.push({ stepId, streams: [...outcome.conflicts] });
  }
  await store.appendToStream(
    journal,
    [
      {
        id: deterministicUuid(`dms-steps-journal-closed:${open.length}:${Date.now()}`),
        type: StepEventType.journalClosed,
        data: { open: open.length, completed, abandoned: abandoned.length },
        metadata: { account: 'root', requestId: 'finish-steps', at: new Date().toISOString(), schemaVersion: 1 },
      },
    ],
    'any',
  );
  return { open: open.length, completed, abandoned };
};

type StoredStep = Readonly<{
  intent: Intent;
  metadata: EventMetadata;
  /** Revision of the step stream's `StepStarted`, after which its outcome is recorded. */
  startedRevision: bigint;
  finished?: Outcome;
}>;

type Outcome = Readonly<{ kind: 'completed' } | { kind: 'abandoned'; conflicts: readonly string[] }>;

/** The steps opened in the journal and not closed, oldest first. */
const openSteps = async (store: EventStore, journal: string): Promise<string[]> => {
  const open = new Set<string>();
  for (let next = 0n; ;) {
    const page = await store.readStream(journal, { fromRevision: next, maxCount: 1000 });
    for (const event of page) {
      const stepId = journalStepId(event.data);
      if (stepId === undefined) continue;
      if (event.type === StepEventType.opened) open.add(stepId);
      else if (event.type === StepEventType.closed) open.delete(stepId);
    }
    if (page.length < 1000) return [...open];
    next = page[page.length - 1]!.revision + 1n;
  }
};

const readStep = async (store: EventStore, stepId: string): Promise<StoredStep | undefined> => {
  const events = await store.readStream(stepStreamName(stepId));
  const startedIndex = events.findIndex((event) => event.type === StepEventType.started);
  if (startedIndex < 0) return undefined;
  const started = events[startedIndex]!;
  if (!isStepStartedData(started.data)) throw new Error(`Step ${stepId}: its ${started.type} holds no intent`);
  const segments = intentSegments(stepId, started.data, events);
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
  const abandonedEvent = later.find((event) => event.type === StepEventType.abandoned);
  const finished: Outcome | undefined = later.some((event) => event.type === StepEventType.completed)
    ? { kind: 'completed' }
    : abandonedEvent
      ? { kind: 'abandoned', conflicts: conflictsOf(abandonedEvent) }
      : undefined;
  const { hash: _hash, step: _step, ...metadata } = started.metadata;
  return {
    intent: { stepId, appends: [...byStream.values()] },
    metadata,
    startedRevision: started.revision,
    ...(finished ? { finished } : {}),
  };
};

const intentSegments = (
  stepId: string,
  data: StepStartedData,
  events: readonly RecordedEvent[],
): readonly IntentSegment[] => {
  if (data.parts === 0) return data.segments ?? [];
  const first = BigInt(data.firstPartRevision ?? '0');
  const parts = events.filter(
    (event) =>
      event.type === StepEventType.intentPart && event.revision >= first && event.revision < first + BigInt(data.parts),
  );
  if (parts.length !== data.parts)
    throw new Error(`Step ${stepId}: its intent names ${data.parts} parts, ${parts.length} are stored`);
  return parts.flatMap((part) => {
    const segments = isRecord(part.data) && isSegmentList(part.data.segments) ? part.data.segments : undefined;
    if (!segments) throw new Error(`Step ${stepId}: its intent part ${part.revision} holds no segments`);
    return segments;
  });
};

const conflictsOf = (event: RecordedEvent): readonly string[] =>
  isRecord(event.data) && Array.isArray(event.data.conflicts)
    ? event.data.conflicts.filter((name): name is string => typeof name === 'string')
    : [];

/** Appends every stream of the step at its recorded revision, then records the outcome in the step's stream. */
const complete = async (store: EventStore, step: StoredStep): Promise<Outcome> => {
  const conflicts: string[] = [];
  for (const append of step.intent.appends) {
    try {
      await store.appendToStream(append.streamName, append.events, append.expectedRevision);
    } catch (error) {
      if (!isWrongExpectedRevision(error)) throw error;
      conflicts.push(append.streamName);
    }
  }
  const { stepId } = step.intent;
  const outcome: Outcome = conflicts.length === 0 ? { kind: 'completed' } : { kind: 'abandoned', conflicts };
  const record: NewEvent =
    outcome.kind === 'completed'
      ? { id: derivedId(stepId, 'completed'), type: StepEventType.completed, data: { stepId }, metadata: step.metadata }
      : {
          id: derivedId(stepId, 'abandoned'),
          type: StepEventType.abandoned,
          data: { stepId, reason: 'streams refused the recorded events at the recorded revisions', conflicts },
          metadata: step.metadata,
        };
  try {
    await store.appendToStream(stepStreamName(stepId), [record], step.startedRevision);
  } catch (error) {
    // Another finisher recorded it first.
    if (!isWrongExpectedRevision(error)) throw error;
  }
  return outcome;
};

const closeInJournal = async (
  store: EventStore,
  journal: string,
  stepId: string,
  outcome: Outcome['kind'],
  step: StoredStep | undefined,
): Promise<void> => {
  await store.appendToStream(
    journal,
    [
      {
        id: derivedId(stepId, 'closed'),
        type: StepEventType.closed,
        data: { stepId, outcome },
        metadata: step?.metadata ?? {
          account: 'root',
          requestId: 'finish-steps',
          at: new Date().toISOString(),
          schemaVersion: 1,
        },
      },
    ],
    'any',
  );
};
