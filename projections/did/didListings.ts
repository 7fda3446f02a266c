import { didKey, type DidType } from '../../domain/did/did.ts';
import { numberOrNull } from '../../domain/shared/narrowing.ts';
import { didContentsCollection, EDGE_ORDER, edgesOf, type ContentDocument } from './didContentsProjection.ts';
import { didsCollection, didsOfScope, type DidDocument } from './didsProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';

/** Rucio's `scope_list`: the tree of a scope, from its top-level DIDs down. */

export type ScopeListingEntry = Readonly<{
  scope: string;
  name: string;
  type: DidType;
  parent: { scope: string; name: string } | null;
  level: number;
  bytes?: number | null;
}>;

const PAGE = 500;

async function* drill(
  readModels: ReadModels,
  parent: { scope: string; name: string },
  level: number,
  recursive: boolean,
): AsyncGenerator<ScopeListingEntry> {
  const contents = readModels.collection<ContentDocument>(didContentsCollection);
  const parentKey = didKey(parent.scope, parent.name);
  for await (const child of contents.find(edgesOf(parentKey), { sort: EDGE_ORDER })) {
    yield {
      scope: child.scope,
      name: child.name,
      type: child.did_type,
      parent: { scope: parent.scope, name: parent.name },
      level: level + 1,
    };
    if (recursive && child.did_type !== 'FILE') yield* drill(readModels, child, level + 1, recursive);
  }
}

/** The content below one DID, `recursive` going all the way down. */
export const listBelow = (
  readModels: ReadModels,
  did: DidDocument,
  recursive: boolean,
): AsyncGenerator<ScopeListingEntry> => drill(readModels, did, 0, recursive);

/**
 * The DIDs of a scope that no DID of the same scope contains, by name, each followed by its tree
 * when `recursive`. Containment is checked a page at a time with one indexed query.
 */
export async function* listScope(
  readModels: ReadModels,
  scope: string,
  recursive: boolean,
): AsyncGenerator<ScopeListingEntry> {
  const contents = readModels.collection<ContentDocument>(didContentsCollection);
  let page: DidDocument[] = [];
  const flush = async function* (): AsyncGenerator<ScopeListingEntry> {
    const contained = new Set<string>();
    for await (const edge of contents.find({ childKey: { $in: page.map((did) => did._id) }, parentScope: scope }))
      contained.add(edge.childKey);
    for (const did of page) {
      if (contained.has(did._id)) continue;
      yield {
        scope,
        name: did.name,
        type: did.did_type,
        parent: null,
        level: 0,
        bytes: did.did_type === 'FILE' ? numberOrNull(did.bytes) : null,
      };
      if (recursive && did.did_type !== 'FILE') yield* drill(readModels, did, 0, true);
    }
    page = [];
  };
  for await (const did of readModels
    .collection<DidDocument>(didsCollection)
    .find(didsOfScope(scope), { sort: { _id: 1 } })) {
    page.push(did);
    if (page.length >= PAGE) yield* flush();
  }
  yield* flush();
}
