import type { RecordedEvent } from '../infra/eventstore/eventStore.ts';
import type { CollectionSpec, Document } from '../infra/readstore/readStore.ts';
import type { ProjectionContext } from './runtime/projectionContext.ts';

/**
 * A projection is data: its name, version, the collections it owns, the event types it handles
 * and how an event changes documents. Bump `version` whenever `apply` or the collections change
 * shape: the runner then builds the new version beside the old one from the start of `$all`.
 *
 * Every document a projection writes keeps `_pos`, the global position of the last event applied
 * to it, so a replayed or duplicated event changes nothing (projectionContext.ts).
 */
export type Projection = Readonly<{
  name: string;
  version: number;
  /** Logical collection specs; the runner stores them under generation-suffixed names. */
  collections: readonly CollectionSpec[];
  handles: readonly string[];
  apply(event: RecordedEvent, context: ProjectionContext): Promise<void>;
}>;

/** A projected document: the read model's fields plus the position guard. */
export type Projected<T extends object = object> = Document & T & { _pos?: number };

/**
 * The common case as data: one document per event, found by `documentId`, evolved by a pure
 * function. `evolve` returns the new document, `null` to delete it, or `undefined` to leave it.
 * Events listed in `creates` bring their document into being: it is written without reading the
 * store first (`evolve` gets null).
 */
export const documentProjection = <T extends Projected>(definition: {
  name: string;
  version: number;
  collection: CollectionSpec;
  handles: readonly string[];
  creates?: readonly string[];
  documentId(event: RecordedEvent): string;
  evolve(document: T | null, event: RecordedEvent): T | null | undefined;
}): Projection => {
  const creates = new Set(definition.creates ?? []);
  return {
    name: definition.name,
    version: definition.version,
    collections: [definition.collection],
    handles: definition.handles,
    async apply(event, context) {
      const collection = context.collection<T>(definition.collection);
      const id = definition.documentId(event);
      if (creates.has(event.type)) {
        const document = definition.evolve(null, event);
        if (document) await collection.create(id, document);
        return;
      }
      await collection.update(id, (document) => definition.evolve(document, event));
    },
  };
};
