import type { DidRef } from '../../../domain/did/did.ts';
import type { ListedFile } from '../../../domain/replica/replicaListing.ts';
import { checkSortingAlgorithm, sortByAlgorithm, type Pfn } from '../../../domain/replica/replicaSorting.ts';
import { evaluateRseExpression } from '../../../domain/rse/rseExpression.ts';
import { ReplicaNotFound, SortingAlgorithmNotSupported, ValueError } from '../../../domain/shared/errors.ts';
import { loadListedRses, type ListedRse } from '../../../projections/replica/listingRses.ts';
import { eachListedFile, replicaListing } from '../../../projections/replica/replicaQueries.ts';
import { mapStream, sendChunks, sendText } from '../../http.ts';
import { pathOf, pathText, queryOf, queryText } from '../../params.ts';
import { z } from 'zod';
import type { HandlerFor, RouteOptions, RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
import { parseScopeName } from '../did/didParams.ts';
import { clientCoordinates, pfnCoordinates } from '../replica/locations.ts';
import { presenter, random } from '../replica/replicaListRoutes.ts';
import { metalinkDocument, METALINK_TYPE } from '../replica/replicaRendering.ts';

/**
 * Download redirects (Rucio's redirect.py), without a token: `GET /redirect/{scope}/{name}`
 * answers 303 to one replica's URL, chosen by `rse`, by `site`, or by sorting (`select`/`sort`:
 * `random` by default, `geoip`); `.../metalink` answers a Metalink 4 document of every replica.
 */

const NO_REDIRECTION = 'no redirection possible';

/** Rucio's CORS headers of these views (they skip the common ones), kept on errors too. */
const setCorsHeaders = (ctx: AppContext): void => {
  ctx.set('Access-Control-Allow-Origin', ctx.get('Origin') || 'None');
  ctx.set('Access-Control-Allow-Headers', ctx.get('Access-Control-Request-Headers') || 'None');
  ctx.set('Access-Control-Allow-Methods', '*');
  ctx.set('Access-Control-Allow-Credentials', 'true');
};

/** Every value of a repeated query parameter (`schemes=a&schemes=b`), commas splitting values too. */
const queryList = () =>
  z
    .preprocess((value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]), z.array(z.string()))
    .transform((values) => values.flatMap((each) => each.split(',')).filter((each) => each !== ''));

/**
 * The DID of the path; a trailing slash is Rucio's other rule for the same view. Parsed by the
 * handler, after the CORS headers are set, so that its error carries them too.
 */
const didOfPath = (scopeName: string): DidRef => parseScopeName(scopeName.replace(/\/$/, ''));

const didPath = pathOf({ scope_name: pathText() });

const notFound = (ctx: AppContext, why: string): void =>
  sendText(ctx, `${NO_REDIRECTION} - ${why}`, 404, 'text/plain; charset=utf-8');

/** The files of a DID with their replicas' PFNs, as Rucio's gateway lists them for these views (no signing). */
const listFiles = async (
  services: Services,
  did: DidRef,
  schemes: readonly string[],
  site: string | undefined,
): Promise<AsyncGenerator<ListedFile>> =>
  eachListedFile(
    await replicaListing(services.readModels, {
      dids: [did],
      schemes,
      domain: undefined,
      clientSite: site,
      states: 'available',
      ignoreAvailability: true,
      rseExpression: undefined,
      updatedAfter: undefined,
      resolveParents: false,
      resolveArchives: true,
    }),
  );

/** Rucio's `site_selector`: the PFNs on RSEs whose `site` attribute is `site`, in listing order. */
const onSite = (pfns: readonly Pfn[], site: string, rses: ReadonlyMap<string, ListedRse>): Pfn[] => {
  let ids: Set<string>;
  try {
    ids = new Set(
      evaluateRseExpression(
        `site=${site}`,
        [...rses.values()].map((rse) => rse.facts),
      ).map((facts) => facts.id),
    );
  } catch {
    return [];
  }
  return pfns.filter(([, entry]) => ids.has(entry.rse_id));
};

export const registerRedirectRoutes = (routes: RouteTable, services: Services): void => {
  const redirectOptions = {
    params: didPath,
    auth: false,
    commonHeaders: false,
    errors: { ReplicaNotFound: 404, SortingAlgorithmNotSupported: 404 },
    summary: 'A 303 redirect to the URL of one replica of a file (no token).',
    query: queryOf({
      rse: queryText().describe('Redirect to this RSE’s replica.'),
      site: queryText().describe('Redirect to a replica on an RSE of this site (RSE attribute `site`).'),
      schemes: queryList().describe('Schemes to consider, repeated or comma-separated (default davs, https, s3).'),
      select: queryText().describe('random (default) or geoip.'),
      sort: queryText().describe('The same as select.'),
      ip: queryText().describe('The client’s address for geoip (default: the caller’s).'),
      fqdn: queryText().describe('Ignored, as in Rucio.'),
    }),
    success: { status: 303, description: 'Location: the chosen replica’s URL.' },
    raises: [ValueError, ReplicaNotFound, SortingAlgorithmNotSupported],
  } satisfies RouteOptions;
  const redirect: HandlerFor<typeof redirectOptions> = async (ctx, { params, query }): Promise<void> => {
    setCorsHeaders(ctx);
    const did = didOfPath(params.scope_name);
    const { schemes, rse, site } = query;
    const chosenSchemes = schemes.length > 0 ? schemes : ['davs', 'https', 's3'];
    const algorithm = query.sort ?? query.select ?? 'random';
    const path = ctx.originalUrl.split('?')[0]!;
    ctx.set(
      'Link',
      `<${path}/metalink?schemes=${chosenSchemes.join(',')}&select=${algorithm}>; rel=describedby; type="application/metalink+xml"`,
    );
    const rses = await loadListedRses(services.readModels);
    const order = {
      algorithm,
      client: clientCoordinates(services, {}, query.ip ?? ctx.ip),
      pfnCoordinates: pfnCoordinates(services, rses),
      lanFirst: false,
      limit: undefined,
      random,
    };
    let selected: string | undefined;
    // As Rucio: every file of the DID is looked at, and the last with replicas gives the URL.
    for await (const file of await listFiles(services, did, chosenSchemes, site)) {
      if (Object.keys(file.rses).length === 0) continue;
      if (rse !== undefined) {
        const first = file.rses[rse]?.[0];
        if (first === undefined) return notFound(ctx, 'no valid RSE for HTTP redirection found');
        selected = first;
        continue;
      }
      // An HTTP redirect, for as many HTTP clients as possible: davs and s3 URLs become https ones.
      const byUrl = new Map<string, Pfn[1]>();
      for (const pfns of Object.values(file.rses))
        for (const pfn of pfns)
          byUrl.set(pfn.replaceAll('davs://', 'https://').replaceAll('s3://', 'https://'), file.pfns[pfn]!);
      const candidates = [...byUrl];
      if (site !== undefined) {
        const local = onSite(candidates, site, rses);
        if (local.length === 0) return notFound(ctx, 'no valid RSE for HTTP redirection found');
        selected = local[0]![0];
      } else {
        checkSortingAlgorithm(algorithm);
        selected = sortByAlgorithm(candidates, order)[0]![0];
      }
    }
    if (selected === undefined) return notFound(ctx, 'file does not exist');
    ctx.status = 303;
    ctx.set('Location', selected);
    ctx.body = '';
  };
  routes.get('/redirect/*scope_name', redirectOptions, redirect);

  routes.get(
    '/redirect/*scope_name/metalink',
    {
      params: didPath,
      auth: false,
      commonHeaders: false,
      accept: [METALINK_TYPE],
      errors: { SortingAlgorithmNotSupported: 404 },
      summary: 'A Metalink 4 document of every replica of a DID, each URL with its priority (no token).',
      query: queryOf({
        schemes: queryList().describe(
          'Schemes to list, repeated or comma-separated (default http, https, root, gsiftp, srm, davs).',
        ),
        select: queryText().describe('geoip (default), random.'),
        sort: queryText().describe('The same as select.'),
        site: queryText().describe('The client’s site: RSEs of that site give their LAN URLs.'),
        ip: queryText().describe('The client’s address for geoip (default: the caller’s).'),
        fqdn: queryText().describe('Ignored, as in Rucio.'),
      }),
      raises: [ValueError, SortingAlgorithmNotSupported],
    },
    async (ctx, { params, query }) => {
      setCorsHeaders(ctx);
      const did = didOfPath(params.scope_name);
      const { schemes } = query;
      const algorithm = query.sort ?? query.select;
      checkSortingAlgorithm(algorithm);
      const files = await listFiles(
        services,
        did,
        schemes.length > 0 ? schemes : ['http', 'https', 'root', 'gsiftp', 'srm', 'davs'],
        query.site,
      );
      const first = await files.next();
      if (first.done) return notFound(ctx, 'cannot find the DID');
      const present = presenter(services, await loadListedRses(services.readModels), {
        algorithm,
        client: clientCoordinates(services, {}, query.ip ?? ctx.ip),
        lanFirst: false,
        limit: undefined,
      });
      async function* all(): AsyncGenerator<ListedFile> {
        yield first.value!;
        yield* files;
      }
      await sendChunks(ctx, metalinkDocument(mapStream(all(), present), 'atlas', false), METALINK_TYPE);
    },
  );
};
