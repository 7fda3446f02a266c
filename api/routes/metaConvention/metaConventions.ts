import { addMetaConventionKey, addMetaConventionValue } from '../../../commands/metaConvention/metaConventionCommands.ts';
import { metaConventionsCollection, type MetaConventionDocument } from '../../../projections/metaConvention/metaConventions.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import { jsonObject, param } from '../../params.ts';
import { created, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

/**
 * /meta_conventions: `/` lists the keys, `/<key>` (POST) adds a key, `/<key>/` lists (GET) or
 * adds (POST) its allowed values. The slash tells adding a key from adding a value.
 */
export const registerMetaConventionRoutes = (routes: RouteTable, services: Services): void => {
  const conventions = () => services.readModels.collection<MetaConventionDocument>(metaConventionsCollection);

  routes.get('/meta_conventions/', { accept: JSON_ONLY }, async (ctx) => {
    const keys: string[] = [];
    for await (const convention of conventions().find({}, { sort: { _id: 1 } })) keys.push(convention.key);
    sendJson(ctx, keys);
  });
  routes.post('/meta_conventions/:key', {}, async (ctx) => {
    const parameters = jsonObject(ctx);
    await created(ctx, services, (metadata) =>
      addMetaConventionKey(
        services.commands,
        { key: ctx.params.key!, keyType: parameters.key_type, valueType: parameters.value_type, valueRegexp: parameters.value_regexp },
        metadata,
      ),
    );
  });
  // An unknown key simply has no values, as in Rucio.
  routes.get('/meta_conventions/:key/', { accept: JSON_ONLY }, async (ctx) => {
    const convention = await conventions().get(ctx.params.key!);
    sendJson(ctx, [...(convention?.values ?? [])].sort());
  });
  routes.post('/meta_conventions/:key/', {}, async (ctx) => {
    const value = param(jsonObject(ctx), 'value');
    await created(ctx, services, (metadata) => addMetaConventionValue(services.commands, { key: ctx.params.key!, value }, metadata));
  });
};
