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
import { z } from 'zod';
import { jsonObjectBodyOf, optionalBoolean, orNull } from '../../params.ts';
import { refusedAs, type Refusal } from '../../routeInput.ts';
import { runCommand, type RouteOptions, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import { invalidIn, listIn, objectIn } from '../did/didParams.ts';
import { rseNameIn } from '../replica/replicaParams.ts';

/**
 * DIRAC's catalogue integration (Rucio's dirac.py): `POST /dirac/addfiles`, with or without the
 * trailing slash, answers `Created` as text. UnsupportedOperation (a path taken by a DID of the
 * other kind) is 405 here and a database failure 503, as in Rucio.
 */

const invalid = (detail: (refusal: Refusal) => string) => invalidIn('lfns', detail);

const CHECKSUMS = { adler32: /^[a-fA-F\d]{8}$/, md5: /^[a-fA-F\d]{32}$/ } as const;

/** Optional text of an entry: absent or null is null; anything but text (of `pattern`) is refused. */
const optionalText = (pattern?: RegExp) =>
  orNull(
    refusedAs(
      pattern ? z.string().regex(pattern) : z.string(),
      invalid(({ issue, input, key }) =>
        issue.code === 'invalid_type'
          ? `the ${String(key)} ${JSON.stringify(input)} is not a string`
          : `${JSON.stringify(input)} does not match '${pattern?.source ?? ''}'`,
      ),
    ),
  );

/**
 * One entry of `lfns`: `lfn`, `rse`, `bytes` required; `adler32`, `md5`, `guid`, `pfn`, `meta`
 * optional. The lfn is held to the name's pattern only: the path's elements are diracHierarchy's
 * to check (InvalidPath), and the names' segments the DID decider's whatever the route.
 */
const DIRAC_FILE = objectIn('lfns', {
  lfn: refusedAs(
    z.string().max(NAME_RULES.name.maxLength).regex(NAME_RULES.name.pattern),
    invalid(({ input }) => `${JSON.stringify(input)} is not a file name`),
  ),
  bytes: refusedAs(
    z.number().refine(Number.isSafeInteger).min(0),
    invalid(({ input }) => `${JSON.stringify(input)} is not a number of bytes`),
  ),
  pfn: optionalText(),
  rse: rseNameIn(),
  adler32: optionalText(CHECKSUMS.adler32),
  md5: optionalText(CHECKSUMS.md5),
  guid: optionalText(),
  meta: objectIn('lfns', {})
    .nullish()
    .transform((meta) => meta ?? {}),
}).transform(({ lfn, rse, bytes, adler32, md5, guid, pfn, meta }): DiracFile => ({
  lfn,
  rse,
  bytes,
  adler32,
  md5,
  guid,
  ...(pfn !== null ? { pfn } : {}),
  meta,
}));

/** `parents_metadata`: an object of paths to metadata objects; absent or null for none. */
const PARENTS_METADATA = refusedAs(
  z.record(z.string(), objectIn('parents_metadata', {})),
  invalidIn('parents_metadata', ({ input }) => `${JSON.stringify(input)} is not of type 'object'`),
)
  .nullish()
  .transform((parents) => parents ?? {});

/** The body: the files, whether RSE availability is ignored, the parents' metadata. */
const ADD_FILES_REQUEST = z
  .looseObject({
    lfns: listIn('lfns', DIRAC_FILE, 10_000),
    ignore_availability: optionalBoolean(false),
    parents_metadata: PARENTS_METADATA,
  })
  .transform(({ lfns, ignore_availability, parents_metadata }) => ({
    files: lfns,
    ignoreAvailability: ignore_availability,
    parentsMetadata: parents_metadata,
  }));

const ADD_FILES = {
  errors: { UnsupportedOperation: 405, DatabaseException: 503 },
  summary:
    'Registers files by their DIRAC paths with their replicas, datasets (rule ANY=true, grouping NONE), containers and rules, in one atomic step.',
  body: jsonObjectBodyOf(ADD_FILES_REQUEST, {
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
