import { z } from 'zod';
import {
  addOpenDataDid,
  deleteOpenDataDid,
  updateOpenDataDid,
  type OpenDataChanges,
} from '../../../commands/opendata/opendataCommands.ts';
import { settingValue, SETTINGS } from '../../../domain/config/settings.ts';
import { openDataStateNamed, type OpenDataState } from '../../../domain/opendata/opendata.ts';
import { openDataDidNotFound } from '../../../domain/opendata/opendataDecider.ts';
import {
  AccessDenied,
  ConfigurationError,
  DataIdentifierNotFound,
  InputValidationError,
  ValueError,
} from '../../../domain/shared/errors.ts';
import {
  OpenDataDataIdentifierAlreadyExists,
  OpenDataDataIdentifierNotFound,
  OpenDataDuplicateDOI,
  OpenDataDuplicateRecordID,
  OpenDataError,
  OpenDataInvalidState,
  OpenDataInvalidStateUpdate,
} from '../../../domain/opendata/opendataErrors.ts';
import { LIMITS } from '../../../domain/shared/limits.ts';
import { configSections } from '../../../projections/config/configQueries.ts';
import {
  findOpenDataDid,
  listOpenDataDids,
  openDataFiles,
  openDataRuleId,
} from '../../../projections/opendata/opendataQueries.ts';
import { JSON_ONLY, JSON_TYPE, sendChunks, sendJson } from '../../http.ts';
import { checkJsonBounds } from '../../jsonBounds.ts';
import { jsonObjectBodyOf, pathOf, pathText, queryOf, queryText } from '../../params.ts';
import { convertedBy, refusedAs } from '../../routeInput.ts';
import { runCommand, type RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
import { parseScopeName } from '../did/didParams.ts';
import type { DidRef } from '../../../domain/did/did.ts';
import { FilesSummary, openDataEntry, openDataListItem } from './opendataRendering.ts';

/**
 * The open data catalogue (Rucio 39's opendata.py and opendata_public.py): `/opendata/dids` for
 * accounts with a token (entries in any state; changes for admins and the scope's owner), and
 * `/opendata/public/dids` for anyone, which shows PUBLIC entries only.
 */

/** Flask's `type=int`: a whole number, or nothing when the text is not one; never negative here. */
const queryCount = (name: string) =>
  convertedBy(queryText(), (text) => {
    if (text === undefined || !/^\s*[+-]?\d+\s*$/.test(text)) return undefined;
    const value = Number(text.trim());
    if (!Number.isSafeInteger(value) || value < 0)
      throw new ValueError(`'${name}' must be a whole number from 0, not ${text}.`);
    return value;
  });

/** A switch of the single-entry view: only `1` turns it on. */
const querySwitch = (fallback: '0' | '1') => queryText().transform((text) => (text ?? fallback).toLowerCase() === '1');

/** `state`: only entries in that state (checked before the rest, as Rucio's view reads it first). */
const stateQuery = (description: string) =>
  convertedBy(queryText(), (text) => (text === undefined ? undefined : stateOf(text))).describe(description);

const LIST_QUERY = {
  limit: queryCount('limit').describe(
    'At most this many entries (a whole number; other text is ignored, as Flask ignores it).',
  ),
  offset: queryCount('offset').describe('Entries to skip first.'),
};
type ListQuery = z.output<z.ZodObject<typeof LIST_QUERY>>;
const GET_QUERY = {
  files: querySwitch('0').describe(
    '`1`: the files, with the PFNs of their disk replicas on `opendata.rse_expression`, and a summary (default 0).',
  ),
  meta: querySwitch('0').describe('`1`: the metadata document (default 0).'),
  doi: querySwitch('1').describe('`1` (default): the DOI.'),
  record_id: querySwitch('1').describe('`1` (default): the record id.'),
};
type GetQuery = z.output<z.ZodObject<typeof GET_QUERY>>;

/** The entry's DID, from its two path variables. */
const entryPath = pathOf({ scope: pathText(), name: pathText() }).transform(({ scope, name }) =>
  parseScopeName(`${scope}/${name}`),
);

/** Rucio's open data views answer 400 for every exception they do not name; these keep their own status. */
const READ_RAISES = [OpenDataDataIdentifierNotFound, OpenDataError, ConfigurationError];

/** A state as the query or body gives it; anything else is Rucio's OpenDataError listing the states. */
const stateOf = (value: unknown): OpenDataState => {
  const state = typeof value === 'string' ? openDataStateNamed(value) : undefined;
  if (!state)
    throw new OpenDataError(
      `Invalid state ${JSON.stringify(value)}. Valid open data states are: draft, public, suspended.`,
    );
  return state;
};

/** The listing: `{dids, offset, total}`, where `total` counts the entries of this page, as in Rucio. */
const sendList = async (
  ctx: AppContext,
  services: Services,
  state: OpenDataState | undefined,
  { limit, offset }: ListQuery,
) => {
  const documents = listOpenDataDids(services.readModels, {
    ...(state ? { state } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(offset !== undefined ? { offset } : {}),
  });
  async function* chunks(): AsyncGenerator<string> {
    const iterator = documents[Symbol.asyncIterator]();
    let total = 0;
    let next = await iterator.next();
    yield `{"offset":${offset ?? 0},"dids":[`;
    for (; !next.done; next = await iterator.next()) {
      yield `${total > 0 ? ',' : ''}${JSON.stringify(openDataListItem(next.value))}`;
      total += 1;
    }
    yield `],"total":${total}}`;
  }
  await sendChunks(ctx, chunks(), JSON_TYPE);
};

/** One entry; with `files`, the files stream out, followed by their summary. */
const sendEntry = async (
  ctx: AppContext,
  services: Services,
  did: DidRef,
  state: OpenDataState | undefined,
  query: GetQuery,
) => {
  const document = await findOpenDataDid(services.readModels, did.scope, did.name);
  if (!document || (state !== undefined && document.state !== state)) throw openDataDidNotFound(did.scope, did.name);
  const sections = await configSections(services.readModels);
  const rule = await openDataRuleId(services.readModels, did, {
    rseExpression: settingValue(sections, SETTINGS.opendataRuleRseExpression),
    account: settingValue(sections, SETTINGS.opendataRuleAccount),
    copies: settingValue(sections, SETTINGS.opendataRuleCopies),
  });
  const entry = openDataEntry(
    document,
    {
      doi: query.doi,
      recordId: query.record_id,
      meta: query.meta,
    },
    rule,
  );
  if (!query.files) {
    sendJson(ctx, entry);
    return;
  }
  const rseExpression = settingValue(sections, SETTINGS.opendataRseExpression);
  if (rseExpression === '')
    throw new ConfigurationError(
      'Listing open data files needs the configuration option opendata.rse_expression (the RSEs whose disk replicas are listed).',
    );
  const summary = new FilesSummary();
  const files = openDataFiles(services.readModels, did, rseExpression);
  async function* chunks(): AsyncGenerator<string> {
    // The first file is read before anything is sent: an invalid expression is still an error answer.
    let next = await files.next();
    const head = JSON.stringify(entry);
    yield `${head.slice(0, -1)},"files":[`;
    let first = true;
    for (; !next.done; next = await files.next()) {
      summary.add(next.value);
      yield `${first ? '' : ','}${JSON.stringify(next.value)}`;
      first = false;
    }
    yield `],"files_summary":${JSON.stringify(summary)}}`;
  }
  await sendChunks(ctx, chunks(), JSON_TYPE);
};

/** Python's truthiness, which Rucio's "nothing to update" check uses: null, false, 0, '' and {} count as nothing. */
const given = (value: unknown): boolean =>
  value !== undefined &&
  value !== null &&
  value !== false &&
  value !== 0 &&
  value !== '' &&
  !(typeof value === 'object' && Object.keys(value).length === 0);

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * `meta`: a JSON object, or its text (Rucio's gateway parses it), held to the bounds of a body and
 * to a size of its own.
 */
const metaOf = (value: unknown): Record<string, unknown> | undefined => {
  if (value === undefined) return undefined;
  let meta = value;
  if (typeof value === 'string') {
    try {
      meta = JSON.parse(value);
    } catch (error) {
      throw new ValueError(`Invalid JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
    checkJsonBounds(meta);
  }
  if (!isJsonObject(meta)) throw new InputValidationError("'meta' must be a JSON object.");
  if (JSON.stringify(meta).length > LIMITS.opendataMetaLength)
    throw new InputValidationError(`'meta' is longer than ${LIMITS.opendataMetaLength} characters of JSON.`);
  return meta;
};

/** `int(record_id)` as Rucio's view does it: a whole number, or text that reads as one. */
const recordIdOf = (value: unknown): number | undefined => {
  if (value === undefined) return undefined;
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)
        ? Number(value.trim())
        : Number.NaN;
  if (!Number.isSafeInteger(number)) throw new ValueError(`invalid literal for int(): ${JSON.stringify(value)}`);
  return number;
};

/** An option of the update: null is the same as absent (Rucio's view passes None on). */
const option = <T extends z.ZodType>(schema: T) => z.preprocess((value) => value ?? undefined, schema.optional());

/**
 * The body of `update_opendata_did`, read as Rucio's view and gateway read it: at least one
 * option must change something.
 */
const CHANGES_GIVEN = z.looseObject({
  state: option(convertedBy(z.unknown(), stateOf)),
  meta: option(convertedBy(z.unknown(), metaOf)),
  doi: option(refusedAs(z.string(), () => new InputValidationError('The DOI must be a string.'))),
  record_id: option(convertedBy(z.unknown(), recordIdOf)),
});
const CHANGES = convertedBy(CHANGES_GIVEN, ({ state, meta, doi, record_id: recordId }): OpenDataChanges => {
  if (![state, meta, doi, recordId].some(given))
    throw new InputValidationError("Nothing to update: give at least one of 'state', 'meta', 'doi' or 'record_id'.");
  return {
    ...(state !== undefined ? { state } : {}),
    ...(meta !== undefined ? { meta } : {}),
    ...(doi !== undefined ? { doi } : {}),
    ...(recordId !== undefined ? { recordId } : {}),
  };
});

export const registerOpenDataRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/opendata/dids',
    {
      accept: JSON_ONLY,
      summary: 'Open data entries in any state, by last update: `{dids, offset, total}`.',
      query: queryOf({
        state: stateQuery('draft, public or suspended (any case): only entries in that state.'),
        ...LIST_QUERY,
      }),
      raises: [OpenDataError],
    },
    async (ctx, { query }) => {
      await sendList(ctx, services, query.state, query);
    },
  );
  routes.get(
    '/opendata/public/dids',
    {
      auth: false,
      accept: JSON_ONLY,
      summary: 'PUBLIC open data entries, by last update, without a token.',
      query: queryOf(LIST_QUERY),
    },
    async (ctx, { query }) => sendList(ctx, services, 'PUBLIC', query),
  );
  routes.get(
    '/opendata/dids/:scope/:name',
    {
      params: entryPath,
      accept: JSON_ONLY,
      summary: 'One open data entry; `state` answers it only in that state.',
      query: queryOf({ state: stateQuery('draft, public or suspended.'), ...GET_QUERY }),
      raises: READ_RAISES,
    },
    async (ctx, { params, query }) => {
      await sendEntry(ctx, services, params, query.state, query);
    },
  );
  routes.get(
    '/opendata/public/dids/:scope/:name',
    {
      params: entryPath,
      auth: false,
      accept: JSON_ONLY,
      summary: 'One PUBLIC open data entry, without a token.',
      query: queryOf(GET_QUERY),
      raises: READ_RAISES,
    },
    async (ctx, { params, query }) => sendEntry(ctx, services, params, 'PUBLIC', query),
  );
  routes.post(
    '/opendata/dids/:scope/:name',
    {
      params: entryPath,
      summary: 'Registers an existing DID as open data, as a DRAFT (admins and the scope owner).',
      body: 'none',
      success: { status: 201, type: JSON_TYPE, description: 'An empty body.' },
      raises: [DataIdentifierNotFound, OpenDataDataIdentifierAlreadyExists, AccessDenied],
    },
    async (ctx, { params: did }) => {
      await runCommand(ctx, services, (metadata) => addOpenDataDid(services.commands, did, metadata));
      ctx.status = 201;
      ctx.set('Content-Type', JSON_TYPE);
      ctx.body = '';
    },
  );
  routes.put(
    '/opendata/dids/:scope/:name',
    {
      params: entryPath,
      summary:
        'Updates an open data entry: state, metadata, DOI, record id, all or nothing (admins and the scope owner).',
      body: jsonObjectBodyOf(CHANGES, {
        documentedBy: CHANGES_GIVEN,
        description:
          '`state` (draft, public, suspended), `meta` (a JSON object, or its text), `doi` (10.NNNN/suffix, unique), `record_id` (a whole number, unique).',
      }),
      success: {
        status: 200,
        type: JSON_TYPE,
        description:
          'What was set: `state_old`/`state_new`, `meta_new`, `doi_old`/`doi_new`, `record_id_old`/`record_id_new`.',
      },
      raises: [
        OpenDataDataIdentifierNotFound,
        OpenDataInvalidStateUpdate,
        OpenDataDuplicateDOI,
        OpenDataDuplicateRecordID,
        InputValidationError,
        OpenDataError,
        AccessDenied,
      ],
    },
    async (ctx, { params: did, body: changes }) => {
      const { result } = await runCommand(ctx, services, (metadata) =>
        updateOpenDataDid(services.commands, { ...did, changes }, metadata),
      );
      sendJson(ctx, result);
    },
  );
  routes.delete(
    '/opendata/dids/:scope/:name',
    {
      params: entryPath,
      summary: 'Removes a DRAFT entry from the catalogue (admins and the scope owner).',
      success: { status: 204, description: 'No body.' },
      raises: [OpenDataDataIdentifierNotFound, OpenDataInvalidState, AccessDenied],
    },
    async (ctx, { params: did }) => {
      await runCommand(ctx, services, (metadata) => deleteOpenDataDid(services.commands, did, metadata));
      ctx.status = 204;
    },
  );
};
