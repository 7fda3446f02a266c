import { addReplicas } from '../../../commands/replica/replicaRegistrationCommands.ts';
import {
  quarantineReplicas,
  refuseReplicaDeletion,
  setTombstones,
  updateReplicaStates,
} from '../../../commands/replica/replicaUpdates.ts';
import {
  AccessDenied,
  DataIdentifierNotFound,
  InputValidationError,
  InvalidPath,
  ReplicaNotFound,
  RSENotFound,
  ValueError,
} from '../../../domain/shared/errors.ts';
import { didRefShape, listIn, objectIn } from '../did/didParams.ts';
import { sendOk } from '../../http.ts';
import { jsonObjectBody, jsonObjectBodyOf, optionalBoolean, requiredValue } from '../../params.ts';
import { checkedBy, missingAs, refusedAs } from '../../routeInput.ts';
import { isRecord } from '../../../domain/shared/narrowing.ts';
import { z } from 'zod';
import { REPLICA_STATE_CHANGES, replicaFilesIn, rseNameIn } from './replicaParams.ts';
import { commandMetadata, created, ok, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import { registerBadReplicaDeclarationRoutes, registerBadReplicaListRoutes } from './badReplicaRoutes.ts';
import {
  registerDatasetReplicaRoutes,
  registerDatasetReplicasBulkRoutes,
  registerDatasetsOnRseRoutes,
} from './datasetReplicaRoutes.ts';
import { registerReplicaGetRoute, registerReplicaListRoute } from './replicaListRoutes.ts';

const noRse = () => new ValueError("Each replica needs 'rse', 'scope' and 'name'");

/** Replicas to give a tombstone: `rse` looked for first, then the DID, then the RSE's name. */
const TOMBSTONES = listIn(
  'replicas',
  objectIn('replicas', { rse: missingAs(requiredValue(), noRse) }).pipe(
    objectIn('replicas', { ...didRefShape('replicas'), rse: rseNameIn() }).transform(({ scope, name, rse }) => ({
      scope,
      name,
      rse,
    })),
  ),
  Number.POSITIVE_INFINITY,
)
  .nullish()
  .transform((replicas) => replicas ?? []);

const pathMissing = () => new InputValidationError('Replica info must include path');

/** A dark file to quarantine: its path (required), and what is known of it. */
const DARK_FILE = objectIn('replicas', {
  path: missingAs(refusedAs(z.string(), pathMissing), pathMissing),
  scope: z.unknown().optional(),
  name: z.unknown().optional(),
  bytes: z.unknown().optional(),
}).transform(({ path, scope, name, bytes }) => {
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
  return { path, scope: text(scope), name: text(name), bytes: typeof bytes === 'number' ? bytes : null };
});

/**
 * `POST /replicas/quarantine`: no replicas is nothing to do (nothing else is read); else either
 * `rse` or `rse_id` (not both) is looked for before the replicas are read, and the RSE's name
 * after them.
 */
const QUARANTINE_VALUES = z.looseObject({
  replicas: listIn('replicas', DARK_FILE, Number.POSITIVE_INFINITY),
  rse: rseNameIn().nullish(),
  rse_id: z.unknown().optional(),
});
const QUARANTINE = z
  .preprocess(
    (body) =>
      isRecord(body) && (body.replicas == null || (Array.isArray(body.replicas) && body.replicas.length === 0))
        ? {}
        : body,
    checkedBy(
      z.looseObject({ replicas: listIn('replicas', z.unknown(), Number.POSITIVE_INFINITY).optional() }),
      (body) => {
        if (body.replicas !== undefined && (body.rse == null) === (body.rse_id == null))
          throw new InputValidationError('Either RSE name or RSE id must be specified, but not both');
      },
    ).pipe(QUARANTINE_VALUES.partial({ replicas: true })),
  )
  .transform(({ replicas, rse, rse_id: rseId }) =>
    replicas === undefined ? undefined : { rse: rse != null ? { name: rse } : { id: String(rseId) }, replicas },
  );

/**
 * The /replicas area (rest-api-reference.md §1.19). The bare `<path:scope_name>` ranks after
 * every static word, so it also answers GET on a POST-only word (`GET /replicas/list` cannot be
 * read as scope and name: 400).
 */
const EMPTY_OK = { status: 200, type: 'text/html; charset=utf-8', description: 'Done: an empty body.' };

export const registerReplicaRoutes = (routes: RouteTable, services: Services): void => {
  registerReplicaListRoute(routes, services);
  for (const path of ['/replicas', '/replicas/']) {
    routes.post(
      path,
      {
        summary: 'Registers files and their replicas on an RSE.',
        body: jsonObjectBody(
          { rse: rseNameIn(), files: replicaFilesIn('dids'), ignore_availability: optionalBoolean(false) },
          {
            description:
              '`rse`; `files`: `{scope, name, bytes, adler32?, md5?, pfn?, meta?}` each; `ignore_availability`.',
          },
        ),
        raises: [RSENotFound],
      },
      async (ctx, { body }) => {
        const { rse, files, ignore_availability: ignoreAvailability } = body;
        await created(ctx, services, (metadata) =>
          addReplicas(services.commands, { rse, files, ignoreAvailability }, metadata),
        );
      },
    );
    routes.put(
      path,
      {
        summary: 'Changes the states of replicas on an RSE.',
        body: jsonObjectBody(
          { rse: rseNameIn(), files: REPLICA_STATE_CHANGES },
          { description: '`rse`; `files`: `{scope, name, state}` each.' },
        ),
        raises: [RSENotFound, ReplicaNotFound],
      },
      async (ctx, { body }) => {
        const { rse, files } = body;
        await ok(ctx, services, (metadata) => updateReplicaStates(services.commands, { rse, files }, metadata));
      },
    );
    routes.delete(
      path,
      {
        summary: 'Deleting replicas is refused to every account, as Rucio refuses it.',
        // Rucio looks for `files` before `rse`, and reads neither further.
        body: jsonObjectBody({ files: requiredValue(), rse: requiredValue() }, { description: '`rse`, `files`.' }),
        success: 'none',
        raises: [AccessDenied],
      },
      async (ctx, { body }) => {
        await refuseReplicaDeletion(services.commands, { rse: String(body.rse) }, commandMetadata(ctx, services.clock));
      },
    );
  }
  registerBadReplicaListRoutes(routes, services);
  registerBadReplicaDeclarationRoutes(routes, services);
  registerDatasetsOnRseRoutes(routes, services);
  registerDatasetReplicasBulkRoutes(routes, services);
  for (const path of ['/replicas/quarantine', '/replicas/quarantine/']) {
    // Quarantine is the one route where Rucio answers AccessDenied with 403.
    routes.post(
      path,
      {
        errors: { AccessDenied: 403 },
        summary: 'Quarantines dark files found on an RSE (admins).',
        body: jsonObjectBodyOf(QUARANTINE, {
          documentedBy: QUARANTINE_VALUES,
          description: '`rse` or `rse_id`; `replicas`: `{path, scope?, name?, bytes?}` each.',
        }),
        success: EMPTY_OK,
        raises: [AccessDenied, InputValidationError, InvalidPath],
      },
      async (ctx, { body }) => {
        if (body === undefined) {
          sendOk(ctx);
          return;
        }
        await ok(ctx, services, (metadata) => quarantineReplicas(services.commands, body, metadata));
      },
    );
  }
  for (const path of ['/replicas/tombstone', '/replicas/tombstone/']) {
    routes.post(
      path,
      {
        summary: 'Gives replicas a tombstone of now, for deletion.',
        body: jsonObjectBody({ replicas: TOMBSTONES }, { description: '`replicas`: `{rse, scope, name}` each.' }),
        raises: [DataIdentifierNotFound],
      },
      async (ctx, { body: { replicas } }) => {
        await created(ctx, services, (metadata) => setTombstones(services.commands, { replicas }, metadata));
      },
    );
  }
  registerDatasetReplicaRoutes(routes, services);
  registerReplicaGetRoute(routes, services);
};
