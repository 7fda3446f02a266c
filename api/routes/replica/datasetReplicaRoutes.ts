import { DataIdentifierNotFound, InvalidObject, RSENotFound, ValueError } from '../../../domain/shared/errors.ts';
import {
  datasetReplicasOnRse,
  deepDatasetReplicas,
  storedDatasetReplicas,
} from '../../../projections/replica/datasetReplicaQueries.ts';
import { didsNamed, findDid } from '../../../projections/did/didQueries.ts';
import { scopeNamePath } from '../did/didParams.ts';
import { mapStream, sendStream, STREAM_ONLY } from '../../http.ts';
import { jsonObjectBody, pathOf, pathText, queryBoolean, queryOf, requiredValue } from '../../params.ts';
import { readDidsIn } from './replicaParams.ts';
import { refusedAs } from '../../routeInput.ts';
import { datasetReplicaJson } from './replicaRendering.ts';
import type { RouteTable } from '../../route.ts';
import { activeRse } from '../rse/rseViews.ts';
import type { Services } from '../../services.ts';

/**
 * Dataset replicas. Rucio's stored rows exist only where rules placed a dataset; here they are
 * kept for every RSE holding replicas of a dataset's files (projections/datasetReplicas.ts), and
 * `deep=true` recomputes them from the file replicas as Rucio does.
 */

/** GET /replicas/rse/{rse}: the dataset replicas on one RSE. */
export const registerDatasetsOnRseRoutes = (routes: RouteTable, services: Services): void => {
  for (const path of ['/replicas/rse/:rse', '/replicas/rse/:rse/']) {
    routes.get(
      path,
      {
        params: pathOf({ rse: pathText() }),
        accept: STREAM_ONLY,
        summary: 'The dataset replicas on an RSE.',
        raises: [RSENotFound],
      },
      async (ctx, { params }) => {
        const rse = await activeRse(services, params.rse);
        await sendStream(ctx, mapStream(datasetReplicasOnRse(services.readModels, rse.id), datasetReplicaJson));
      },
    );
  }
};

/**
 * The datasets of `POST /replicas/datasets_bulk`: an empty list is refused before the DIDs are
 * read, and their problems are prefixed as Rucio's view prefixes them.
 */
const DATASET_DIDS = refusedAs(
  requiredValue().refine((dids) => !(Array.isArray(dids) && dids.length === 0)),
  () => new ValueError('List of DIDs is empty'),
).pipe(readDidsIn((detail) => new InvalidObject(`Cannot validate DIDs: ${detail}`)));

/** POST /replicas/datasets_bulk: the stored rows of several datasets. */
export const registerDatasetReplicasBulkRoutes = (routes: RouteTable, services: Services): void => {
  for (const path of ['/replicas/datasets_bulk', '/replicas/datasets_bulk/']) {
    routes.post(
      path,
      {
        accept: STREAM_ONLY,
        summary: 'The replicas of several datasets.',
        body: jsonObjectBody({ dids: DATASET_DIDS }, { description: '`dids`: `{scope, name}` each.' }),
        raises: [InvalidObject],
      },
      async (ctx, { body: { dids } }) => {
        const found = await didsNamed(services.readModels, dids);
        await sendStream(ctx, mapStream(storedDatasetReplicas(services.readModels, found), datasetReplicaJson));
      },
    );
  }
};

/** GET /replicas/{scope}/{name}/datasets (`deep`) and the experimental `datasets_vp`. */
export const registerDatasetReplicaRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/replicas/*scope_name/datasets',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: STREAM_ONLY,
      summary: 'The replicas of a dataset per RSE: files and bytes there, available or not.',
      query: queryOf({ deep: queryBoolean(false).describe('True: counted from the file replicas now.') }),
      raises: [DataIdentifierNotFound],
    },
    async (ctx, { params, query }) => {
      const did = params.scope_name;
      const { deep } = query;
      const dataset = await findDid(services.readModels, did.scope, did.name);
      if (!dataset) throw new DataIdentifierNotFound(`Data identifier '${did.scope}:${did.name}' not found`);
      const rows = deep
        ? fromArray(await deepDatasetReplicas(services.readModels, dataset))
        : storedDatasetReplicas(services.readModels, [dataset]);
      await sendStream(ctx, mapStream(rows, datasetReplicaJson));
    },
  );
  // Rucio answers nothing unless a virtual-placement service is configured; none is here.
  routes.get(
    '/replicas/*scope_name/datasets_vp',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: STREAM_ONLY,
      summary: 'Virtual placement: none is configured, so always empty.',
      query: queryOf({ deep: queryBoolean(false).describe('Read and ignored.') }),
    },
    async (ctx) => {
      await sendStream(ctx, fromArray([]));
    },
  );
};

async function* fromArray<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}
