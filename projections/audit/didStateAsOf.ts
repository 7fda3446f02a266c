import { didStreamName } from '../../domain/did/did.ts';
import { didStreamDecider } from '../../domain/did/didStreamDecider.ts';
import type { FileReplicas } from '../../domain/replica/replica.ts';
import { ruleStreamName, type Rule } from '../../domain/rule/rule.ts';
import { ruleDecider } from '../../domain/rule/ruleDecider.ts';
import type { Decider } from '../../domain/shared/decider.ts';
import type { Event } from '../../domain/shared/event.ts';
import { upcastEvent, type Upcasters } from '../../domain/shared/upcasting.ts';
import type { EventStore, RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import type { HistoryBound } from './auditQueries.ts';

/**
 * A DID as it was at a past position or time, folded from its events by the deciders the service
 * runs (never from a read model): the DID's stream (its record, metadata, content and, for a file,
 * replicas and their locks) up to that point, then the stream of each rule the DID had then, up to
 * the same point. Stored events are brought to the current shape by the upcasters first.
 *
 * A stream is folded up to its first event past the bound, so with a time bound a stream whose
 * events' times went backwards (clocks of two API processes) stops early rather than skip one.
 * A request's events share its time, so a time bound takes a request's changes whole; a position
 * bound is widened to the whole request of the event at that position (its request id and time),
 * as one decision spans several streams whose events take consecutive positions (a new rule is
 * recorded on its DID just before its own stream starts).
 */
export type DidStateAsOf = Readonly<{
  did: FileReplicas;
  /** The rules the DID had at that point, each as its own stream says it was then. */
  rules: readonly Readonly<{ ruleId: string; rule: Rule }>[];
  /** The newest event folded (of the DID or its rules); undefined when none was. */
  lastEvent: RecordedEvent | undefined;
  /** Whether the DID's stream holds any event at all (at any time). */
  exists: boolean;
}>;

export const didStateAsOf = async (
  eventStore: EventStore,
  upcasters: Upcasters,
  scope: string,
  name: string,
  asOf: HistoryBound | undefined,
): Promise<DidStateAsOf> => {
  const within = await boundOf(eventStore, asOf);
  const events = await eventStore.readStream(didStreamName(scope, name));
  const folded = foldUpTo(didStreamDecider, events, within, upcasters);
  const ruleIds = folded.state.did.status === 'Live' ? [...folded.state.did.rules.keys()] : [];
  let lastEvent = folded.last;
  const rules: { ruleId: string; rule: Rule }[] = [];
  for (const ruleId of ruleIds) {
    const rule = foldUpTo(ruleDecider, await eventStore.readStream(ruleStreamName(ruleId)), within, upcasters);
    rules.push({ ruleId, rule: rule.state });
    if (rule.last && (!lastEvent || rule.last.position > lastEvent.position)) lastEvent = rule.last;
  }
  return { did: folded.state, rules, lastEvent, exists: events.length > 0 };
};

export type Within = (event: RecordedEvent) => boolean;

export const boundOf = async (eventStore: EventStore, asOf: HistoryBound | undefined): Promise<Within> => {
  if (asOf === undefined) return () => true;
  if ('time' in asOf) return (event) => event.metadata.at <= asOf.time;
  const [bounding] = await eventStore.readEventsAt([asOf.position]);
  if (!bounding) return (event) => event.position <= asOf.position;
  const { requestId, at } = bounding.metadata;
  return (event) =>
    event.position <= asOf.position || (event.metadata.requestId === requestId && event.metadata.at === at);
};

export const foldUpTo = <State, E extends Event>(
  decider: Decider<State, never, E>,
  events: readonly RecordedEvent[],
  within: Within,
  upcasters: Upcasters,
): { state: State; last: RecordedEvent | undefined } => {
  let state = decider.initialState();
  let last: RecordedEvent | undefined;
  for (const event of events) {
    if (!within(event)) break;
    state = decider.evolve(
      state,
      upcastEvent<E>(upcasters, { type: event.type, data: event.data, schemaVersion: event.metadata.schemaVersion }),
    );
    last = event;
  }
  return { state, last };
};
