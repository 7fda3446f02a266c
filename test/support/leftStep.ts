import { randomUUID } from 'node:crypto';
import type { EventStore, NewEvent } from '../../infra/eventstore/eventStore.ts';
import { StepEventType, stepStreamName } from '../../infra/eventstore/leftSteps.ts';
import { newEvent, uniqueName } from './events.ts';

/** A multi-stream step as the retired stepped protocol left it, and where to look. */
export type LeftStep = Readonly<{
  stepId: string;
  journal: string;
  /** The streams of the step, each with the events it was to receive (the first two events each). */
  streams: readonly Readonly<{ streamName: string; events: readonly NewEvent[] }>[];
}>;

/**
 * Writes, through `store`, what a writer of the stepped protocol that died inside a step left:
 * the intent in `step-<id>` (every stream at `no_stream` with its events, each marked with the
 * step), `StepOpened` in a journal of the test's own, and the first `appended` streams of the
 * step appended (the others not). As that protocol wrote it: one stream per append.
 */
export const writeLeftStep = async (store: EventStore, appended: number, streamCount = 3): Promise<LeftStep> => {
  const stepId = randomUUID();
  const journal = uniqueName('steps-journal-');
  const streams = Array.from({ length: streamCount }, (_, index) => ({
    streamName: uniqueName(`left-${index}-`),
    events: [newEvent('Registered', { index }), newEvent('Attached', { index })],
  }));
  const count = streams.length * 2;
  const marked = streams.map((stream) => ({
    ...stream,
    events: stream.events.map((event) => ({ ...event, metadata: { ...event.metadata, step: { id: stepId, count } } })),
  }));
  const metadata = newEvent('StepStarted').metadata;
  await store.appendToStream(
    stepStreamName(stepId),
    [
      {
        id: randomUUID(),
        type: StepEventType.started,
        data: {
          stepId,
          count,
          streams: streams.length,
          parts: 0,
          segments: marked.map((stream) => ({
            streamName: stream.streamName,
            expectedRevision: 'no_stream',
            events: stream.events,
          })),
        },
        metadata,
      },
    ],
    'no_stream',
  );
  await store.appendToStream(
    journal,
    [{ id: randomUUID(), type: StepEventType.opened, data: { stepId, count, streams: streams.length }, metadata }],
    'any',
  );
  for (const stream of marked.slice(0, appended))
    await store.appendToStream(stream.streamName, stream.events, 'no_stream');
  return { stepId, journal, streams: marked };
};
