import { pathOf, pathText } from '../../params.ts';
import { deleteMetadata, setDidsMetadataBulk, setMetadata } from '../../../commands/did/didMetadataCommands.ts';
import { assertKeyCharacters, metadataPluginNamed, type MetadataPlugin } from '../../../domain/did/didMetadata.ts';
import { DataIdentifierNotFound, KeyNotFound, UnsupportedMetadataPlugin } from '../../../domain/shared/errors.ts';
import { ancestorKeys, findDid, findDidByKey } from '../../../projections/did/didQueries.ts';
import type { DidDocument } from '../../../projections/did/didsProjection.ts';
import { didColumnMetadata, jsonMetadata } from './didRendering.ts';
import { didRefIn, didRefShape, listIn, objectIn, scopeNamePath } from './didParams.ts';
import { JSON_ONLY, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import { jsonObjectBody, optionalBoolean, queryOf, queryText, requiredValue } from '../../params.ts';
import { z } from 'zod';
import { convertedBy } from '../../routeInput.ts';
import { created, ok, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

const pluginOf = (name: unknown): MetadataPlugin => {
  const plugin = metadataPluginNamed(String(name));
  if (!plugin) throw new UnsupportedMetadataPlugin(`Metadata plugin "${String(name)}" is not enabled on the server.`);
  return plugin;
};

/** A DID's metadata as one plugin (or `ALL` of them) sees it. */
const metadataOf = (document: DidDocument, plugin: MetadataPlugin): Record<string, unknown> => {
  switch (plugin) {
    case 'DID_COLUMN':
      return didColumnMetadata(document);
    case 'JSON':
      return jsonMetadata(document);
    case 'ALL':
      return { ...didColumnMetadata(document), ...jsonMetadata(document) };
  }
};

/** Rucio's `get_metadata_bulk` walks at most this many levels of parents for `inherit`. */
const INHERIT_DEPTH = 20;

/** POST /dids/bulkdidsmeta (set) and /dids/bulkmeta (get): static words. */
export const registerDidBulkMetaRoutes = (routes: RouteTable, services: Services): void => {
  routes.post(
    '/dids/bulkdidsmeta',
    {
      summary: 'Sets metadata of several DIDs.',
      body: jsonObjectBody(
        {
          dids: listIn(
            'dids',
            objectIn('dids', { ...didRefShape('dids'), meta: objectIn('dids', {}) }).transform(
              ({ scope, name, meta }) => ({ scope, name, meta }),
            ),
          ),
        },
        { description: '`dids`: `{scope, name, meta}` each.' },
      ),
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { body: { dids } }) => {
      await created(ctx, services, (metadata) => setDidsMetadataBulk(services.commands, { dids }, metadata));
    },
  );

  /**
   * One line per existing DID, in request order: `scope`, `name` and the plugin's keys (the
   * plugin is honoured with or without `inherit`). With `inherit`, keys a DID lacks come from
   * its nearest ancestor that has them, level by level.
   */
  routes.post(
    '/dids/bulkmeta',
    {
      accept: STREAM_ONLY,
      summary: 'The metadata of several DIDs, one line each.',
      body: jsonObjectBody(
        {
          dids: listIn('dids', didRefIn('dids')),
          inherit: optionalBoolean(false),
          plugin: convertedBy(z.unknown().optional(), (plugin) => pluginOf(plugin ?? 'JSON')),
        },
        { description: '`dids`: `{scope, name}` each; `inherit`; `plugin` (JSON, DID_COLUMN, ALL).' },
      ),
      raises: [UnsupportedMetadataPlugin],
    },
    async (ctx, { body: { dids, inherit, plugin } }) => {
      async function* lines() {
        for (const did of dids) {
          const document = await findDid(services.readModels, did.scope, did.name);
          if (!inherit) {
            if (document) yield { scope: did.scope, name: did.name, ...metadataOf(document, plugin) };
            continue;
          }
          const line: Record<string, unknown> = { scope: did.scope, name: did.name };
          const fill = (source: DidDocument | null) => {
            if (!source) return;
            for (const [key, value] of Object.entries(metadataOf(source, plugin)))
              if (!(key in line)) line[key] = value;
          };
          fill(document);
          for (const ancestor of await ancestorKeys(services.readModels, did.scope, did.name, INHERIT_DEPTH))
            fill(await findDidByKey(services.readModels, ancestor));
          yield line;
        }
      }
      await sendStream(ctx, lines());
    },
  );
};

/** GET, POST, DELETE /dids/{scope}/{name}/meta and POST /dids/{scope}/{name}/meta/{key}. */
export const registerDidMetaRoutes = (routes: RouteTable, services: Services): void => {
  const setErrors = { errors: { KeyNotFound: 400 }, raises: [DataIdentifierNotFound, KeyNotFound] };

  routes.post(
    '/dids/*scope_name/meta/:key',
    {
      params: pathOf({ scope_name: scopeNamePath(), key: pathText() }),
      ...setErrors,
      summary: 'Sets one metadata key of a DID.',
      body: jsonObjectBody(
        { value: requiredValue(), recursive: optionalBoolean(false) },
        { description: '`value`; `recursive`.' },
      ),
    },
    async (ctx, { params, body: { value, recursive } }) => {
      const did = params.scope_name;
      const meta = { [params.key]: value };
      await created(ctx, services, (metadata) =>
        setMetadata(services.commands, { ...did, meta, recursive, single: true }, metadata),
      );
    },
  );
  routes.get(
    '/dids/*scope_name/meta',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: JSON_ONLY,
      summary: 'The metadata of a DID.',
      query: queryOf({
        plugin: convertedBy(queryText(), (text) => pluginOf(text ?? 'DID_COLUMN')).describe(
          'DID_COLUMN (default), JSON or ALL.',
        ),
      }),
      raises: [DataIdentifierNotFound, UnsupportedMetadataPlugin],
    },
    async (ctx, { params, query }) => {
      const did = params.scope_name;
      const { plugin } = query;
      const document = await findDid(services.readModels, did.scope, did.name);
      if (!document) throw new DataIdentifierNotFound(`Data identifier '${did.scope}:${did.name}' not found`);
      sendJson(ctx, metadataOf(document, plugin));
    },
  );
  routes.post(
    '/dids/*scope_name/meta',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      ...setErrors,
      summary: 'Sets several metadata keys of a DID.',
      body: jsonObjectBody(
        { meta: objectIn('meta', {}), recursive: optionalBoolean(false) },
        { description: '`meta`: `{key: value}`; `recursive`.' },
      ),
    },
    async (ctx, { params, body: { meta, recursive } }) => {
      const did = params.scope_name;
      await created(ctx, services, (metadata) =>
        setMetadata(services.commands, { ...did, meta, recursive, single: false }, metadata),
      );
    },
  );
  routes.delete(
    '/dids/*scope_name/meta',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      errors: { NotImplementedError: 409 },
      summary: 'Removes one JSON metadata key of a DID.',
      query: queryOf({
        key: convertedBy(queryText(), (key) => {
          if (key === undefined) throw new KeyNotFound('No key provided to remove');
          assertKeyCharacters(key);
          return key;
        }).describe('The key (required).'),
      }),
      raises: [DataIdentifierNotFound, KeyNotFound],
    },
    async (ctx, { params, query }) => {
      const did = params.scope_name;
      const { key } = query;
      await ok(ctx, services, (metadata) => deleteMetadata(services.commands, { ...did, key }, metadata));
    },
  );
};
