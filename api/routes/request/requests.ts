import { loadCaller } from '../../../commands/caller.ts';
import { allowOnly, isAdmin } from '../../../domain/permission/policy.ts';
import { REQUEST_STATE_LETTERS, type RequestState } from '../../../domain/request/request.ts';
import { AccessDenied, RSENotFound, RucioError } from '../../../domain/shared/errors.ts';
import { RequestNotFound } from '../../../domain/request/requestErrors.ts';
import {
  activeRequest,
  archivedRequest,
  listRequests,
  rseIdsOfSite,
  type RequestListing,
} from '../../../projections/request/requestQueries.ts';
import { requestMetrics } from '../../../projections/request/transferMetrics.ts';
import { JSON_ONLY, mapStream, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import { pathOf, pathText, queryInteger, queryOf, queryText } from '../../params.ts';
import type { RouteOptions, RouteTable } from '../../route.ts';
import type { z } from 'zod';
import { convertedBy } from '../../routeInput.ts';
import type { AppContext, Services } from '../../services.ts';
import { scopeNamePath } from '../did/didParams.ts';
import { activeRse } from '../rse/rseViews.ts';
import { requestJson } from '../rule/ruleRendering.ts';
import { registerTransferLimitRoutes } from './transferLimits.ts';
import { dateOf } from '../../../infra/clock.ts';

const missing = (what: string) => new RucioError('MissingParameter', what);

/**
 * A listing's query: `request_states` (letters, comma-separated) and the source and destination,
 * as RSE pairs or site pairs, checked in Rucio's order with its error names (MissingParameter,
 * Invalid); the states read.
 */
const checkedListing = <Query extends ListingKeys>(query: Query) => {
  const { src_rse: srcRse, dst_rse: dstRse, src_site: srcSite, dst_site: dstSite } = query;
  const statesText = query.request_states;
  if (!statesText) throw missing('Request state is missing');
  if (srcRse && !dstRse) throw missing('Destination RSE is missing');
  if (dstRse && !srcRse) throw missing('Source RSE is missing');
  if (srcSite && !dstSite) throw missing('Destination site is missing');
  if (dstSite && !srcSite) throw missing('Source site is missing');
  const states: RequestState[] = statesText.split(',').map((letter) => {
    const state = REQUEST_STATE_LETTERS[letter];
    if (!state) throw new RucioError('Invalid', 'Request state value is invalid');
    return state;
  });
  return { ...query, states };
};

/**
 * The RSEs of a listing: named, or the RSEs with the `site` attribute named (Rucio's NotFound when
 * none has it). Answers the RSE names too, for the permission message.
 */
const listingOf = async (
  services: Services,
  query: ListingQuery,
): Promise<RequestListing & { sourceNames: string[]; destNames: string[] }> => {
  const { src_rse: srcRse, dst_rse: dstRse, src_site: srcSite, dst_site: dstSite, states } = query;
  if (srcSite && dstSite) {
    const sources = await rseIdsOfSite(services.readModels, srcSite);
    if (sources.length === 0) throw new RucioError('NotFound', `Could not resolve site name ${srcSite} to RSE`);
    const dests = await rseIdsOfSite(services.readModels, dstSite);
    if (dests.length === 0) throw new RucioError('NotFound', `Could not resolve site name ${dstSite} to RSE`);
    return {
      states,
      sourceRseIds: sources.map((rse) => rse.id),
      destRseIds: dests.map((rse) => rse.id),
      sourceNames: sources.map((rse) => rse.rse),
      destNames: dests.map((rse) => rse.rse),
    };
  }
  // Rucio looks up the RSEs named (none named: an RSE called None, which does not exist).
  const source = await activeRse(services, srcRse ?? 'None');
  const dest = await activeRse(services, dstRse ?? 'None');
  return { states, sourceRseIds: [source.id], destRseIds: [dest.id], sourceNames: [source.rse], destNames: [dest.rse] };
};

/** Listing requests is for admins (Rucio's perm_list_requests and perm_list_requests_history). */
const requireListPermission = async (
  ctx: AppContext,
  services: Services,
  listing: { sourceNames: string[]; destNames: string[] },
) => {
  const caller = await loadCaller(services.commands, ctx.state.issuer!);
  allowOnly(
    isAdmin(caller),
    `${caller.account} cannot list requests from RSEs ${pythonList(listing.sourceNames)} to RSEs ${pythonList(listing.destNames)}. `,
  );
};

/** A list of names as Python prints it: `['A', 'B']`. */
const pythonList = (names: readonly string[]): string => `[${names.map((name) => `'${name}'`).join(', ')}]`;

/** `<path:scope_name>/<rse>`: the DID is everything before the last segment. */
const didAndRsePath = pathOf({ scope_name: scopeNamePath(), rse: pathText() });

const LIST_ERRORS = { MissingParameter: 400, Invalid: 400, NotFound: 404 } as const;

const LISTING = {
  src_rse: queryText().describe('The source RSE.'),
  dst_rse: queryText().describe('The destination RSE.'),
  src_site: queryText().describe('The source site (the RSEs with that `site` attribute).'),
  dst_site: queryText().describe('The destination site.'),
  request_states: queryText().describe('Comma-separated states or their letters (Q, G, S, D, F, ...); required.'),
};
type ListingKeys = z.output<z.ZodObject<typeof LISTING>>;
type ListingQuery = ReturnType<typeof checkedListing<ListingKeys>>;
const LIST = {
  accept: STREAM_ONLY,
  errors: LIST_ERRORS,
  summary: 'The transfer requests between RSEs or sites, in the given states.',
  query: convertedBy(queryOf(LISTING), checkedListing),
  raises: [AccessDenied],
} satisfies RouteOptions;
const HISTORY = {
  accept: STREAM_ONLY,
  errors: LIST_ERRORS,
  summary: 'The archived transfer requests between RSEs or sites, a page at a time.',
  query: convertedBy(
    queryOf({
      ...LISTING,
      offset: queryInteger(0).describe('Requests to skip; default 0.'),
      limit: queryInteger(100).describe('Requests per page; default 100, at most 10 000.'),
    }),
    checkedListing,
  ),
  raises: [AccessDenied],
} satisfies RouteOptions;
const METRICS = {
  accept: STREAM_ONLY,
  summary:
    'Transfer statistics per link: requests by state, files and bytes done and failed in the last hour, 6 hours, day (admins).',
  query: queryOf({
    dst_rse: queryText().describe('The destination RSE.'),
    src_rse: queryText().describe('The source RSE.'),
    activity: queryText().describe('One activity.'),
    group_by_rse_attribute: queryText().describe('Group RSEs by this attribute.'),
    format: queryText().describe('panda: one JSON document.'),
  }),
  raises: [AccessDenied, RSENotFound],
} satisfies RouteOptions;

/** The /requests area (rest-api-reference §1.20). */
export const registerRequestRoutes = (routes: RouteTable, services: Services): void => {
  routes.get('/requests/list', LIST, async (ctx, { query }) => {
    const listing = await listingOf(services, query);
    await requireListPermission(ctx, services, listing);
    await sendStream(ctx, mapStream(listRequests(services.readModels, listing, { history: false }), requestJson));
  });
  routes.get('/requests/history/list', HISTORY, async (ctx, { query }) => {
    const { offset, limit } = query;
    const listing = await listingOf(services, query);
    await requireListPermission(ctx, services, listing);
    const page = { offset: Math.max(0, offset), limit: limit > 0 ? Math.min(limit, 10_000) : 100 };
    await sendStream(
      ctx,
      mapStream(listRequests(services.readModels, listing, { history: true, ...page }), requestJson),
    );
  });
  routes.get('/requests/metrics', METRICS, async (ctx, { query: parameters }) => {
    const { dst_rse: dstRse, src_rse: srcRse, activity, group_by_rse_attribute: groupBy, format } = parameters;
    const query = {
      ...(srcRse ? { srcRseId: (await activeRse(services, srcRse)).id } : {}),
      ...(dstRse ? { destRseId: (await activeRse(services, dstRse)).id } : {}),
      ...(activity ? { activity } : {}),
      ...(groupBy ? { groupByAttribute: groupBy } : {}),
    };
    const caller = await loadCaller(services.commands, ctx.state.issuer!);
    allowOnly(isAdmin(caller), `${caller.account} cannot get request statistics. `);
    const metrics = await requestMetrics(services.readModels, query, dateOf(services.clock));
    if (format === 'panda') {
      sendJson(ctx, metrics);
      return;
    }
    await sendStream(
      ctx,
      (async function* () {
        yield* Object.values(metrics);
      })(),
    );
  });
  routes.get(
    '/requests/history/*scope_name/:rse',
    {
      params: didAndRsePath,
      accept: JSON_ONLY,
      summary: 'The last archived request of a file to an RSE (admins).',
      raises: [AccessDenied, RSENotFound, RequestNotFound],
    },
    async (ctx, { params }) => {
      const {
        scope_name: { scope, name },
        rse,
      } = params;
      const rseId = (await activeRse(services, rse)).id;
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      allowOnly(isAdmin(caller), `${caller.account} cannot retrieve the request DID ${scope}:${name} to RSE ${rse}. `);
      const request = await archivedRequest(services.readModels, scope, name, rseId);
      if (!request) throw new RequestNotFound(`No request found for DID ${scope}:${name} at RSE ${rse}`);
      sendJson(ctx, requestJson(request));
    },
  );
  routes.get(
    '/requests/*scope_name/:rse',
    {
      params: didAndRsePath,
      accept: JSON_ONLY,
      summary: 'The active request of a file to an RSE.',
      raises: [RSENotFound, RequestNotFound],
    },
    async (ctx, { params }) => {
      const {
        scope_name: { scope, name },
        rse,
      } = params;
      const request = await activeRequest(services.readModels, scope, name, (await activeRse(services, rse)).id);
      if (!request) throw new RequestNotFound(`No request found for DID ${scope}:${name} at RSE ${rse}`);
      sendJson(ctx, requestJson(request));
    },
  );
  registerTransferLimitRoutes(routes, services);
};
