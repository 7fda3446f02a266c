import { addDiracFiles, type DiracFile } from '../../../commands/dirac/diracFiles.ts';
import {
  AccessDenied,
  DataIdentifierAlreadyExists,
  DataIdentifierNotFound,
  InvalidObject,
  InvalidPath,
  RSENotFound,
  ScopeNotFound,
  UnsupportedOperation,
} from '../../../domain/shared/errors.ts';
import { NAME_RULES } from '../../../domain/shared/names.ts';
import { sendText } from '../../http.ts';
import { booleanKey, jsonObjectBodyReadBy, requiredKey } from '../../params.ts';
import { runCommand, type RouteOptions, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import { asArray, asObject } from '../did/didParams.ts';
import { rseName } from '../replica/replicaParams.ts';

/**
 * DIRAC's catalogue integration (Rucio's dirac.py): `POST /dirac/addfiles`, with or without the
 * trailing slash, answers `Created` as text. UnsupportedOperation (a path taken by a DID of the
 * other kind) is 405 here and a database failure 503, as in Rucio.
 */

const problem = (detail: string): never => {
  throw new InvalidObject(`Problem validating lfns: ${detail}`);
};

const CHECKSUMS = { adler32: /^[a-fA-F\d]{8}$/, md5: /^[a-fA-F\d]{32}$/ } as const;

/** Optional text of an entry: absent or null is null; anything but text is refused. */
const optionalText = (item: Readonly<Record<string, unknown>>, key: string, pattern?: RegExp): string | null => {
  const value = item[key] ?? null;
  if (value === null) return null;
  if (typeof value !== 'string') return problem(`the ${key} ${JSON.stringify(value)} is not a string`);
  if (pattern && !pattern.test(value)) return problem(`${JSON.stringify(value)} does not match '${pattern.source}'`);
  return value;
};

/** One entry of `lfns`: `lfn`, `rse`, `bytes` required; `adler32`, `md5`, `guid`, `pfn`, `meta` optional. */
const diracFileOf = (value: unknown): DiracFile => {
  const item = asObject('lfns', value);
  const lfn = requiredKey(item, 'lfn');
  // The pattern only: the path's elements are diracHierarchy's to check (InvalidPath), and the
  // names' segments the DID decider's whatever the route.
  if (typeof lfn !== 'string' || lfn.length > NAME_RULES.name.maxLength || !NAME_RULES.name.pattern.test(lfn))
    return problem(`${JSON.stringify(lfn)} is not a file name`);
  const bytes = requiredKey(item, 'bytes');
  if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0)
    return problem(`${JSON.stringify(bytes)} is not a number of bytes`);
  const pfn = optionalText(item, 'pfn');
  return {
    lfn,
    rse: rseName(requiredKey(item, 'rse')),
    bytes,
    adler32: optionalText(item, 'adler32', CHECKSUMS.adler32),
    md5: optionalText(item, 'md5', CHECKSUMS.md5),
    guid: optionalText(item, 'guid'),
    ...(pfn !== null ? { pfn } : {}),
    meta: item.meta === undefined || item.meta === null ? {} : asObject('lfns', item.meta),
  };
};

/** `parents_metadata`: an object of paths to metadata objects; absent or null for none. */
const parentsMetadataOf = (value: unknown): Record<string, Record<string, unknown>> => {
  if (value === undefined || value === null) return {};
  const parents = asObject('parents_metadata', value);
  return Object.fromEntries(Object.entries(parents).map(([path, meta]) => [path, asObject('parents_metadata', meta)]));
};

/** The body: the files, whether RSE availability is ignored, the parents' metadata. */
const addFilesRequestOf = (parameters: Readonly<Record<string, unknown>>) => ({
  files: asArray('lfns', requiredKey(parameters, 'lfns'), 10_000).map(diracFileOf),
  ignoreAvailability: booleanKey(parameters, 'ignore_availability', false),
  parentsMetadata: parentsMetadataOf(parameters.parents_metadata),
});

const ADD_FILES = {
  errors: { UnsupportedOperation: 405, DatabaseException: 503 },
  summary:
    'Registers files by their DIRAC paths with their replicas, datasets (rule ANY=true, grouping NONE), containers and rules, in one atomic step.',
  body: jsonObjectBodyReadBy(addFilesRequestOf, {
    description:
      '`lfns`: `[{lfn, rse, bytes, adler32?, md5?, guid?, pfn?, meta?}]`; `ignore_availability` (admins); `parents_metadata`: `{path: {key: value}}` for the datasets and containers created.',
  }),
  success: { status: 201, type: 'text/html; charset=utf-8', description: 'The text `Created`.' },
  raises: [
    InvalidPath,
    AccessDenied,
    UnsupportedOperation,
    DataIdentifierAlreadyExists,
    DataIdentifierNotFound,
    RSENotFound,
    ScopeNotFound,
    InvalidObject,
  ],
} satisfies RouteOptions;

export const registerDiracRoutes = (routes: RouteTable, services: Services): void => {
  for (const path of ['/dirac/addfiles', '/dirac/addfiles/'])
    routes.post(path, ADD_FILES, async (ctx, { body: request }) => {
      await runCommand(ctx, services, (metadata) => addDiracFiles(services.commands, request, metadata));
      sendText(ctx, 'Created', 201);
    });
};
