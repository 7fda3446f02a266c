import { deterministicUuid } from './eventIds.ts';
import { isRecord } from '../typeGuards.ts';
import {
  EventIdConflictError,
  isEventMetadata,
  type AppendResult,
  type EventMetadata,
  type ExpectedRevision,
  type NewEvent,
  type StreamAppend,
} from './eventStore.ts';

/**
 * A step's intent and the shapes SteppedEventStore records it in (steppedEventStore.ts): the
 * stream names, event types and data of `step-<id>` and the journal, and the pure functions that
 * make an intent from an append, cut it into parts and check an append against it.
 */

export const STEP_JOURNAL_STREAM = 'steps-journal';
export const stepStreamName = (stepId: string): string => `step-${stepId}`;

/** Event types this store writes in `step-<id>` streams and in the journal. */
export const StepEventType = {
  /** The intent (stream `step-<id>`): every append of the step, or the number of parts holding them. */
  started: 'StepStarted',
  /** A piece of a large intent, written before its `StepStarted`. */
  intentPart: 'StepIntentPart',
  /** Every stream of the step holds its events. */
  completed: 'StepCompleted',
  /** A stream of the step refused its events (another writer came in): the step stays partial. */
  abandoned: 'StepAbandoned',
  /** Journal (`steps-journal`): a step was started. */
  opened: 'StepOpened',
  /** Journal: a step was completed or abandoned. */
  closed: 'StepClosed',
} as const;

export type StepStartedData = Readonly<{
  stepId: string;
  /** Events of the step in all its streams (what `metadata.step.count` says). */
  count: number;
  /** Streams the step appends to. */
  streams: number;
  /** 0: `segments` holds the appends; otherwise that many `StepIntentPart` events from `firstPartRevision`. */
  parts: number;
  firstPartRevision?: string;
  segments?: readonly IntentSegment[];
}>;

export type StepAbandonedData = Readonly<{ stepId: string; reason: string; conflicts: readonly string[] }>;

/** Some events of one stream of an intent; a stream's events may be split over several parts. */
export type IntentSegment = Readonly<{ streamName: string; expectedRevision: string; events: readonly NewEvent[] }>;

/*
 * The step records read back (a `StepStarted`, its parts, the journal) are checked as far as a
 * recovery relies on them: these stores wrote them, but a step resumed from a wrong shape would
 * append wrong events, so a record that is not one is refused rather than replayed.
 */

export const isStepStartedData = (value: unknown): value is StepStartedData =>
  isRecord(value) &&
  typeof value.stepId === 'string' &&
  typeof value.count === 'number' &&
  typeof value.streams === 'number' &&
  typeof value.parts === 'number' &&
  (value.firstPartRevision === undefined || typeof value.firstPartRevision === 'string') &&
  (value.segments === undefined || isSegmentList(value.segments));

/** The segments of a `StepIntentPart`'s data, or undefined when it holds none. */
export const intentPartSegments = (data: unknown): readonly IntentSegment[] | undefined =>
  isRecord(data) && isSegmentList(data.segments) ? data.segments : undefined;

/** The step a journal event (`StepOpened`, `StepClosed`) names. */
export const journalStepId = (data: unknown): string | undefined =>
  isRecord(data) && typeof data.stepId === 'string' ? data.stepId : undefined;

const isSegmentList = (value: unknown): value is readonly IntentSegment[] =>
  Array.isArray(value) && value.every(isIntentSegment);

const isIntentSegment = (value: unknown): value is IntentSegment =>
  isRecord(value) &&
  typeof value.streamName === 'string' &&
  typeof value.expectedRevision === 'string' &&
  Array.isArray(value.events) &&
  value.events.every(isNewEvent);

const isNewEvent = (value: unknown): value is NewEvent =>
  isRecord(value) &&
  typeof value.id === 'string' &&
  typeof value.type === 'string' &&
  'data' in value &&
  isEventMetadata(value.metadata);

export type IntentAppend = { streamName: string; expectedRevision: bigint | 'no_stream'; events: NewEvent[] };

export type Intent = Readonly<{ stepId: string; count: number; appends: readonly IntentAppend[] }>;

/**
 * The step id of a multi-stream append, derived from its first event id: the same append made
 * again (a retried job with derived event ids) finds the step its first attempt started.
 */
export const stepIdOf = (appends: readonly StreamAppend[]): string => {
  const first = appends.find((append) => append.events.length > 0)?.events[0];
  if (!first) throw new Error('A step appends at least one event');
  return deterministicUuid(`dms-step:${first.id}`);
};

export const derivedId = (stepId: string, role: string): string => deterministicUuid(`dms-step:${stepId}:${role}`);

/** The intent: exact revisions, and every event marked with the step (one metadata object per original one). */
export const intentOf = (
  stepId: string,
  appends: readonly StreamAppend[],
  heads: readonly (bigint | 'no_stream')[],
): Intent => {
  const count = appends.reduce((total, append) => total + append.events.length, 0);
  const step = { id: stepId, count };
  const marked = new Map<EventMetadata, EventMetadata>();
  const mark = (metadata: EventMetadata): EventMetadata => {
    let result = marked.get(metadata);
    if (!result) marked.set(metadata, (result = { ...metadata, step }));
    return result;
  };
  return {
    stepId,
    count,
    appends: appends
      .map((append, index) => ({ append, head: heads[index]! }))
      .filter(({ append }) => append.events.length > 0)
      .map(({ append, head }) => ({
        streamName: append.streamName,
        expectedRevision: head,
        events: append.events.map((event) => ({
          id: event.id,
          type: event.type,
          data: event.data,
          metadata: mark(event.metadata),
        })),
      })),
  };
};

/** The metadata of the step's own events: the acting account and request of its first event. */
export const stepMetadata = (intent: Intent): EventMetadata => {
  const { step: _step, ...metadata } = intent.appends[0]!.events[0]!.metadata;
  return metadata;
};

/** The intent's appends in chunks of at most `maxBytes` of JSON (at least one event each). */
export const segmentsOf = (intent: Intent, maxBytes: number): IntentSegment[][] => {
  const chunks: IntentSegment[][] = [];
  let chunk: { streamName: string; expectedRevision: string; events: NewEvent[] }[] = [];
  let size = 0;
  for (const append of intent.appends) {
    let segment: (typeof chunk)[number] | undefined;
    for (const event of append.events) {
      const eventSize = Buffer.byteLength(JSON.stringify(event)) + 1;
      if (size > 0 && size + eventSize > maxBytes) {
        chunks.push(chunk);
        chunk = [];
        size = 0;
        segment = undefined;
      }
      if (!segment) {
        segment = { streamName: append.streamName, expectedRevision: String(append.expectedRevision), events: [] };
        chunk.push(segment);
        size += append.streamName.length + 64;
      }
      segment.events.push(event);
      size += eventSize;
    }
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
};

export const assertSameEvents = (intent: Intent, appends: readonly StreamAppend[]): void => {
  const recorded = new Map(intent.appends.map((append) => [append.streamName, append.events.map((event) => event.id)]));
  const writing = appends.filter((append) => append.events.length > 0);
  for (const append of writing) {
    const ids = recorded.get(append.streamName);
    const same =
      ids !== undefined &&
      ids.length === append.events.length &&
      ids.every((id, index) => id === append.events[index]!.id);
    if (!same) throw new EventIdConflictError(append.streamName, append.events[0]!.id);
  }
  if (writing.length !== intent.appends.length)
    throw new EventIdConflictError(writing[0]!.streamName, writing[0]!.events[0]!.id);
};

export const revisionMatches = (expected: ExpectedRevision, head: bigint | 'no_stream'): boolean =>
  expected === 'any' ||
  (expected === 'no_stream' && head === 'no_stream') ||
  (expected === 'stream_exists' && head !== 'no_stream') ||
  (typeof expected === 'bigint' && head === expected);

export const checkOnlyResult = (streamName: string, head: bigint | 'no_stream'): AppendResult => ({
  streamName,
  nextExpectedRevision: head === 'no_stream' ? -1n : head,
  position: 0n,
});

export const nextRevision = (revision: bigint | 'no_stream'): bigint => (revision === 'no_stream' ? 0n : revision + 1n);

export const parseRevision = (text: string): bigint | 'no_stream' =>
  text === 'no_stream' ? 'no_stream' : BigInt(text);
