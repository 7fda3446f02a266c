import {
  createRse,
  deleteRse,
  removeRseAttribute,
  setRseAttribute,
  updateRse,
} from '../../../commands/rse/rseCommands.ts';
import { evaluateRseExpression } from '../../../domain/rse/rseExpression.ts';
import { InputValidationError, InvalidRSEExpression, RSENotFound } from '../../../domain/shared/errors.ts';
import { loadRseFacts } from '../../../projections/rse/rseFacts.ts';
import { activeRses } from '../../../projections/rse/rseQueries.ts';
import { JSON_ONLY, mapStream, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import { fromList } from '../../listSource.ts';
import {
  jsonObjectBody,
  jsonObjectBodyOf,
  pathOf,
  pathText,
  queryOf,
  queryText,
  requiredValue,
  validName,
} from '../../params.ts';
import { convertedBy } from '../../routeInput.ts';
import { created, ok, type RouteTable } from '../../route.ts';
import {
  RSE_CHANGE_VALUES,
  RSE_CHANGES,
  RSE_CREATION,
  RSE_CREATION_VALUES,
  rseAttributeKey,
  rseAttributeValue,
} from './rseRequests.ts';
import { activeRse, defaultLfn2pfnAlgorithm, rseDetail, rseListEntry, sortedAttributes } from './rseViews.ts';
import type { Services } from '../../services.ts';

const attributePath = pathOf({ rse: pathText(), key: convertedBy(pathText(), rseAttributeKey) });

/** RSEs and their attributes (rest-api-reference.md §1.21). */
export const registerRseRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/rses/:rse/attr/',
    { params: pathOf({ rse: pathText() }), accept: JSON_ONLY, summary: "An RSE's attributes.", raises: [RSENotFound] },
    async (ctx, { params }) => {
      sendJson(ctx, sortedAttributes(await activeRse(services, params.rse)));
    },
  );
  routes.post(
    '/rses/:rse/attr/:key',
    {
      params: attributePath,
      summary: 'Sets an attribute of an RSE.',
      body: jsonObjectBody(
        { value: convertedBy(requiredValue(), rseAttributeValue) },
        { description: '`value`: a string, number or boolean.' },
      ),
      raises: [RSENotFound],
    },
    async (ctx, { params, body }) => {
      await created(ctx, services, (metadata) =>
        setRseAttribute(services.commands, { rse: params.rse, key: params.key, value: body.value }, metadata),
      );
    },
  );
  routes.delete(
    '/rses/:rse/attr/:key',
    {
      params: attributePath,
      summary: 'Removes an attribute of an RSE.',
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      await ok(ctx, services, (metadata) => removeRseAttribute(services.commands, params, metadata));
    },
  );

  routes.get(
    '/rses/:rse',
    {
      params: pathOf({ rse: pathText() }),
      accept: JSON_ONLY,
      summary: 'One RSE: its record and settings.',
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      const document = await activeRse(services, params.rse);
      sendJson(ctx, rseDetail(document, await defaultLfn2pfnAlgorithm(services)));
    },
  );
  routes.post(
    '/rses/:rse',
    {
      params: pathOf({ rse: validName('rse') }),
      errors: { InputValidationError: 422 },
      summary: 'Creates an RSE.',
      body: jsonObjectBodyOf(RSE_CREATION, {
        optional: true,
        documentedBy: RSE_CREATION_VALUES,
        description: 'Its properties: `deterministic`, `volatile`, `rse_type`, `city`, `country_name`, `latitude`, ...',
      }),
    },
    async (ctx, { params, body: properties }) => {
      await created(ctx, services, (metadata) =>
        createRse(services.commands, { rse: params.rse, properties }, metadata),
      );
    },
  );
  // Rucio answers an update with 201, and the Python client expects exactly that.
  routes.put(
    '/rses/:rse',
    {
      params: pathOf({ rse: pathText() }),
      summary: 'Changes the properties of an RSE.',
      body: jsonObjectBodyOf(RSE_CHANGES, {
        optional: true,
        description: 'The properties to change (`availability_read`, `city`, ...).',
        documentedBy: RSE_CHANGE_VALUES,
      }),
      success: { status: 201, type: 'application/json', description: 'The JSON string "Created".' },
      raises: [RSENotFound],
    },
    async (ctx, { params, body }) => {
      const rse = params.rse;
      const { name, changes } = body;
      // The path names the RSE, so only the body and the path together can tell a rename.
      if (name !== undefined && name !== rse) throw new InputValidationError(`Renaming RSE '${rse}' is not supported.`);
      await created(ctx, services, (metadata) => updateRse(services.commands, { rse, changes }, metadata));
    },
  );
  routes.delete(
    '/rses/:rse',
    {
      params: pathOf({ rse: pathText() }),
      summary: 'Deletes an RSE (disabled; its name is never taken again).',
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      await ok(ctx, services, (metadata) => deleteRse(services.commands, { rse: params.rse }, metadata));
    },
  );

  /** All RSEs, or with `?expression=` the names of those it selects (an empty expression lists all). */
  routes.get(
    '/rses/',
    {
      accept: STREAM_ONLY,
      summary: 'Every RSE, or the names of those an expression selects.',
      query: queryOf({ expression: queryText().describe('An RSE expression.') }),
      raises: [InvalidRSEExpression],
    },
    async (ctx, { query }) => {
      const { expression } = query;
      if (expression) {
        const selected = evaluateRseExpression(expression, await loadRseFacts(services.readModels));
        await sendStream(ctx, fromList(selected.map((rse) => ({ rse: rse.rse }))));
        return;
      }
      await sendStream(ctx, mapStream(activeRses(services.readModels), rseListEntry));
    },
  );
};
