import { assertKeyCharacters } from '../../../domain/did/didMetadata.ts';
import { InvalidValueForKey } from '../../../domain/shared/errors.ts';
import { LIMITS } from '../../../domain/shared/limits.ts';
import {
  addMetaConventionKey,
  addMetaConventionValue,
} from '../../../commands/metaConvention/metaConventionCommands.ts';
import { conventionKeys, findConvention } from '../../../projections/metaConvention/metaConventionQueries.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import { jsonObjectBody, pathOf, pathText, requiredValue } from '../../params.ts';
import { checkedBy } from '../../routeInput.ts';
import { z } from 'zod';
import { created, type RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';

/**
 * /meta_conventions: `/` lists the keys, `/<key>` (POST) adds a key, `/<key>/` lists (GET) or
 * adds (POST) its allowed values. The slash tells adding a key from adding a value.
 */
/** A key to add a convention or a value to: its characters held to `assertKeyCharacters`. */
const keyPath = pathOf({ key: checkedBy(pathText(), assertKeyCharacters) });

const keyBody = jsonObjectBody(
  { key_type: z.unknown().optional(), value_type: z.unknown().optional(), value_regexp: z.unknown().optional() },
  { description: '`key_type`, `value_type`, `value_regexp`.' },
);

const valueBody = jsonObjectBody(
  {
    value: checkedBy(requiredValue(), (value) => {
      if (JSON.stringify(value).length > LIMITS.metadataValueLength)
        throw new InvalidValueForKey(`The value is longer than ${LIMITS.metadataValueLength} characters of JSON`);
    }),
  },
  { description: '`value`.' },
);

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
    {
      params: keyPath,
      summary: 'Adds a metadata key convention.',
      body: keyBody,
    },
    async (ctx, { params, body: parameters }) => {
      await created(ctx, services, (metadata) =>
        addMetaConventionKey(
          services.commands,
          {
            key: params.key,
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
  routes.get(
    '/meta_conventions/:key/',
    { params: pathOf({ key: pathText() }), accept: JSON_ONLY, summary: 'The values a key allows.' },
    async (ctx, { params }) => {
      const convention = await findConvention(services.readModels, params.key);
      sendJson(ctx, [...(convention?.values ?? [])].sort());
    },
  );
  routes.post(
    '/meta_conventions/:key/',
    {
      params: keyPath,
      summary: 'Adds a value a key allows.',
      body: valueBody,
      raises: [InvalidValueForKey],
    },
    async (ctx, { params, body }) => {
      await created(ctx, services, (metadata) =>
        addMetaConventionValue(services.commands, { key: params.key, value: body.value }, metadata),
      );
    },
  );
};
