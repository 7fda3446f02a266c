import type { ChildFacts } from '../../domain/did/didContent.ts';
import { didKey, type ContentTotals, type DidRef, type DidType } from '../../domain/did/did.ts';
import { numberOrNull, textOrNull } from '../../domain/shared/narrowing.ts';
import {
  didContentHistoryCollection,
  didContentsCollection,
  EDGE_ORDER,
  edgesOf,
  edgesOfAny,
  type ContentDocument,
  type ContentHistoryDocument,
} from './didContentsProjection.ts';
import { didFollowersCollection, type FollowerDocument } from './didFollowersProjection.ts';
import { didsCollection, type DidDocument } from './didsProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';

/**
 * DIDs as the read models hold them: lookups, a DID's content, parents, history and followers,
 * and walks over the graph (ancestors, the datasets below a container, the files below any DID).
 * Each step is one indexed query per level (or per collection), never a scan; lists stream from
 * cursors.
 */

/** The copy of a file a listing shows: from its dataset's content, or the file itself. */
export type FileEntry = Readonly<{
  scope: string;
  name: string;
  bytes: number | null;
  adler32: string | null;
  guid: string | null;
  events: number | null;
}>;

const contents = (readModels: ReadModels) => readModels.collection<ContentDocument>(didContentsCollection);

/** Parents whose edges one query reads: each is a range of the primary key, ORed. */
const FRONTIER_PAGE = 200;
const dids = (readModels: ReadModels) => readModels.collection<DidDocument>(didsCollection);

export const findDid = (readModels: ReadModels, scope: string, name: string): Promise<DidDocument | null> =>
  dids(readModels).get(didKey(scope, name));

export const findDidByKey = (readModels: ReadModels, key: string): Promise<DidDocument | null> =>
  dids(readModels).get(key);

/** The DIDs that exist among those named, each once, in store order. */
export const didsNamed = (readModels: ReadModels, refs: readonly DidRef[]): Promise<DidDocument[]> =>
  dids(readModels)
    .find({ _id: { $in: [...new Set(refs.map((ref) => didKey(ref.scope, ref.name)))] } })
    .toArray();

/** DIDs flagged new, of one type or any; at most 1000, the one chunk Rucio hands out per call. */
export const newDids = (readModels: ReadModels, didType: DidType | undefined): AsyncIterable<DidDocument> =>
  dids(readModels).find({ is_new: true, ...(didType ? { did_type: didType } : {}) }, { limit: 1000 });

/**
 * Datasets and containers still flagged new that were created before `before`: what the
 * transmogrifier has not taken yet (the reconciler gives them their job again); at most `limit`.
 */
export const newDidsCreatedBefore = (readModels: ReadModels, before: string, limit: number): Promise<DidDocument[]> =>
  dids(readModels)
    .find({ is_new: true, did_type: { $in: ['DATASET', 'CONTAINER'] }, created_at: { $lt: before } }, { limit })
    .toArray();

/** The files carrying a GUID (a file's, but nothing stops two files from sharing one). */
export const filesWithGuid = (readModels: ReadModels, guid: string): Promise<DidDocument[]> =>
  dids(readModels).find({ guid, did_type: 'FILE' }).toArray();

/** A collection's content edges, by child. */
export const contentOf = (readModels: ReadModels, scope: string, name: string): AsyncIterable<ContentDocument> =>
  contents(readModels).find(edgesOf(didKey(scope, name)), { sort: EDGE_ORDER });

/** The edges detached from a collection, in the order they were detached. */
export const contentHistoryOf = (
  readModels: ReadModels,
  scope: string,
  name: string,
): AsyncIterable<ContentHistoryDocument> =>
  readModels
    .collection<ContentHistoryDocument>(didContentHistoryCollection)
    .find(edgesOf(didKey(scope, name)), { sort: EDGE_ORDER });

/** The edges to a DID's parents, by parent. */
export const listParents = (readModels: ReadModels, scope: string, name: string): AsyncIterable<ContentDocument> =>
  contents(readModels).find({ childKey: didKey(scope, name) }, { sort: { _id: 1 } });

/** The edges to the parents of each DID in turn, each DID's in store order. */
export async function* parentsOfEach(
  readModels: ReadModels,
  children: readonly DidDocument[],
): AsyncGenerator<ContentDocument> {
  for (const child of children) yield* contents(readModels).find({ childKey: child._id });
}

/** The accounts following a DID, by account. */
export const followersOf = (readModels: ReadModels, scope: string, name: string): AsyncIterable<FollowerDocument> =>
  readModels
    .collection<FollowerDocument>(didFollowersCollection)
    .find({ didKey: didKey(scope, name) }, { sort: { didKey: 1, _id: 1 } });

export const parentsOf = async (readModels: ReadModels, scope: string, name: string): Promise<ContentDocument[]> =>
  contents(readModels)
    .find({ childKey: didKey(scope, name) }, { sort: { _id: 1 } })
    .toArray();

/** The direct parents of each DID by `scope:name`, 500 children per query. */
export const parentsOfMany = async (
  readModels: ReadModels,
  dids: readonly DidRef[],
): Promise<Map<string, DidRef[]>> => {
  const keys = [...new Set(dids.map((did) => didKey(did.scope, did.name)))];
  const parents = new Map<string, DidRef[]>();
  for (let start = 0; start < keys.length; start += 500) {
    for await (const edge of contents(readModels).find({ childKey: { $in: keys.slice(start, start + 500) } })) {
      parents.set(edge.childKey, [
        ...(parents.get(edge.childKey) ?? []),
        { scope: edge.parentScope, name: edge.parentName },
      ]);
    }
  }
  return parents;
};

/**
 * Every ancestor's key, nearest level first, up to `maxLevels` levels (default all). A DID graph
 * has no cycles, but the visited set guards anyway.
 */
export const ancestorKeys = async (
  readModels: ReadModels,
  scope: string,
  name: string,
  maxLevels = Number.POSITIVE_INFINITY,
): Promise<Set<string>> => {
  const found = new Set<string>();
  let frontier = [didKey(scope, name)];
  for (let level = 0; frontier.length > 0 && level < maxLevels; level += 1) {
    const next: string[] = [];
    for await (const edge of contents(readModels).find({ childKey: { $in: frontier } })) {
      if (found.has(edge.parentKey)) continue;
      found.add(edge.parentKey);
      next.push(edge.parentKey);
    }
    frontier = next;
  }
  return found;
};

/** The distinct datasets below a container, found through its containers only. */
export const datasetsBelow = async (readModels: ReadModels, scope: string, name: string): Promise<Set<string>> => {
  const datasets = new Set<string>();
  const visited = new Set<string>([didKey(scope, name)]);
  let frontier = [didKey(scope, name)];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (let start = 0; start < frontier.length; start += FRONTIER_PAGE) {
      for await (const edge of contents(readModels).find(edgesOfAny(frontier.slice(start, start + FRONTIER_PAGE)))) {
        if (edge.did_type === 'DATASET') datasets.add(edge.childKey);
        else if (edge.did_type === 'CONTAINER' && !visited.has(edge.childKey)) {
          visited.add(edge.childKey);
          next.push(edge.childKey);
        }
      }
    }
    frontier = next;
  }
  return datasets;
};

/** What attaching needs to know of existing DIDs, fetched 500 keys per query. */
export const catalogueFacts = async (
  readModels: ReadModels,
  refs: readonly DidRef[],
): Promise<Map<string, ChildFacts>> => {
  const facts = new Map<string, ChildFacts>();
  const keys = [...new Set(refs.map((ref) => didKey(ref.scope, ref.name)))];
  for (let start = 0; start < keys.length; start += 500) {
    for await (const did of dids(readModels).find({ _id: { $in: keys.slice(start, start + 500) } })) {
      facts.set(did._id, {
        didType: did.did_type,
        availability: did.availability,
        bytes: numberOrNull(did.bytes),
        adler32: textOrNull(did.adler32),
        md5: textOrNull(did.md5),
        guid: textOrNull(did.guid),
        events: numberOrNull(did.events),
        isArchive: did.is_archive === true,
      });
    }
  }
  return facts;
};

/** Sums the stored totals of the given datasets (a dataset's totals are the counts of its files). */
export const sumDatasetTotals = async (readModels: ReadModels, keys: ReadonlySet<string>): Promise<ContentTotals> => {
  let length = 0;
  let bytes = 0;
  let events = 0;
  const all = [...keys];
  for (let start = 0; start < all.length; start += 500) {
    for await (const dataset of dids(readModels).find({ _id: { $in: all.slice(start, start + 500) } })) {
      length += Number(dataset.length ?? 0);
      bytes += Number(dataset.bytes ?? 0);
      events += Number(dataset.events ?? 0);
    }
  }
  return { length, bytes, events };
};

/**
 * The files below a DID, depth first with a stack as Rucio's `list_files` goes (a file in two
 * datasets comes twice); a file yields itself.
 */
export async function* filesBelow(readModels: ReadModels, did: DidDocument): AsyncGenerator<FileEntry> {
  if (did.did_type === 'FILE') {
    yield fileEntry(did);
    return;
  }
  const stack: DidRef[] = [{ scope: did.scope, name: did.name }];
  const types = new Map<string, string>([[did._id, did.did_type]]);
  while (stack.length > 0) {
    const current = stack.pop()!;
    const key = didKey(current.scope, current.name);
    const children = contents(readModels).find(edgesOf(key), { sort: EDGE_ORDER });
    if (types.get(key) === 'DATASET') {
      for await (const child of children) if (child.did_type === 'FILE') yield fileEntry(child);
      continue;
    }
    for await (const child of children) {
      types.set(child.childKey, child.did_type);
      stack.push({ scope: child.scope, name: child.name });
    }
  }
}

const fileEntry = (document: {
  scope: string;
  name: string;
  bytes?: unknown;
  adler32?: unknown;
  guid?: unknown;
  events?: unknown;
}): FileEntry => ({
  scope: document.scope,
  name: document.name,
  bytes: numberOrNull(document.bytes),
  adler32: textOrNull(document.adler32),
  guid: textOrNull(document.guid),
  events: numberOrNull(document.events),
});

/**
 * Rucio's `dynamic_depth` sizes: a dataset counts its files; a container sums the datasets below
 * it (depth DATASET uses their stored values, depth FILE their files, which here are the same);
 * a file is one file. Other combinations give the stored values.
 */
export const dynamicTotals = async (
  readModels: ReadModels,
  did: DidDocument,
  depth: 'FILE' | 'DATASET',
): Promise<ContentTotals> => {
  if (did.did_type === 'FILE') return { length: 1, bytes: Number(did.bytes ?? 0), events: Number(did.events ?? 0) };
  if (did.did_type === 'DATASET' && depth === 'FILE') {
    return { length: Number(did.length ?? 0), bytes: Number(did.bytes ?? 0), events: Number(did.events ?? 0) };
  }
  if (did.did_type === 'CONTAINER')
    return sumDatasetTotals(readModels, await datasetsBelow(readModels, did.scope, did.name));
  return { length: Number(did.length ?? 0), bytes: Number(did.bytes ?? 0), events: Number(did.events ?? 0) };
};

/** DIDs whose expiry has passed at `now`, soonest expired first (the undertaker's candidates). */
export const expiredDids = async (
  readModels: ReadModels,
  now: string,
  limit: number,
): Promise<{ scope: string; name: string; expiredAt: string }[]> => {
  const documents = await readModels
    .collection<DidDocument>(didsCollection)
    .find({ expired_at: { $lt: now } }, { sort: { expired_at: 1 }, limit })
    .toArray();
  return documents.map((document) => ({
    scope: document.scope,
    name: document.name,
    expiredAt: String(document.expired_at),
  }));
};
