import { normalizeGuid } from '../../../domain/did/didMetadata.ts';
import { planDidSearch, SEARCH_TYPE_NAMES } from '../../../domain/did/didSearch.ts';
import { DID_TYPES, type DidRef, type DidType } from '../../../domain/did/did.ts';
import { DataIdentifierNotFound, DIDFilterSyntaxError, ValueError } from '../../../domain/shared/errors.ts';
import { parsePythonLiteral, PythonLiteralError } from '../../../domain/shared/pythonLiteral.ts';
import { listBelow, listScope } from '../../../projections/did/didListings.ts';
import {
  contentHistoryOf,
  contentOf,
  dynamicTotals,
  filesBelow,
  filesWithGuid,
  findDid,
  followersOf,
  listParents,
  newDids,
  parentsOfEach,
  type FileEntry,
} from '../../../projections/did/didQueries.ts';
import { runDidSearch } from '../../../projections/did/didSearchQueries.ts';
import type { DidDocument } from '../../../projections/did/didsProjection.ts';
import { contentEntryJson, contentHistoryJson, didStatusJson, parentJson } from './didRendering.ts';
import { didRefIn, listIn, scopeNamePath } from './didParams.ts';
import { JSON_ONLY, JSON_TYPE, mapStream, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import { jsonObjectBody, pathOf, pathText, queryBoolean, queryFilter, queryOf, queryText } from '../../params.ts';
import type { z } from 'zod';
import { convertedBy } from '../../routeInput.ts';
import type { HandlerFor, RouteOptions, RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
import { rulesLockingFile, rulesOfDid } from '../../../projections/rule/ruleQueries.ts';
import { ruleLines } from '../rule/rules.ts';

const notFound = (did: DidRef) => new DataIdentifierNotFound(`Data identifier '${did.scope}:${did.name}' not found`);

/** The DID of the path, which must exist. */
const existingDid = async (services: Services, did: DidRef): Promise<DidDocument> => {
  const document = await findDid(services.readModels, did.scope, did.name);
  if (!document) throw notFound(did);
  return document;
};

/** Yields `source`; when it yields nothing, a DID that does not exist is DataIdentifierNotFound. */
async function* orNotFound<T>(source: AsyncIterable<T>, services: Services, did: DidRef): AsyncGenerator<T> {
  let any = false;
  for await (const item of source) {
    any = true;
    yield item;
  }
  if (!any && !(await findDid(services.readModels, did.scope, did.name))) throw notFound(did);
}

/** `list_files` lines: the GUID upper-cased, `lumiblocknr` only in the long form. */
const fileLine = (file: FileEntry, lumiblocknr?: unknown) => ({
  scope: file.scope,
  name: file.name,
  bytes: file.bytes,
  adler32: file.adler32,
  guid: file.guid ? file.guid.toUpperCase() : null,
  events: file.events,
  ...(lumiblocknr !== undefined ? { lumiblocknr } : {}),
});

/** A DID type of a query, in any case. */
const didTypeOf = (type: string): DidType => {
  const didType = DID_TYPES.find((candidate) => candidate === type.toUpperCase());
  if (!didType) throw new ValueError(`'${type}' is not a valid DID type`);
  return didType;
};

/** GET /dids/new, POST /dids/bulkfiles: static words. */
export const registerDidStaticListRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/dids/new',
    {
      accept: STREAM_ONLY,
      summary: 'DIDs flagged new (not yet picked up by the transmogrifier).',
      query: queryOf({
        type: convertedBy(queryText(), (type) => (type === undefined ? undefined : didTypeOf(type))).describe(
          'A DID type: FILE, DATASET, CONTAINER (any case).',
        ),
      }),
    },
    async (ctx, { query: { type: didType } }) => {
      await sendStream(
        ctx,
        mapStream(newDids(services.readModels, didType), (did) => ({
          scope: did.scope,
          name: did.name,
          did_type: did.did_type,
        })),
      );
    },
  );

  routes.post(
    '/dids/bulkfiles',
    {
      accept: STREAM_ONLY,
      summary: 'The files below each of several DIDs, with their parent.',
      body: jsonObjectBody(
        {
          dids: listIn('dids', didRefIn('dids'))
            .nullish()
            .transform((dids) => dids ?? []),
        },
        { description: '`dids`: `{scope, name}` each.' },
      ),
    },
    async (ctx, { body: { dids: requested } }) => {
      async function* files() {
        for (const did of requested) {
          const document = await findDid(services.readModels, did.scope, did.name);
          if (!document) continue;
          for await (const file of filesBelow(services.readModels, document)) {
            yield { ...fileLine(file), parent_scope: did.scope, parent_name: did.name };
          }
        }
      }
      await sendStream(ctx, files());
    },
  );
};

/** The search's query: its options, and every other parameter a filter (without `filters`). */
const SEARCH_KEYS = queryOf({
  // An enum in the document (the console's search offers it from there); read in any case.
  type: queryText()
    .describe('The type of DIDs to find, in any case; `collection` (datasets and containers) by default.')
    .meta({ enum: [...SEARCH_TYPE_NAMES] }),
  // Flask's `type=int` turns an unreadable limit into no limit.
  limit: queryText()
    .transform((text) => (text !== undefined && /^\s*\d+\s*$/.test(text) ? Number(text) : undefined))
    .describe('At most this many.'),
  long: queryBoolean(false).describe('True: the whole DID instead of its name.'),
  recursive: queryBoolean(false).describe('True: below the matching collections too.'),
  filters: queryText().describe('The filters as the Python client sends them: a list of dictionaries.'),
}).catchall(queryFilter());

/** The search's query, its filters read into groups once every parameter is read. */
const searchQuery = convertedBy(SEARCH_KEYS, (query) => ({ ...query, groups: searchGroups(query) }));

/** GET /dids/{scope}/dids/search and GET /dids/{guid}/guid. */
export const registerDidSearchRoutes = (routes: RouteTable, services: Services): void => {
  const search = {
    params: pathOf({ scope: pathText() }),
    accept: STREAM_ONLY,
    summary: 'Searches a scope: names (or with `long`, the DIDs) matching the filters.',
    query: searchQuery,
    raises: [DIDFilterSyntaxError],
  } satisfies RouteOptions;
  routes.get('/dids/:scope/dids/search', search, async (ctx, { params, query }) => {
    const search = planDidSearch(query.groups, query.type ?? 'collection');
    const { long, limit } = query;
    const hits = runDidSearch(services.readModels, search, params.scope, {
      recursive: query.recursive,
      ...(limit ? { limit } : {}),
    });
    await sendStream(
      ctx,
      mapStream(hits, (hit) => (long ? hit : hit.name)),
    );
  });

  routes.get(
    '/dids/:guid/guid',
    {
      params: pathOf({ guid: pathText() }),
      accept: STREAM_ONLY,
      summary: 'The datasets holding the file of a GUID.',
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params }) => {
      const given = params.guid;
      const guid = normalizeGuid(given);
      const files = guid ? await filesWithGuid(services.readModels, guid) : [];
      if (files.length === 0) throw new DataIdentifierNotFound(`No file associated to GUID : ${given}`);
      await sendStream(
        ctx,
        mapStream(parentsOfEach(services.readModels, files), (edge) => ({
          scope: edge.parentScope,
          name: edge.parentName,
        })),
      );
    },
  );
};

/**
 * The search filters as the Python client sends them (a Python literal list of dicts in `filters`),
 * or, without `filters`, the other query parameters as one group.
 */
const searchGroups = (query: z.output<typeof SEARCH_KEYS>): Record<string, unknown>[] => {
  const { filters: text, type: _type, limit: _limit, long: _long, recursive: _recursive, ...others } = query;
  if (text === undefined) return [others];
  let parsed;
  try {
    parsed = parsePythonLiteral(text);
  } catch (error) {
    if (error instanceof PythonLiteralError)
      throw new DIDFilterSyntaxError(`Could not read the filters: ${error.message}`);
    throw error;
  }
  const groups = Array.isArray(parsed) ? parsed : [parsed];
  return groups.map((group) => {
    if (group === null || typeof group !== 'object' || Array.isArray(group))
      throw new DIDFilterSyntaxError('Input filters are of an unrecognised type.');
    for (const value of Object.values(group)) {
      if (value !== null && typeof value === 'object')
        throw new DIDFilterSyntaxError(`Filter values must be single values, not ${JSON.stringify(value)}`);
    }
    return group;
  });
};

/** The read routes under one DID: `/dids/{scope}/{name}/<suffix>`. */
export const registerDidItemListRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/dids/*scope_name/dids/history',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: STREAM_ONLY,
      summary: 'What was ever attached to a collection, detached children included.',
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params }) => {
      const did = params.scope_name;
      const history = contentHistoryOf(services.readModels, did.scope, did.name);
      await sendStream(ctx, orNotFound(mapStream(history, contentHistoryJson), services, did));
    },
  );
  routes.get('/dids/*scope_name/status', didOptions, (ctx, input) => getDid(services, ctx, input));
  routes.get(
    '/dids/*scope_name/dids',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: STREAM_ONLY,
      summary: 'The children of a collection.',
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params }) => {
      const did = params.scope_name;
      const content = contentOf(services.readModels, did.scope, did.name);
      await sendStream(ctx, orNotFound(mapStream(content, contentEntryJson), services, did));
    },
  );
  routes.get(
    '/dids/*scope_name/files',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: STREAM_ONLY,
      summary: 'The files below a DID.',
      query: queryOf({ long: queryText().describe('Present: with `lumiblocknr`.') }),
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params, query }) => {
      const document = await existingDid(services, params.scope_name);
      // The long form is asked for by the parameter's presence, whatever its value.
      const long = query.long !== undefined;
      await sendStream(
        ctx,
        (async function* () {
          for await (const file of filesBelow(services.readModels, document)) {
            yield long
              ? fileLine(file, (await findDid(services.readModels, file.scope, file.name))?.lumiblocknr ?? null)
              : fileLine(file);
          }
        })(),
      );
    },
  );
  routes.get(
    '/dids/*scope_name/rules',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: STREAM_ONLY,
      summary: 'The rules on a DID.',
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params }) => {
      const document = await existingDid(services, params.scope_name);
      await sendStream(ctx, ruleLines(services, rulesOfDid(services.readModels, document.scope, document.name)));
    },
  );
  // Rucio's list_associated_rules_for_file: the rules holding a lock on the file, each with the
  // bytes of the DID the rule is on (the file's dataset or container), as list_rules adds them.
  routes.get(
    '/dids/*scope_name/associated_rules',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: STREAM_ONLY,
      summary: 'The rules holding a lock on a file, with the bytes of the DID each rule is on.',
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params }) => {
      const document = await existingDid(services, params.scope_name);
      await sendStream(ctx, ruleLines(services, rulesLockingFile(services.readModels, document.scope, document.name)));
    },
  );
  routes.get(
    '/dids/*scope_name/parents',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: STREAM_ONLY,
      summary: 'The collections a DID is attached to.',
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params }) => {
      const document = await existingDid(services, params.scope_name);
      await sendStream(ctx, mapStream(listParents(services.readModels, document.scope, document.name), parentJson));
    },
  );
  // Rucio streams these lines under the JSON content type.
  routes.get(
    '/dids/*scope_name/follow',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: JSON_ONLY,
      summary: 'The accounts following a DID (JSON lines, typed application/json as Rucio does).',
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params }) => {
      const document = await existingDid(services, params.scope_name);
      const followers = followersOf(services.readModels, document.scope, document.name);
      await sendStream(
        ctx,
        mapStream(followers, (follower) => ({ user: follower.account })),
        JSON_TYPE,
      );
    },
  );
};

/** GET /dids/{scope} redirects to the scope listing (Werkzeug's strict slashes); then the listing. */
export const registerScopeListingRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/dids/:scope',
    {
      params: pathOf({ scope: pathText() }),
      auth: false,
      commonHeaders: false,
      summary: 'Redirects (308) to `/dids/{scope}/`.',
      success: { status: 308, description: 'Location: the path with a slash.' },
    },
    (ctx) => {
      ctx.status = 308;
      ctx.set('Location', `${ctx.path}/${ctx.querystring ? `?${ctx.querystring}` : ''}`);
      ctx.body = '';
    },
  );
  routes.get(
    '/dids/:scope/',
    {
      params: pathOf({ scope: pathText() }),
      accept: STREAM_ONLY,
      summary: 'The DIDs of a scope, or with `name` those below that DID.',
      query: queryOf({
        name: queryText().describe('A collection of the scope.'),
        recursive: queryBoolean(false).describe('True: all levels below.'),
      }),
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params, query }) => {
      const scope = params.scope;
      const { name, recursive } = query;
      if (name === undefined) {
        await sendStream(ctx, listScope(services.readModels, scope, recursive));
        return;
      }
      const document = await findDid(services.readModels, scope, name);
      if (!document) throw notFound({ scope, name });
      await sendStream(ctx, listBelow(services.readModels, document, recursive));
    },
  );
};

/** GET /dids/{scope}/{name}: the DID itself. */
export const registerDidGetRoute = (routes: RouteTable, services: Services): void => {
  routes.get('/dids/*scope_name', didOptions, (ctx, input) => getDid(services, ctx, input));
};

const didOptions = {
  params: pathOf({ scope_name: scopeNamePath() }),
  accept: JSON_ONLY,
  summary: 'One DID: type, account, bytes, length, open, ...',
  query: queryOf({
    dynamic_depth: queryText().describe('FILE or DATASET: bytes and length summed below now.'),
    dynamic: queryText().describe('Present: the same as dynamic_depth=FILE.'),
  }),
  raises: [DataIdentifierNotFound],
} satisfies RouteOptions;

const getDid = async (
  services: Services,
  ctx: AppContext,
  { params, query }: Parameters<HandlerFor<typeof didOptions>>[1],
): Promise<void> => {
  const document = await existingDid(services, params.scope_name);
  const requested = query.dynamic_depth;
  // `dynamic` asks by its presence, whatever its value.
  const depth = requested !== undefined ? requested.toUpperCase() : query.dynamic !== undefined ? 'FILE' : undefined;
  const dynamic =
    depth === 'FILE' || depth === 'DATASET' ? await dynamicTotals(services.readModels, document, depth) : undefined;
  sendJson(ctx, didStatusJson(document, dynamic));
};
