import { didFromKey } from '../../../domain/did/did.ts';
import { RSENotFound, ValueError } from '../../../domain/shared/errors.ts';
import { datasetsBelow } from '../../../projections/did/didQueries.ts';
import { datasetLocksOfDid, datasetLocksOnRse } from '../../../projections/rule/ruleQueries.ts';
import { mapStream, sendStream, STREAM_ONLY } from '../../http.ts';
import { jsonObjectBody, pathOf, pathText, queryOf, queryText } from '../../params.ts';
import { convertedBy, missingAs } from '../../routeInput.ts';
import type { RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import { didRefIn, listIn, scopeNamePath } from '../did/didParams.ts';
import { activeRse } from '../rse/rseViews.ts';
import { datasetLockJson } from '../rule/ruleRendering.ts';

/**
 * Rucio asks for `did_type=dataset` on both lock listings and answers anything else with a bare
 * 500 "Wrong did_type specified"; here it is a 400 ValueError with the same words.
 */
const datasetTypeQuery = queryOf({
  // A conversion, not a check: zod checks no absent value, and an absent did_type is refused too.
  did_type: convertedBy(queryText(), (type) => {
    if (type?.toLowerCase() !== 'dataset') throw new ValueError('Wrong did_type specified');
    return type;
  }).describe('dataset (required).'),
});

/** The /locks area: dataset locks by RSE, by dataset, and for many DIDs at once. */
export const registerLockRoutes = (routes: RouteTable, services: Services): void => {
  routes.post(
    '/locks/bulk_locks_for_dids',
    {
      accept: STREAM_ONLY,
      summary: 'The dataset locks of several DIDs (of the datasets below a container).',
      body: jsonObjectBody(
        {
          dids: missingAs(
            listIn('dids', didRefIn('dids'), 10_000),
            () => new ValueError('Can not find the list of DIDs in the data. Use "dids" keyword.'),
          ),
        },
        { description: '`dids`: `{scope, name}` each, at most 10 000.' },
      ),
    },
    async (ctx, { body: { dids } }) => {
      // Rucio's get_dataset_locks_bulk: a dataset's own locks; for a container, those of every dataset below it.
      async function* locks() {
        for (const did of dids) {
          yield* datasetLocksOfDid(services.readModels, did.scope, did.name);
          for (const key of [...(await datasetsBelow(services.readModels, did.scope, did.name))].sort()) {
            const { scope, name } = didFromKey(key);
            yield* datasetLocksOfDid(services.readModels, scope, name);
          }
        }
      }
      await sendStream(ctx, mapStream(locks(), datasetLockJson));
    },
  );
  routes.get(
    '/locks/:rse',
    {
      params: pathOf({ rse: pathText() }),
      accept: STREAM_ONLY,
      summary: 'The dataset locks on an RSE.',
      query: datasetTypeQuery,
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      const rse = await activeRse(services, params.rse);
      await sendStream(ctx, mapStream(datasetLocksOnRse(services.readModels, rse.id), datasetLockJson));
    },
  );
  routes.get(
    '/locks/*scope_name',
    {
      params: pathOf({ scope_name: scopeNamePath() }),
      accept: STREAM_ONLY,
      summary: 'The locks of a dataset.',
      query: datasetTypeQuery,
    },
    async (ctx, { params }) => {
      const did = params.scope_name;
      await sendStream(ctx, mapStream(datasetLocksOfDid(services.readModels, did.scope, did.name), datasetLockJson));
    },
  );
};
