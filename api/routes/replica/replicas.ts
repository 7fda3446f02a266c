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
import { asArray, asObject, didRefItem } from '../did/didParams.ts';
import { sendOk } from '../../http.ts';
import { booleanKey, jsonObjectBody, requiredKey } from '../../params.ts';
import { replicaFiles, replicaStateChanges, rseName } from './replicaParams.ts';
import { commandMetadata, created, ok, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import { registerBadReplicaDeclarationRoutes, registerBadReplicaListRoutes } from './badReplicaRoutes.ts';
import {
  registerDatasetReplicaRoutes,
  registerDatasetReplicasBulkRoutes,
  registerDatasetsOnRseRoutes,
} from './datasetReplicaRoutes.ts';
import { registerReplicaGetRoute, registerReplicaListRoute } from './replicaListRoutes.ts';

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
          {},
          {
            description:
              '`rse`; `files`: `{scope, name, bytes, adler32?, md5?, pfn?, meta?}` each; `ignore_availability`.',
          },
        ),
        raises: [RSENotFound],
      },
      async (ctx, { body: parameters }) => {
        const rse = rseName(requiredKey(parameters, 'rse'));
        const files = replicaFiles('dids', requiredKey(parameters, 'files'));
        const ignoreAvailability = booleanKey(parameters, 'ignore_availability', false);
        await created(ctx, services, (metadata) =>
          addReplicas(services.commands, { rse, files, ignoreAvailability }, metadata),
        );
      },
    );
    routes.put(
      path,
      {
        summary: 'Changes the states of replicas on an RSE.',
        body: jsonObjectBody({}, { description: '`rse`; `files`: `{scope, name, state}` each.' }),
        raises: [RSENotFound, ReplicaNotFound],
      },
      async (ctx, { body: parameters }) => {
        const rse = rseName(requiredKey(parameters, 'rse'));
        const files = replicaStateChanges(requiredKey(parameters, 'files'));
        await ok(ctx, services, (metadata) => updateReplicaStates(services.commands, { rse, files }, metadata));
      },
    );
    routes.delete(
      path,
      {
        summary: 'Deleting replicas is refused to every account, as Rucio refuses it.',
        body: jsonObjectBody({}, { description: '`rse`, `files`.' }),
        success: 'none',
        raises: [AccessDenied],
      },
      async (ctx, { body: parameters }) => {
        requiredKey(parameters, 'files');
        await refuseReplicaDeletion(
          services.commands,
          { rse: String(requiredKey(parameters, 'rse')) },
          commandMetadata(ctx, services.clock),
        );
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
        body: jsonObjectBody(
          {},
          { description: '`rse` or `rse_id`; `replicas`: `{path, scope?, name?, bytes?}` each.' },
        ),
        success: EMPTY_OK,
        raises: [AccessDenied, InputValidationError, InvalidPath],
      },
      async (ctx, { body: parameters }) => {
        const replicas =
          parameters.replicas === undefined || parameters.replicas === null
            ? []
            : asArray('replicas', parameters.replicas, Number.POSITIVE_INFINITY);
        if (replicas.length === 0) {
          sendOk(ctx);
          return;
        }
        const [rse, rseId] = [parameters.rse ?? null, parameters.rse_id ?? null];
        if ((rse === null) === (rseId === null))
          throw new InputValidationError('Either RSE name or RSE id must be specified, but not both');
        const dark = replicas.map((entry) => {
          const item = asObject('replicas', entry);
          if (typeof item.path !== 'string') throw new InputValidationError('Replica info must include path');
          const text = (key: string) => (typeof item[key] === 'string' && item[key] !== '' ? item[key] : null);
          return {
            path: item.path,
            scope: text('scope'),
            name: text('name'),
            bytes: typeof item.bytes === 'number' ? item.bytes : null,
          };
        });
        const target = rse !== null ? { name: rseName(rse) } : { id: String(rseId) };
        await ok(ctx, services, (metadata) =>
          quarantineReplicas(services.commands, { rse: target, replicas: dark }, metadata),
        );
      },
    );
  }
  for (const path of ['/replicas/tombstone', '/replicas/tombstone/']) {
    routes.post(
      path,
      {
        summary: 'Gives replicas a tombstone of now, for deletion.',
        body: jsonObjectBody({}, { description: '`replicas`: `{rse, scope, name}` each.' }),
        raises: [DataIdentifierNotFound],
      },
      async (ctx, { body: parameters }) => {
        const replicas = asArray('replicas', parameters.replicas ?? [], Number.POSITIVE_INFINITY).map((entry) => {
          const item = asObject('replicas', entry);
          if (!('rse' in item)) throw new ValueError("Each replica needs 'rse', 'scope' and 'name'");
          return { ...didRefItem('replicas', item), rse: rseName(item.rse) };
        });
        await created(ctx, services, (metadata) => setTombstones(services.commands, { replicas }, metadata));
      },
    );
  }
  registerDatasetReplicaRoutes(routes, services);
  registerReplicaGetRoute(routes, services);
};
