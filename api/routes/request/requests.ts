import { loadCaller } from '../../../commands/caller.ts';
import { allowOnly, isAdmin } from '../../../domain/permission/policy.ts';
import { REQUEST_STATE_LETTERS, type RequestState } from '../../../domain/request/request.ts';
import { RequestNotFound, RucioError } from '../../../domain/shared/errors.ts';
import { activeRequest, archivedRequest, listRequests, rseIdsOfSite, type RequestListing } from '../../../projections/request/requestQueries.ts';
import { JSON_ONLY, mapStream, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import { queryString } from '../../params.ts';
import type { RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
import { didFromPath } from '../did/didParams.ts';
import { activeRse } from '../rse/rseViews.ts';
import { requestJson } from '../rule/ruleRendering.ts';

const missing = (what: string) => new RucioError('MissingParameter', what);

/**
 * `request_states` (letters, comma-separated) and the source and destination, as RSE pairs or
 * site pairs (the RSEs with that `site` attribute). Rucio's own error names: MissingParameter,
 * Invalid, NotFound.
 */
const listingOf = async (ctx: AppContext, services: Services): Promise<RequestListing> => {
  const statesText = queryString(ctx, 'request_states');
  if (!statesText) throw missing('Request state is missing');
  const states: RequestState[] = statesText.split(',').map((letter) => {
    const state = REQUEST_STATE_LETTERS[letter.trim()];
    if (!state) throw new RucioError('Invalid', `Request state ${letter} is not valid`);
    return state;
  });
  const [srcRse, dstRse, srcSite, dstSite] = ['src_rse', 'dst_rse', 'src_site', 'dst_site'].map((name) => queryString(ctx, name));
  if (srcRse || dstRse) {
    if (!srcRse || !dstRse) throw missing('Both source and destination RSEs are needed');
    return { states, sourceRseIds: [(await activeRse(services, srcRse)).id], destRseIds: [(await activeRse(services, dstRse)).id] };
  }
  if (!srcSite || !dstSite) throw missing('Source and destination RSEs or sites are needed');
  const sourceRseIds = await rseIdsOfSite(services.readModels, srcSite);
  const destRseIds = await rseIdsOfSite(services.readModels, dstSite);
  if (sourceRseIds.length === 0) throw new RucioError('NotFound', `Could not resolve site name ${srcSite} to RSE`);
  if (destRseIds.length === 0) throw new RucioError('NotFound', `Could not resolve site name ${dstSite} to RSE`);
  return { states, sourceRseIds, destRseIds };
};

const requireListPermission = async (ctx: AppContext, services: Services) => {
  const caller = await loadCaller(services.commands, ctx.state.issuer!);
  allowOnly(isAdmin(caller), `Account ${caller.account} can not list requests`);
};

/** `<path:scope_name>/<rse>`: the DID is everything before the last segment. */
const didAndRse = (ctx: AppContext) => ({ ...didFromPath(ctx), rse: ctx.params.rse! });

/**
 * The /requests area (reading; transfer limits and metrics come with the conveyor).
 */
export const registerRequestRoutes = (routes: RouteTable, services: Services): void => {
  routes.get('/requests/list', { accept: STREAM_ONLY, errors: { MissingParameter: 400, Invalid: 400, NotFound: 404 } }, async (ctx) => {
    await requireListPermission(ctx, services);
    await sendStream(ctx, mapStream(listRequests(services.readModels, await listingOf(ctx, services), { history: false }), requestJson));
  });
  routes.get('/requests/history/list', { accept: STREAM_ONLY, errors: { MissingParameter: 400, Invalid: 400, NotFound: 404 } }, async (ctx) => {
    await requireListPermission(ctx, services);
    const offset = Number(queryString(ctx, 'offset') ?? 0);
    const limit = Number(queryString(ctx, 'limit') ?? 100);
    const listing = await listingOf(ctx, services);
    const page = { offset: Number.isInteger(offset) && offset >= 0 ? offset : 0, limit: Number.isInteger(limit) && limit > 0 ? Math.min(limit, 10_000) : 100 };
    await sendStream(ctx, mapStream(listRequests(services.readModels, listing, { history: true, ...page }), requestJson));
  });
  routes.get('/requests/history/*scope_name/:rse', { accept: JSON_ONLY }, async (ctx) => {
    const { scope, name, rse } = didAndRse(ctx);
    const request = await archivedRequest(services.readModels, scope, name, (await activeRse(services, rse)).id);
    if (!request) throw new RequestNotFound(`No request found for DID ${scope}:${name} at RSE ${rse}`);
    sendJson(ctx, requestJson(request));
  });
  routes.get('/requests/*scope_name/:rse', { accept: JSON_ONLY }, async (ctx) => {
    const { scope, name, rse } = didAndRse(ctx);
    const request = await activeRequest(services.readModels, scope, name, (await activeRse(services, rse)).id);
    if (!request) throw new RequestNotFound(`No request found for DID ${scope}:${name} at RSE ${rse}`);
    sendJson(ctx, requestJson(request));
  });
};
