import { didKey, type ContentEntry, type DidEvent, type DidType } from '../../domain/did/did.ts';
import type { CollectionSpec, Filter } from '../../infra/readstore/readStore.ts';
import type { EventsOf, Projected, Projection } from '../projection.ts';

/**
 * The content edges parent → child, current and past. An edge's id starts with the parent's key
 * and a space, so a parent's children are one range of the primary key, in child order
 * (`edgesOf`), and need no index of their own; the `childKey` index answers "who contains this
 * DID". A detached edge moves to the history, whose ids start the same way.
 */
export type ContentDocument = Projected<{
  parentKey: string;
  parentScope: string;
  parentName: string;
  parentType: DidType;
  childKey: string;
  scope: string;
  name: string;
  did_type: DidType;
  bytes: number | null;
  adler32: string | null;
  md5: string | null;
  guid: string | null;
  events: number | null;
  created_at: string;
  updated_at: string;
}>;

export type ContentHistoryDocument = ContentDocument & { deleted_at: string };

export const didContentsCollection: CollectionSpec = {
  name: 'did_contents',
  indexes: [{ fields: ['childKey'] }],
};

export const didContentHistoryCollection: CollectionSpec = {
  name: 'did_content_history',
  indexes: [],
};

/** Names cannot contain spaces, so a space separates parent and child unambiguously. */
export const contentId = (parentKey: string, childKey: string): string => `${parentKey} ${childKey}`;

/**
 * A parent's edges (current or past), after the edge `after` if given: the ids from
 * `<parentKey> ` up to `<parentKey>!` (`!` follows the space), in child order with `EDGE_ORDER`.
 */
export const edgesOf = (parentKey: string, after?: string): Filter => {
  const first = `${parentKey} `;
  return { _id: { $gt: after !== undefined && after > first ? after : first, $lt: `${parentKey}!` } };
};

/** The edges of any of these parents, in no particular order. */
export const edgesOfAny = (parentKeys: readonly string[]): Filter => ({
  $or: parentKeys.map((parentKey) => edgesOf(parentKey)),
});

export const EDGE_ORDER = { _id: 1 } as const;

const edge = (
  parent: { scope: string; name: string; didType: DidType },
  child: ContentEntry,
  at: string,
): ContentDocument => {
  const parentKey = didKey(parent.scope, parent.name);
  const childKey = didKey(child.scope, child.name);
  return {
    _id: contentId(parentKey, childKey),
    parentKey,
    parentScope: parent.scope,
    parentName: parent.name,
    parentType: parent.didType,
    childKey,
    scope: child.scope,
    name: child.name,
    did_type: child.didType,
    bytes: child.bytes,
    adler32: child.adler32,
    md5: child.md5,
    guid: child.guid,
    events: child.events,
    created_at: at,
    updated_at: at,
  };
};

export const didContentsProjection: Projection<
  EventsOf<DidEvent, 'DidsAttached' | 'DidsDetached' | 'DidContentUpdated' | 'DidErased'>
> = {
  name: 'did_contents',
  version: 1,
  collections: [didContentsCollection, didContentHistoryCollection],
  handles: { DidsAttached: true, DidsDetached: true, DidContentUpdated: true, DidErased: true },
  async apply(event, context) {
    const contents = context.collection<ContentDocument>(didContentsCollection);
    switch (event.type) {
      case 'DidsAttached': {
        // The decider attaches only children the parent does not hold: every edge is new.
        for (const child of event.data.children) {
          const document = edge(event.data, child, event.data.attachedAt);
          await contents.create(document._id, document);
        }
        return;
      }
      case 'DidsDetached': {
        const parentKey = didKey(event.data.scope, event.data.name);
        const history = context.collection<ContentHistoryDocument>(didContentHistoryCollection);
        // The position keeps repeated detaches of the same child apart and in order.
        const position = String(context.currentEvent().position).padStart(20, '0');
        for (const child of event.data.children) {
          const childKey = didKey(child.scope, child.name);
          const current = await contents.get(contentId(parentKey, childKey));
          const created = current?.created_at ?? event.data.detachedAt;
          const { _pos: _ignored, ...attached } = current ?? edge(event.data, child, created);
          const historyId = `${parentKey} ${position} ${childKey}`;
          await history.update(historyId, () => ({
            ...attached,
            _id: historyId,
            updated_at: event.data.detachedAt,
            deleted_at: event.data.detachedAt,
          }));
          await contents.update(contentId(parentKey, childKey), () => null);
        }
        return;
      }
      case 'DidContentUpdated': {
        const { child } = event.data;
        await contents.update(
          contentId(didKey(event.data.scope, event.data.name), didKey(child.scope, child.name)),
          (document) =>
            document
              ? { ...document, guid: child.guid, events: child.events, updated_at: event.data.updatedAt }
              : undefined,
        );
        return;
      }
      case 'DidErased': {
        const parentKey = didKey(event.data.scope, event.data.name);
        for (const child of event.data.children)
          await contents.update(contentId(parentKey, didKey(child.scope, child.name)), () => null);
        return;
      }
      default:
        return;
    }
  },
};
