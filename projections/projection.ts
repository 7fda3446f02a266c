import type { Event } from '../domain/shared/event.ts';
import { upcastEvent, type Upcasters } from '../domain/shared/upcasting.ts';
import { eventUpcasters } from '../domain/areas.ts';
import type { RecordedEvent } from '../infra/eventstore/eventStore.ts';
import type { CollectionSpec, Document } from '../infra/readstore/readStore.ts';
import type { ProjectionContext } from './runtime/projectionContext.ts';

/**
 * A projection is data: its name, version, the collections it owns, the events it handles and how
 * an event changes documents. Bump `version` whenever `apply` or the collections change shape:
 * the runner then builds the new version beside the old one from the start of `$all`.
 *
 * A projection is typed by the union of the events it handles: `handles` names every type of that
 * union (a record keyed by the union's types, so leaving one out does not compile) and `apply`
 * gets the event already narrowed to the union. The one narrowing from a stored event to a typed
 * one happens in the runtime, after it checked the type is handled (`asHandled`).
 *
 * Every document a projection writes keeps `_pos`, the global position of the last event applied
 * to it, so a replayed or duplicated event changes nothing (runtime/projectionContext.ts); the
 * event's envelope (position, metadata, stream) is `context.currentEvent()`.
 */
export type Projection<E extends Event = Event> = Readonly<{
  name: string;
  version: number;
  /** Logical collection specs; the runner stores them under generation-suffixed names. */
  collections: readonly CollectionSpec[];
  handles: HandledTypes<E>;
  apply(event: E, context: ProjectionContext): Promise<void>;
}>;

/** Every type of the union, each once: what a projection of that union handles. */
export type HandledTypes<E extends Event> = Readonly<Record<E['type'], true>>;

/** The members of an event union with the given types (a projection handling part of a union). */
export type EventsOf<E extends Event, T extends E['type']> = Extract<E, { type: T }>;

/** What a projection may read of a stored event besides its type and data. */
export type EventEnvelope = Pick<RecordedEvent, 'streamName' | 'revision' | 'position' | 'metadata'>;

/**
 * Projections of different unions listed together (the runner only looks at `handles`): a
 * projection of a union is one of `Event`, its `apply` taking the events its `handles` names.
 */
export type AnyProjection = Projection<Event>;

/** The handled types as a set, for the runtime's check. */
export const handledTypes = (projection: AnyProjection): ReadonlySet<string> =>
  new Set(Object.keys(projection.handles));

/**
 * A stored event as the typed event a projection handles, its data brought to the current shape
 * of its type by the upcasters (`eventUpcasters` of domain/areas.ts unless told). The runtime calls this only for
 * event types the projection's `handles` names, which is what makes the narrowing sound.
 */
export const asHandled = <E extends Event>(recorded: RecordedEvent, upcasters: Upcasters = eventUpcasters): E =>
  upcastEvent<E>(upcasters, {
    type: recorded.type,
    data: recorded.data,
    schemaVersion: recorded.metadata?.schemaVersion,
  });

/** A projected document: the read model's fields plus the position guard. */
export type Projected<T extends object = object> = Document & T & { _pos?: number };

/**
 * The common case as data: one document per event, found by `documentId`, evolved by a pure
 * function. `evolve` returns the new document, `null` to delete it, or `undefined` to leave it.
 * Events listed in `creates` bring their document into being: it is written without reading the
 * store first (`evolve` gets null). Both functions get the event narrowed to the handled union and
 * its envelope (position, metadata, stream) apart.
 */
export const documentProjection = <T extends Projected, E extends Event>(definition: {
  name: string;
  version: number;
  collection: CollectionSpec;
  handles: HandledTypes<E>;
  creates?: readonly E['type'][];
  documentId(event: E, envelope: EventEnvelope): string;
  evolve(document: T | null, event: E, envelope: EventEnvelope): T | null | undefined;
}): Projection<E> => {
  const creates = new Set<string>(definition.creates ?? []);
  return {
    name: definition.name,
    version: definition.version,
    collections: [definition.collection],
    handles: definition.handles,
    async apply(event, context) {
      const envelope: EventEnvelope = context.currentEvent();
      const collection = context.collection<T>(definition.collection);
      const id = definition.documentId(event, envelope);
      if (creates.has(event.type)) {
        const document = definition.evolve(null, event, envelope);
        if (document) await collection.create(id, document);
        return;
      }
      await collection.update(id, (document) => definition.evolve(document, event, envelope));
    },
  };
};
