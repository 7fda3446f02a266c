import { didKey, type DidRef } from '../../domain/did/did.ts';
import {
  listedFile,
  listingProtocols,
  pfnsToSign,
  type DomainChoice,
  type FileFacts,
  type ListedFile,
  type ListedReplica,
  type ListingProtocol,
  type ListingRse,
} from '../../domain/replica/replicaListing.ts';
import { evaluateRseExpression } from '../../domain/rse/rseExpression.ts';
import { didContentsCollection, EDGE_ORDER, edgesOf, type ContentDocument } from '../did/didContentsProjection.ts';
import { archivesHolding } from '../did/archiveQueries.ts';
import { ancestorKeys, datasetsBelow } from '../did/didQueries.ts';
import { didsCollection, type DidDocument } from '../did/didsProjection.ts';
import { loadListedRses, type ListedRse } from './listingRses.ts';
import type { Selected } from '../../infra/readstore/readStore.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { BY_FILE, replicaId, replicasCollection, type ReplicaDocument } from './replicaDocuments.ts';

/**
 * Rucio's `list_replicas` over the read models, as a stream: files named directly come first
 * (also without replicas), then the files of every dataset below the named collections, page by
 * page (only those with a matching replica). Each page costs a few indexed queries; RSE facts
 * and protocols are read once per request, so memory stays flat however many files match.
 */

export type ReplicaStates = 'available' | 'unavailable' | 'all';

export type ReplicaListingRequest = Readonly<{
  dids: readonly DidRef[];
  schemes: readonly string[] | undefined;
  /** Explicit domain; undefined means LAN on RSEs of the client's site, WAN elsewhere. */
  domain: DomainChoice | undefined;
  clientSite: string | undefined;
  /** `available` (default), `unavailable` (adds UNAVAILABLE and COPYING), `all`. */
  states: ReplicaStates;
  ignoreAvailability: boolean;
  rseExpression: string | undefined;
  /** ISO time: only replicas updated since. */
  updatedAfter: string | undefined;
  resolveParents: boolean;
  /** Named files that are archive constituents are also listed with their archives' replicas. */
  resolveArchives: boolean;
  /**
   * Signs a PFN of an RSE with a `sign_url` attribute (null: it cannot be, and is left out);
   * absent, nothing is signed (callers who may not sign, as Rucio's non-root ones).
   */
  sign?: PfnSigner;
}>;

export type PfnSigner = (rse: ListingRse, pfn: string) => Promise<string | null>;

const PAGE = 500;
/** The first page of a dataset's files: what a client waits for before its first line. */
const FIRST_PAGE = 32;

const STATES: Readonly<Record<Exclude<ReplicaStates, 'all'>, ReadonlySet<string>>> = {
  available: new Set(['AVAILABLE']),
  unavailable: new Set(['AVAILABLE', 'UNAVAILABLE', 'COPYING']),
};

/**
 * What a listing reads of a replica: indexed fields only, so the read store answers from its
 * index columns without reading the replica documents (a listing reads one per line).
 */
const LISTED_FIELDS = ['didKey', 'rse_id', 'state', 'path', 'updated_at'] as const;
type ListingReplica = Pick<ReplicaDocument, '_id' | (typeof LISTED_FIELDS)[number]>;

/** A selected replica as the listing reads it; every replica document has these fields. */
const listingReplica = (row: Selected<ReplicaDocument, (typeof LISTED_FIELDS)[number]>): ListingReplica | undefined => {
  const { _id, didKey, rse_id, state, path, updated_at } = row;
  return didKey === null || rse_id === null || state === null || updated_at === null
    ? undefined
    : { _id, didKey, rse_id, state, path, updated_at };
};

type Replicas = Map<string, ListingReplica[]>;

/**
 * Prepares a listing (RSE facts, the expression's RSEs: an invalid expression fails here, before
 * any answer is sent) and returns the stream of listed files, in pages, each a fresh array of
 * fresh objects the caller may change.
 */
export const replicaListing = async (
  readModels: ReadModels,
  request: ReplicaListingRequest,
): Promise<AsyncGenerator<ListedFile[]>> => {
  const rses = await loadListedRses(readModels);
  const allowed = request.rseExpression
    ? new Set(
        evaluateRseExpression(
          request.rseExpression,
          [...rses.values()].map((rse) => rse.facts),
        ).map((facts) => facts.id),
      )
    : undefined;
  const states = request.states === 'all' ? undefined : STATES[request.states];
  const accepts = (replica: ListingReplica): boolean => {
    const rse = rses.get(replica.rse_id);
    if (!rse || (!request.ignoreAvailability && !rse.readable)) return false;
    if (allowed && !allowed.has(replica.rse_id)) return false;
    if (request.updatedAfter && replica.updated_at < request.updatedAfter) return false;
    return !states || states.has(replica.state);
  };
  // Archives' replicas are read with `root` besides the asked schemes, so protocols are cached per kind.
  const protocols = new Map<string, ListingProtocol[]>();
  const protocolsOf = (rse: ListedRse, archive: boolean): ListingProtocol[] => {
    const key = `${rse.listing.id} ${archive}`;
    let cached = protocols.get(key);
    if (!cached) {
      const domain =
        request.domain ?? (request.clientSite !== undefined && rse.site === request.clientSite ? 'lan' : 'wan');
      cached = listingProtocols(rse.listing, domain, request.schemes, archive ? ['root'] : []);
      protocols.set(key, cached);
    }
    return cached;
  };
  const rseName = (replica: ListingReplica): string => rses.get(replica.rse_id)!.listing.rse;
  const byRse = (a: ListingReplica, b: ListingReplica) => {
    const [first, second] = [rseName(a), rseName(b)];
    return first < second ? -1 : first > second ? 1 : 0;
  };
  const line: Line = async (file, replicas, archived = []) => {
    const listed: ListedReplica[] = [...replicas].sort(byRse).map((replica) => {
      const rse = rses.get(replica.rse_id)!;
      return { rse: rse.listing, state: replica.state, path: replica.path, protocols: protocolsOf(rse, false) };
    });
    for (const { archive, replica } of archived) {
      const rse = rses.get(replica.rse_id)!;
      listed.push({
        rse: rse.listing,
        state: replica.state,
        path: replica.path,
        protocols: protocolsOf(rse, true),
        archive,
      });
    }
    const toSign = request.sign ? pfnsToSign(file, listed) : [];
    if (toSign.length === 0 || !request.sign) return listedFile(file, listed);
    const sign = request.sign;
    const signed = new Map(await Promise.all(toSign.map(async ({ rse, pfn }) => [pfn, await sign(rse, pfn)] as const)));
    return listedFile(file, listed, (_rse, pfn) => signed.get(pfn) ?? null);
  };
  const replicasOf = async (keys: readonly string[]): Promise<Replicas> => {
    const byFile: Replicas = new Map();
    // A page's replicas are bounded by the page: read at once, not row by row through the cursor.
    for (const row of await readModels
      .collection<ReplicaDocument>(replicasCollection)
      .select({ didKey: { $in: keys } }, LISTED_FIELDS, { sort: BY_FILE })) {
      const replica = listingReplica(row);
      if (!replica || !accepts(replica)) continue;
      const list = byFile.get(replica.didKey);
      if (list) list.push(replica);
      else byFile.set(replica.didKey, [replica]);
    }
    return byFile;
  };
  const archivesOf = async (files: readonly DidDocument[]): Promise<Map<string, ArchivedReplica[]>> => {
    const byFile = new Map<string, ArchivedReplica[]>();
    const constituents = files.filter((file) => file.constituent === true).map((file) => file._id);
    if (!request.resolveArchives || constituents.length === 0) return byFile;
    const holding = await archivesHolding(readModels, constituents);
    const archiveReplicas = await replicasOf([
      ...new Set([...holding.values()].flat().map((archive) => didKey(archive.scope, archive.name))),
    ]);
    for (const [fileKey, archives] of holding) {
      const found = archives.flatMap((archive) =>
        (archiveReplicas.get(didKey(archive.scope, archive.name)) ?? []).map((replica) => ({ archive, replica })),
      );
      if (found.length > 0) byFile.set(fileKey, found);
    }
    return byFile;
  };
  const pages = listFiles(readModels, request.dids, replicasOf, archivesOf, line);
  return request.resolveParents ? withParents(readModels, pages) : pages;
};

/** Flattens pages of a listing into one file at a time (nrandom, metalink, PFN lookups). */
export async function* eachListedFile(pages: AsyncIterable<readonly ListedFile[]>): AsyncGenerator<ListedFile> {
  for await (const page of pages) yield* page;
}

/** One file's replica on one RSE, whatever its state. */
export const findReplica = (
  readModels: ReadModels,
  scope: string,
  name: string,
  rseId: string,
): Promise<ReplicaDocument | null> =>
  readModels.collection<ReplicaDocument>(replicasCollection).get(replicaId(scope, name, rseId));

/** A replica of an archive holding a listed file. */
type ArchivedReplica = Readonly<{ archive: DidRef; replica: ListingReplica }>;

/** Builds one listing line from a file's replicas and those of the archives holding it. */
type Line = (
  file: FileFacts,
  replicas: readonly ListingReplica[],
  archived?: readonly ArchivedReplica[],
) => Promise<ListedFile>;

/** `resolve_parents`: each listed file with the keys of all its ancestors. */
async function* withParents(readModels: ReadModels, pages: AsyncIterable<ListedFile[]>): AsyncGenerator<ListedFile[]> {
  for await (const page of pages) {
    for (const file of page) file.parents = [...(await ancestorKeys(readModels, file.scope, file.name))];
    yield page;
  }
}

/**
 * The listed files in pages of at most PAGE: one page per few indexed queries, so a stream of
 * 100 000 files costs a few hundred asynchronous steps instead of several per file.
 */
async function* listFiles(
  readModels: ReadModels,
  requested: readonly DidRef[],
  replicasOf: (keys: readonly string[]) => Promise<Replicas>,
  archivesOf: (files: readonly DidDocument[]) => Promise<Map<string, ArchivedReplica[]>>,
  line: Line,
): AsyncGenerator<ListedFile[]> {
  const keys = [...new Set(requested.map((did) => didKey(did.scope, did.name)))];
  const dids = readModels.collection<DidDocument>(didsCollection);
  const files: DidDocument[] = [];
  const datasets = new Map<string, number>();
  for (let start = 0; start < keys.length; start += PAGE) {
    const page = keys.slice(start, start + PAGE);
    const found = new Map((await dids.find({ _id: { $in: page } }).toArray()).map((did) => [did._id, did]));
    for (const key of page) {
      const did = found.get(key);
      if (!did) continue;
      if (did.did_type === 'FILE') files.push(did);
      else if (did.did_type === 'DATASET') datasets.set(key, datasets.get(key) ?? datasets.size);
      else
        for (const dataset of await datasetsBelow(readModels, did.scope, did.name))
          datasets.set(dataset, datasets.get(dataset) ?? datasets.size);
    }
  }
  const named = new Set(files.map((file) => file._id));
  for (let start = 0; start < files.length; start += PAGE) {
    const page = files.slice(start, start + PAGE);
    const replicas = await replicasOf(page.map((file) => file._id));
    const archived = await archivesOf(page);
    const lines: ListedFile[] = [];
    for (const file of page) {
      lines.push(
        await line(
          {
            scope: file.scope,
            name: file.name,
            bytes: numberOrNull(file.bytes),
            md5: textOrNull(file.md5),
            adler32: textOrNull(file.adler32),
          },
          replicas.get(file._id) ?? [],
          archived.get(file._id),
        ),
      );
    }
    yield lines;
  }
  for (const [datasetKey, order] of datasets) {
    for await (const page of contentPages(readModels, datasetKey)) {
      const candidates = page.filter((edge) => !named.has(edge.childKey));
      const kept = datasets.size > 1 ? await firstSeenHere(readModels, candidates, datasets, order) : candidates;
      const replicas = await replicasOf(kept.map((edge) => edge.childKey));
      const listed: ListedFile[] = [];
      for (const edge of kept) {
        const found = replicas.get(edge.childKey);
        if (!found) continue;
        // A file's size and checksums never change: its edge holds them as its replicas do.
        listed.push(
          await line(
            { scope: edge.scope, name: edge.name, bytes: edge.bytes, md5: edge.md5, adler32: edge.adler32 },
            found,
          ),
        );
      }
      if (listed.length > 0) yield listed;
    }
  }
}

/**
 * A dataset's file edges in child order, each page one keyset query. The first page is small, so
 * the first lines go out at once; pages then double up to PAGE, where a page's queries cost little
 * beside its rows.
 */
async function* contentPages(readModels: ReadModels, datasetKey: string): AsyncGenerator<ContentDocument[]> {
  const contents = readModels.collection<ContentDocument>(didContentsCollection);
  for (let after: string | undefined, size = FIRST_PAGE; ; size = Math.min(size * 2, PAGE)) {
    const edges = await contents.find(edgesOf(datasetKey, after), { sort: EDGE_ORDER, limit: size }).toArray();
    const files = edges.filter((edge) => edge.did_type === 'FILE');
    if (files.length > 0) yield files;
    if (edges.length < size) return;
    after = edges[edges.length - 1]!._id;
  }
}

/**
 * A file in several of the listed datasets is listed once, with the first of them (in listing
 * order). A count of the page's parent edges tells, without reading them, whether any file of the
 * page has another parent at all; only then are the edges read. No set of listed files is kept.
 */
const firstSeenHere = async (
  readModels: ReadModels,
  page: readonly ContentDocument[],
  datasets: ReadonlyMap<string, number>,
  order: number,
): Promise<ContentDocument[]> => {
  const contents = readModels.collection<ContentDocument>(didContentsCollection);
  const keys = page.map((edge) => edge.childKey);
  if ((await contents.count({ childKey: { $in: keys } })) === keys.length) return [...page];
  const firstOrder = new Map<string, number>();
  for await (const edge of contents.find({ childKey: { $in: keys } })) {
    const parentOrder = datasets.get(edge.parentKey);
    if (parentOrder === undefined) continue;
    firstOrder.set(edge.childKey, Math.min(firstOrder.get(edge.childKey) ?? parentOrder, parentOrder));
  }
  return page.filter((edge) => firstOrder.get(edge.childKey) === order);
};

const numberOrNull = (value: unknown): number | null => (typeof value === 'number' ? value : null);
const textOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);
