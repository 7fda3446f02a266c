import { randomInt } from 'node:crypto';
import type { ListedFile } from '../../../domain/replica/replicaListing.ts';
import { checkSortingAlgorithm, orderedPfns, type Coordinates } from '../../../domain/replica/replicaSorting.ts';
import type { ListedRse } from '../../../projections/replica/listingRses.ts';
import { DataIdentifierNotFound, InvalidObject } from '../../../domain/shared/errors.ts';
import { configSetting } from '../../../projections/config/configQueries.ts';
import { findDid } from '../../../projections/did/didQueries.ts';
import { loadListedRses } from '../../../projections/replica/listingRses.ts';
import {
  eachListedFile,
  replicaListing,
  type ReplicaListingRequest,
} from '../../../projections/replica/replicaQueries.ts';
import { scopeNamePath } from '../did/didParams.ts';
import { mapStream, NDJSON_TYPE, sendChunks, sendStream } from '../../http.ts';
import { jsonObjectBodyOf, pathOf, queryOf, queryText } from '../../params.ts';
import { pfnLimitQuery, REPLICA_LISTING, REPLICA_LISTING_KEYS } from './replicaListParams.ts';
import { metalinkDocument, METALINK_TYPE, SUPPORTED_PROTOCOLS } from './replicaRendering.ts';
import { clientCoordinates, pfnCoordinates } from './locations.ts';
import { defaultSignatureLifetime, listingSigner, maySign } from '../credential/signing.ts';
import type { HandlerFor, RouteOptions, RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
import { SETTINGS } from '../../../domain/config/settings.ts';

const LISTING_TYPES = [NDJSON_TYPE, METALINK_TYPE];

/** NDJSON unless the Accept header prefers the metalink (Flask's `best_match`, NDJSON by default). */
const wantsMetalink = (ctx: AppContext): boolean =>
  ctx.get('Accept') !== '' && ctx.accepts(...LISTING_TYPES) === METALINK_TYPE;

/** Uniform in [0, 1) from the crypto source: PFN shuffles and `nrandom` draws. */
export const random = (): number => randomInt(0, 2 ** 47) / 2 ** 47;

/** `nrandom`: n files drawn uniformly from the stream (reservoir sampling); the rest are read, not kept. */
async function* pickRandom<T>(source: AsyncIterable<T>, count: number): AsyncGenerator<T> {
  const chosen: T[] = [];
  let seen = 0;
  for await (const item of source) {
    seen += 1;
    if (chosen.length < count) chosen.push(item);
    else {
      const slot = Math.floor(random() * seen);
      if (slot < count) chosen[slot] = item;
    }
  }
  yield* chosen;
}

type Presentation = Readonly<{
  algorithm: string | undefined;
  client: Coordinates;
  lanFirst: boolean;
  limit: number | undefined;
}>;

/** Streams the listing as NDJSON or metalink, each file's PFNs in the order the client gets them. */
const sendListing = async (
  ctx: AppContext,
  services: Services,
  request: ReplicaListingRequest,
  presentation: Presentation,
  options: {
    metalink: boolean;
    nrandom: number | undefined;
    policySchema: string;
    detailedUrl: boolean;
    /** Signs the https PFNs of RSEs with `sign_url` for this many seconds (root only). */
    signatureLifetime?: number;
  },
): Promise<void> => {
  checkSortingAlgorithm(presentation.algorithm);
  const rses = await loadListedRses(services.readModels);
  const pages = await replicaListing(services.readModels, {
    ...request,
    ...(options.signatureLifetime === undefined
      ? {}
      : { sign: listingSigner(ctx, services, rses, options.signatureLifetime) }),
  });
  const present = presenter(services, rses, presentation);
  if (options.metalink || options.nrandom) {
    let files: AsyncIterable<ListedFile> = eachListedFile(pages);
    if (options.nrandom) files = pickRandom(files, options.nrandom);
    const ordered = mapStream(files, present);
    if (options.metalink)
      await sendChunks(ctx, metalinkDocument(ordered, options.policySchema, options.detailedUrl), METALINK_TYPE);
    else await sendStream(ctx, ordered);
    return;
  }
  // The common case: one chunk of NDJSON per page of files.
  await sendChunks(
    ctx,
    mapStream(pages, (page) => {
      let chunk = '';
      for (const file of page) chunk += `${JSON.stringify(present(file))}\n`;
      return chunk;
    }),
    NDJSON_TYPE,
  );
};

/** Puts each listed file's PFNs in the order the client gets them, numbered, at most `limit`. */
export const presenter = (
  services: Services,
  rses: ReadonlyMap<string, ListedRse>,
  presentation: Presentation,
): ((file: ListedFile) => ListedFile) => {
  const order = { ...presentation, random, pfnCoordinates: pfnCoordinates(services, rses) };
  // Each file is a fresh object of this request: reordering its PFNs in place copies nothing.
  return (file) => {
    file.pfns = orderedPfns(file, order);
    return file;
  };
};

/** POST /replicas/list, the main listing: many DIDs, every option; Rucio answers its errors here with 400. */
export const registerReplicaListRoute = (routes: RouteTable, services: Services): void => {
  const options = {
    accept: LISTING_TYPES,
    errors: { DataIdentifierNotFound: 400, SortingAlgorithmNotSupported: 400 },
    summary: 'The replicas of DIDs (of the files below collections) with their PFNs, as NDJSON or a metalink document.',
    body: jsonObjectBodyOf(REPLICA_LISTING, {
      documentedBy: REPLICA_LISTING_KEYS,
      description:
        '`dids`: `{scope, name}` each; `schemes`, `domain`, `client_location`, `all_states`, `unavailable`, `ignore_availability`, `rse_expression`, `updated_after`, `resolve_parents`, `resolve_archives`, `signature_lifetime`, `sort`, `limit`, `nrandom`.',
    }),
    query: queryOf({
      sort: queryText().describe('A sorting algorithm (geoip, closeness, random, ...).'),
      select: queryText().describe('The same as sort.'),
      limit: pfnLimitQuery({ emptyIsNone: false }).describe('At most this many PFNs per file.'),
    }),
    raises: [InvalidObject],
  } satisfies RouteOptions;
  const list: HandlerFor<typeof options> = async (ctx, { body: parameters, query }) => {
    const location = parameters.client_location;
    const metalink = wantsMetalink(ctx);
    const limit = query.limit;
    const nrandom = parameters.nrandom;
    const request: ReplicaListingRequest = {
      dids: parameters.dids ?? [],
      schemes: parameters.schemes ?? (metalink ? SUPPORTED_PROTOCOLS : undefined),
      domain: parameters.domain ?? undefined,
      clientSite: typeof location.site === 'string' ? location.site : undefined,
      states: parameters.all_states ? 'all' : parameters.unavailable ? 'unavailable' : 'available',
      ignoreAvailability: parameters.ignore_availability,
      rseExpression: parameters.rse_expression,
      updatedAfter: parameters.updated_after ?? undefined,
      resolveParents: parameters.resolve_parents,
      resolveArchives: parameters.resolve_archives,
    };
    // Rucio signs for callers allowed to (root), for the lifetime asked or the configured one.
    const signatureLifetime = maySign(ctx)
      ? (parameters.signature_lifetime() ?? (await defaultSignatureLifetime(services)))
      : undefined;
    const policySchema = await configSetting(services.readModels, SETTINGS.policySchema);
    await sendListing(
      ctx,
      services,
      request,
      {
        algorithm: query.sort ?? query.select ?? parameters.sort,
        // The client's address, not an `ip` it names: as Rucio, which overwrites `client_location.ip`.
        client: clientCoordinates(services, location, ctx.ip),
        lanFirst: true,
        limit,
      },
      { metalink, nrandom, policySchema, detailedUrl: true, signatureLifetime },
    );
  };
  routes.post('/replicas/list', options, list);
  routes.post('/replicas/list/', options, list);
};

/** GET /replicas/{scope}/{name}: one DID's replicas, every PFN sorted together; a DID that does not exist is not found. */
export const registerReplicaGetRoute = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/replicas/*scope_name',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: LISTING_TYPES,
      summary: 'The replicas of one DID with their PFNs.',
      query: queryOf({
        schemes: queryText().describe('Comma-separated schemes.'),
        select: queryText().describe('A sorting algorithm.'),
        limit: pfnLimitQuery({ emptyIsNone: true }).describe('At most this many PFNs.'),
      }),
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params, query }) => {
      const did = params.scope_name;
      const metalink = wantsMetalink(ctx);
      const { limit, schemes } = query;
      const request: ReplicaListingRequest = {
        dids: [did],
        // Rucio passes the text on as is and then walks it letter by letter; a comma-separated list is what is meant.
        schemes: schemes ? schemes.split(',') : metalink ? SUPPORTED_PROTOCOLS : undefined,
        domain: undefined,
        clientSite: undefined,
        states: 'available',
        ignoreAvailability: true,
        rseExpression: undefined,
        updatedAfter: undefined,
        resolveParents: false,
        resolveArchives: true,
      };
      if (!(await findDid(services.readModels, did.scope, did.name)))
        throw new DataIdentifierNotFound(`Data identifier '${did.scope}:${did.name}' not found`);
      await sendListing(
        ctx,
        services,
        request,
        {
          algorithm: query.select,
          client: clientCoordinates(services, {}, ctx.ip),
          lanFirst: false,
          limit,
        },
        { metalink, nrandom: undefined, policySchema: 'atlas', detailedUrl: false },
      );
    },
  );
};
