import { pathOf, pathText } from '../../params.ts';
import { addCollections } from '../../../commands/did/didCreationCommands.ts';
import { attachDids, detachDids, type Attachment } from '../../../commands/did/didContentCommands.ts';
import {
  createDidSample,
  followDid,
  resurrectDids,
  setDidStatus,
  unfollowDid,
} from '../../../commands/did/didLifecycleCommands.ts';
import {
  DataIdentifierAlreadyExists,
  DataIdentifierNotFound,
  DuplicateContent,
  InvalidObject,
  ScopeNotFound,
  TypeError_,
  UnsupportedStatus,
  ValueError,
} from '../../../domain/shared/errors.ts';
import {
  attachRequestsIn,
  didPartIn,
  didRefIn,
  didRefShape,
  fileOwnerIn,
  jsonObjectOrListBody,
  listIn,
  noRuleOptions,
  objectIn,
  requiredIn,
  scopeNamePath,
} from './didParams.ts';
import { JSON_ONLY } from '../../http.ts';
import { rseNameIn, withReplicasOn } from '../replica/replicaParams.ts';
import { collectionFor, COLLECTION_KEYS, NEW_COLLECTION } from './didCreationParams.ts';
import {
  jsonListBody,
  jsonObjectBody,
  jsonObjectBodyOf,
  jsonValueBody,
  keysFirst,
  optionalBoolean,
} from '../../params.ts';
import { convertedBy, parsed, refusedAs } from '../../routeInput.ts';
import { z } from 'zod';
import { created, ok, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import {
  registerDidGetRoute,
  registerDidItemListRoutes,
  registerDidSearchRoutes,
  registerDidStaticListRoutes,
  registerScopeListingRoutes,
} from './didListRoutes.ts';
import { registerDidBulkMetaRoutes, registerDidMetaRoutes } from './didMetaRoutes.ts';

/** The /dids area: creation, attachments, status, following, samples; listings and metadata beside. */
export const registerDidRoutes = (routes: RouteTable, services: Services): void => {
  routes.post(
    '/dids',
    {
      accept: JSON_ONLY,
      errors: { DatabaseException: 406 },
      summary: 'Creates datasets and containers (add_dids).',
      body: jsonListBody(NEW_COLLECTION, {
        description:
          'DIDs: `scope`, `name`, `type` (DATASET, CONTAINER), and optionally `account`, `lifetime`, `meta`, `rules`, `statuses`, `rse`.',
      }),
      raises: [DataIdentifierAlreadyExists, ScopeNotFound, InvalidObject],
    },
    async (ctx, { body }) => {
      const dids = body.map((item) => collectionFor(item, ctx.state.issuer!));
      await created(ctx, services, (metadata) => addCollections(services.commands, { dids, single: false }, metadata));
    },
  );
  registerDidStaticListRoutes(routes, services);
  routes.post(
    '/dids/attachments',
    {
      summary: 'Attaches DIDs to several collections (files with `rse` registered as replicas there).',
      body: jsonObjectOrListBody(
        ATTACHMENTS,
        '`attachments`: `{scope, name, dids, rse?}` each; `ignore_duplicate`. A bare list is read as the attachments.',
      ),
      raises: [DataIdentifierNotFound, DuplicateContent],
    },
    async (ctx, { body: { attachments, ignore_duplicate: ignoreDuplicates } }) => {
      await created(ctx, services, (metadata) =>
        attachDids(services.commands, { attachments, ignoreDuplicates, single: false }, metadata),
      );
    },
  );
  registerDidBulkMetaRoutes(routes, services);
  routes.post(
    '/dids/sample',
    {
      summary: 'Creates a dataset of `nbfiles` files drawn from another.',
      body: jsonObjectBodyOf(SAMPLE, {
        documentedBy: SAMPLE_KEYS,
        description: '`input_scope`, `input_name`, `output_scope`, `output_name`, `nbfiles`.',
      }),
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { body: sample }) => {
      await created(ctx, services, (metadata) => createDidSample(services.commands, sample, metadata));
    },
  );
  routes.post(
    '/dids/resurrect',
    {
      summary: 'Brings deleted DIDs back.',
      body: jsonValueBody(RESURRECTED, 'list'),
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { body: dids }) => {
      await created(ctx, services, (metadata) => resurrectDids(services.commands, { dids }, metadata));
    },
  );
  registerDidSearchRoutes(routes, services);
  routes.post(
    '/dids/:input_scope/:input_name/:output_scope/:output_name/:nbfiles/sample',
    {
      // The count is read before the output's names (the first problem is the one answered).
      params: pathOf({
        input_scope: pathText(),
        input_name: pathText(),
        nbfiles: convertedBy(pathText(), sampleCount),
        output_scope: didPartIn('did', 'scope'),
        output_name: didPartIn('did', 'name'),
      }),
      summary: 'Creates a dataset of `nbfiles` files drawn from another.',
      body: 'none',
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params }) => {
      const { input_scope, input_name, output_scope, output_name, nbfiles } = params;
      const input = { scope: input_scope, name: input_name };
      const output = { scope: output_scope, name: output_name };
      await created(ctx, services, (metadata) =>
        createDidSample(services.commands, { input, output, nbfiles }, metadata),
      );
    },
  );

  registerDidItemListRoutes(routes, services);
  routes.put(
    '/dids/*scope_name/status',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      summary: 'Closes or reopens a collection.',
      body: jsonObjectBodyOf(DID_STATUS, { documentedBy: DID_STATUS_VALUE, description: '`open`: a JSON boolean.' }),
      raises: [DataIdentifierNotFound, UnsupportedStatus],
    },
    async (ctx, { params, body: { open } }) => {
      const did = params.scope_name;
      await ok(ctx, services, (metadata) => setDidStatus(services.commands, { ...did, open }, metadata));
    },
  );
  registerDidMetaRoutes(routes, services);
  routes.post(
    '/dids/*scope_name/dids',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      summary: 'Attaches DIDs to a collection (files with `rse` registered as replicas there).',
      body: jsonObjectBodyOf(ATTACHMENT, {
        documentedBy: ATTACHMENT_KEYS,
        description: '`dids`: `{scope, name, bytes?, adler32?, md5?, meta?}` each; `rse`, `account`.',
      }),
      raises: [DataIdentifierNotFound, DuplicateContent, InvalidObject],
    },
    async (ctx, { params, body: { dids: children, replicas } }) => {
      const attachment = { ...params.scope_name, children, ...(replicas ? { replicas } : {}) };
      await created(ctx, services, (metadata) =>
        attachDids(services.commands, { attachments: [attachment], ignoreDuplicates: false, single: true }, metadata),
      );
    },
  );
  routes.delete(
    '/dids/*scope_name/dids',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      summary: 'Detaches DIDs from a collection.',
      body: jsonObjectBody(
        { dids: listIn('dids', didRefIn('dids')) },
        { description: '`dids`: `{scope, name}` each.' },
      ),
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params, body }) => {
      const parent = params.scope_name;
      const children = body.dids;
      await ok(ctx, services, (metadata) => detachDids(services.commands, { ...parent, children }, metadata));
    },
  );
  routes.post(
    '/dids/*scope_name/follow',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      summary: 'Makes an account follow a DID.',
      body: jsonObjectBody({ account: followerAccount() }, { description: '`account`.' }),
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params, body: { account } }) => {
      const did = params.scope_name;
      await created(ctx, services, (metadata) => followDid(services.commands, { ...did, account }, metadata));
    },
  );
  routes.delete(
    '/dids/*scope_name/follow',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      summary: 'Makes an account stop following a DID.',
      body: jsonObjectBody({ account: followerAccount() }, { description: '`account`.' }),
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params, body: { account } }) => {
      const did = params.scope_name;
      await ok(ctx, services, (metadata) => unfollowDid(services.commands, { ...did, account }, metadata));
    },
  );
  registerScopeListingRoutes(routes, services);
  registerDidGetRoute(routes, services);
  routes.post(
    '/dids/*scope_name',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      errors: { DatabaseException: 406 },
      summary: 'Creates a dataset or container (add_did).',
      body: jsonObjectBodyOf(keysFirst(['type'], z.looseObject({})), {
        documentedBy: COLLECTION_KEYS.extend({ type: z.enum(['DATASET', 'CONTAINER']), rules: z.array(z.unknown()) }),
        description:
          '`type` (DATASET, CONTAINER), and optionally `account`, `lifetime`, `meta`, `rules`, `statuses`, `rse`.',
      }),
      raises: [DataIdentifierAlreadyExists, ScopeNotFound, InvalidObject],
    },
    async (ctx, { params, body }) => {
      // The DID is the path's, checked as the body's would be: the body is read with it.
      const collection = collectionFor(parsed(NEW_COLLECTION, { ...body, ...params.scope_name }), ctx.state.issuer!);
      await created(ctx, services, (metadata) =>
        addCollections(services.commands, { dids: [collection], single: true }, metadata),
      );
    },
  );
};

/** `nbfiles` of both sample routes: a count as Python's int() reads it (text too), not negative. */
const sampleCount = (nbfiles: unknown): number => {
  const count =
    typeof nbfiles === 'number'
      ? nbfiles
      : /^\s*[+-]?\d+\s*$/.test(String(nbfiles))
        ? Number(String(nbfiles).trim())
        : Number.NaN;
  if (!Number.isInteger(count)) throw new ValueError(`invalid literal for int() with base 10: '${String(nbfiles)}'`);
  if (count < 0) throw new ValueError(`nbfiles must not be negative, not ${count}`);
  return count;
};

/** What the document shows of `POST /dids/sample`. */
const SAMPLE_KEYS = z.object({
  input_scope: z.string(),
  input_name: z.string(),
  output_scope: z.string(),
  output_name: z.string(),
  nbfiles: z.union([z.int(), z.string()]),
});

/** A key of `POST /dids/sample` taken as text, as Rucio formats it into the DID. */
const asText = () => z.unknown().transform(String);

/**
 * `POST /dids/sample`: every key looked for first, then the count, then the output's names
 * checked as a creation checks them.
 */
const SAMPLE = keysFirst(
  ['input_scope', 'input_name', 'output_scope', 'output_name', 'nbfiles'],
  z
    .looseObject({
      input_scope: asText(),
      input_name: asText(),
      nbfiles: convertedBy(z.unknown(), sampleCount),
      output_scope: asText().pipe(didPartIn('did', 'scope')),
      output_name: asText().pipe(didPartIn('did', 'name')),
    })
    .transform((body) => ({
      input: { scope: body.input_scope, name: body.input_name },
      output: { scope: body.output_scope, name: body.output_name },
      nbfiles: body.nbfiles,
    })),
);

/** `POST /dids/resurrect`: a JSON list, then at most 1000 DIDs (judged before any item). */
const RESURRECTED = refusedAs(
  z.array(z.unknown()).describe('DIDs: `scope`, `name`.'),
  () => new TypeError_('body must be a json list'),
)
  .pipe(listIn('dids', z.unknown()))
  .pipe(z.array(didRefIn('dids')));

/** What `POST /dids/{scope}/{name}/dids` reads: children, then their owner, then the RSE and its files. */
const ATTACHMENT_KEYS = z.looseObject({
  dids: requiredIn('attachment', attachRequestsIn('attachment')),
  account: fileOwnerIn('attachment'),
  rse: rseNameIn().nullish(),
});
const ATTACHMENT = noRuleOptions().pipe(withReplicasOn('attachment', ATTACHMENT_KEYS));

/**
 * One attachment of `POST /dids/attachments`: its parent, the owner, the RSE and its files, and
 * only then the children, read apart (Rucio's order there: a missing `dids` is read as None).
 */
const ATTACHMENT_ITEM = convertedBy(
  objectIn('attachments', {})
    .pipe(noRuleOptions())
    .pipe(
      withReplicasOn(
        'attachments',
        z.looseObject({
          ...didRefShape('attachments'),
          account: fileOwnerIn('attachment'),
          rse: rseNameIn().nullish(),
        }),
      ),
    ),
  ({ scope, name, dids, replicas }): Attachment => ({
    scope,
    name,
    children: parsed(attachRequestsIn('attachments'), dids),
    ...(replicas ? { replicas } : {}),
  }),
);

/**
 * `POST /dids/attachments`: a bare list is the attachments; an object names them (looked for
 * first) and `ignore_duplicate`, read before any attachment.
 */
const ATTACHMENTS = z.preprocess(
  (body: Record<string, unknown> | unknown[]) => (Array.isArray(body) ? { attachments: body } : body),
  keysFirst(
    ['attachments'],
    z.looseObject({
      ignore_duplicate: optionalBoolean(false),
      attachments: listIn('attachments', z.unknown()).pipe(z.array(ATTACHMENT_ITEM)),
    }),
  ),
);

/** The follower: required, text. */
const followerAccount = () =>
  refusedAs(z.string(), ({ input }) => new TypeError_(`'account' must be a string, not ${JSON.stringify(input)}`));

/**
 * `PUT /dids/{scope}/{name}/status`: `open` is the one status (any other key is refused, the
 * first in the body's order, before `open` is read), and a JSON boolean only: Rucio reads the
 * value's truthiness, so "false" would reopen.
 */
const DID_STATUS_VALUE = z.object({
  open: refusedAs(
    z.boolean(),
    ({ input }) => new TypeError_(`'open' must be a boolean type, not ${JSON.stringify(input)}.`),
  ),
});
const DID_STATUS = z
  .object({ open: z.unknown().optional() })
  .catchall(
    refusedAs(
      z.custom(() => false),
      ({ key }) => new UnsupportedStatus(`The status ${String(key)} is not a valid data identifier status.`),
    ),
  )
  .pipe(DID_STATUS_VALUE);
