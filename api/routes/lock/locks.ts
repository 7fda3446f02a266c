import { didFromKey } from '../../../domain/did/did.ts';
import { RSENotFound, ValueError } from '../../../domain/shared/errors.ts';
import { datasetsBelow } from '../../../projections/did/didQueries.ts';
import { datasetLocksOfDid, datasetLocksOnRse } from '../../../projections/rule/ruleQueries.ts';
import { mapStream, sendStream, STREAM_ONLY } from '../../http.ts';
import { jsonObject, queryString } from '../../legacyParams.ts';
import type { RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
import { asArray, didFromPath, didRefItem } from '../did/didParams.ts';
import { activeRse } from '../rse/rseViews.ts';
import { datasetLockJson } from '../rule/ruleRendering.ts';

/**
 * Rucio asks for `did_type=dataset` on both lock listings and answers anything else with a bare
 * 500 "Wrong did_type specified"; here it is a 400 ValueError with the same words.
 */
const requireDatasetType = (ctx: AppContext): void => {
  if (queryString(ctx, 'did_type')?.toLowerCase() !== 'dataset') throw new ValueError('Wrong did_type specified');
};

/** The /locks area: dataset locks by RSE, by dataset, and for many DIDs at once. */
export const registerLockRoutes = (routes: RouteTable, services: Services): void => {
  routes.post(
    '/locks/bulk_locks_for_dids',
    {
      accept: STREAM_ONLY,
      summary: 'The dataset locks of several DIDs (of the datasets below a container).',
      body: { description: '`dids`: `{scope, name}` each, at most 10 000.' },
    },
    async (ctx) => {
      const body = jsonObject(ctx);
      if (!('dids' in body)) throw new ValueError('Can not find the list of DIDs in the data. Use "dids" keyword.');
      const dids = asArray('dids', body.dids, 10_000).map((item) => didRefItem('dids', item));
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
      accept: STREAM_ONLY,
      summary: 'The dataset locks on an RSE.',
      query: { did_type: 'dataset (required).' },
      raises: [RSENotFound],
    },
    async (ctx) => {
      requireDatasetType(ctx);
      const rse = await activeRse(services, ctx.params.rse!);
      await sendStream(ctx, mapStream(datasetLocksOnRse(services.readModels, rse.id), datasetLockJson));
    },
  );
  routes.get(
    '/locks/*scope_name',
    { accept: STREAM_ONLY, summary: 'The locks of a dataset.', query: { did_type: 'dataset (required).' } },
    async (ctx) => {
      const did = didFromPath(ctx);
      requireDatasetType(ctx);
      await sendStream(ctx, mapStream(datasetLocksOfDid(services.readModels, did.scope, did.name), datasetLockJson));
    },
  );
};
