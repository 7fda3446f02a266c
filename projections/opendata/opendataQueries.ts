import { didKey, type DidRef } from '../../domain/did/did.ts';
import type { OpenDataState } from '../../domain/opendata/opendata.ts';
import type { ListedFile } from '../../domain/replica/replicaListing.ts';
import { filesBelow, findDid, type FileEntry } from '../did/didQueries.ts';
import { replicaListing } from '../replica/replicaQueries.ts';
import { rulesOfDid } from '../rule/ruleQueries.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { opendataDidsCollection, type OpenDataDidDocument } from './opendataDidsProjection.ts';

/** What the open data routes read. */

const entries = (readModels: ReadModels) => readModels.collection<OpenDataDidDocument>(opendataDidsCollection);

export const findOpenDataDid = (
  readModels: ReadModels,
  scope: string,
  name: string,
): Promise<OpenDataDidDocument | null> => entries(readModels).get(didKey(scope, name));

/** Entries by `updated_at` (then by DID, so pages never overlap), of one state or all, from `offset`. */
export const listOpenDataDids = (
  readModels: ReadModels,
  by: Readonly<{ state?: OpenDataState; limit?: number; offset?: number }>,
): AsyncIterable<OpenDataDidDocument> =>
  // `limit=0` asks for nothing (SQL's LIMIT 0), where the read store takes 0 for no limit.
  entries(readModels).find(by.limit === 0 ? { _id: { $in: [] } } : by.state === undefined ? {} : { state: by.state }, {
    sort: { updated_at: 1, _id: 1 },
    ...(by.offset ? { skip: by.offset } : {}),
    ...(by.limit !== undefined ? { limit: by.limit } : {}),
  });

/** A file of an entry as Rucio's open data lists it: where it can be downloaded from. */
export type OpenDataFile = Readonly<{
  scope: string;
  name: string;
  bytes: number | null;
  adler32: string | null;
  /** The PFNs of its replicas on disk RSEs of the open data expression. */
  uris: readonly string[];
}>;

const PAGE = 500;

/**
 * The files below the entry's DID (Rucio's `list_files`: a file in two datasets comes twice), each
 * with the PFNs of its available disk replicas on the RSEs `rseExpression` selects, a page of
 * files at a time. An invalid expression fails before the first file.
 */
export async function* openDataFiles(
  readModels: ReadModels,
  did: DidRef,
  rseExpression: string,
): AsyncGenerator<OpenDataFile> {
  const document = await findDid(readModels, did.scope, did.name);
  if (!document) return;
  const listUris = async (page: readonly FileEntry[]): Promise<Map<string, string[]>> => {
    const uris = new Map<string, string[]>();
    const listing = await replicaListing(readModels, {
      dids: page.map(({ scope, name }) => ({ scope, name })),
      schemes: undefined,
      domain: undefined,
      clientSite: undefined,
      states: 'available',
      ignoreAvailability: true,
      rseExpression,
      updatedAfter: undefined,
      resolveParents: false,
      resolveArchives: false,
    });
    for await (const listed of listing)
      for (const file of listed) uris.set(didKey(file.scope, file.name), diskPfns(file));
    return uris;
  };
  // The expression is checked (and an invalid one refused) before anything is answered.
  await listUris([]);
  let page: FileEntry[] = [];
  const flush = async function* (): AsyncGenerator<OpenDataFile> {
    const uris = await listUris(page);
    for (const file of page)
      yield {
        scope: file.scope,
        name: file.name,
        bytes: file.bytes,
        adler32: file.adler32,
        uris: uris.get(didKey(file.scope, file.name)) ?? [],
      };
    page = [];
  };
  for await (const file of filesBelow(readModels, document)) {
    page.push(file);
    if (page.length >= PAGE) yield* flush();
  }
  if (page.length > 0) yield* flush();
}

const diskPfns = (file: ListedFile): string[] =>
  Object.entries(file.pfns)
    .filter(([, pfn]) => pfn.type === 'DISK')
    .map(([uri]) => uri);

/**
 * The id of the entry's open data rule, as Rucio finds it: the DID's rule of that account, RSE
 * expression and number of copies; null when there is none or no expression is configured.
 */
export const openDataRuleId = async (
  readModels: ReadModels,
  did: DidRef,
  rule: Readonly<{ rseExpression: string; account: string; copies: number }>,
): Promise<string | null> => {
  if (rule.rseExpression === '') return null;
  for await (const document of rulesOfDid(readModels, did.scope, did.name))
    if (
      document.account === rule.account &&
      document.rse_expression === rule.rseExpression &&
      document.copies === rule.copies
    )
      return document.id;
  return null;
};
