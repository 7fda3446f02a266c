import { assertKeyCharacters } from '../../../domain/did/didMetadata.ts';
import { InvalidValueForKey } from '../../../domain/shared/errors.ts';
import { LIMITS } from '../../../domain/shared/limits.ts';
import {
  addMetaConventionKey,
  addMetaConventionValue,
} from '../../../commands/metaConvention/metaConventionCommands.ts';
import { conventionKeys, findConvention } from '../../../projections/metaConvention/metaConventionQueries.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import { jsonObject, param } from '../../legacyParams.ts';
import { created, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

/**
 * /meta_conventions: `/` lists the keys, `/<key>` (POST) adds a key, `/<key>/` lists (GET) or
 * adds (POST) its allowed values. The slash tells adding a key from adding a value.
 */
export const registerMetaConventionRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/meta_conventions/',
    { accept: JSON_ONLY, summary: 'The metadata keys with conventions.' },
    async (ctx) => {
      sendJson(ctx, await conventionKeys(services.readModels));
    },
  );
  routes.post(
    '/meta_conventions/:key',
    { summary: 'Adds a metadata key convention.', body: { description: '`key_type`, `value_type`, `value_regexp`.' } },
    async (ctx) => {
      assertKeyCharacters(ctx.params.key!);
      const parameters = jsonObject(ctx);
      await created(ctx, services, (metadata) =>
        addMetaConventionKey(
          services.commands,
          {
            key: ctx.params.key!,
            keyType: parameters.key_type,
            valueType: parameters.value_type,
            valueRegexp: parameters.value_regexp,
          },
          metadata,
        ),
      );
    },
  );
  // An unknown key simply has no values, as in Rucio.
  routes.get('/meta_conventions/:key/', { accept: JSON_ONLY, summary: 'The values a key allows.' }, async (ctx) => {
    const convention = await findConvention(services.readModels, ctx.params.key!);
    sendJson(ctx, [...(convention?.values ?? [])].sort());
  });
  routes.post(
    '/meta_conventions/:key/',
    { summary: 'Adds a value a key allows.', body: { description: '`value`.' }, raises: [InvalidValueForKey] },
    async (ctx) => {
      assertKeyCharacters(ctx.params.key!);
      const value = param(jsonObject(ctx), 'value');
      if (JSON.stringify(value).length > LIMITS.metadataValueLength)
        throw new InvalidValueForKey(`The value is longer than ${LIMITS.metadataValueLength} characters of JSON`);
      await created(ctx, services, (metadata) =>
        addMetaConventionValue(services.commands, { key: ctx.params.key!, value }, metadata),
      );
    },
  );
};
