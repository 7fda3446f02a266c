import { z } from 'zod';
import { addException, decideException } from '../../../commands/lifetimeException/lifetimeExceptionCommands.ts';
import type { ExceptionDid } from '../../../domain/lifetimeException/lifetimeException.ts';
import { AccessDenied, InvalidObject, UnsupportedOperation } from '../../../domain/shared/errors.ts';
import {
  LifetimeExceptionDuplicate,
  LifetimeExceptionNotFound,
} from '../../../domain/lifetimeException/lifetimeExceptionErrors.ts';
import {
  exceptionRows,
  hasOpenException,
  listExceptions,
} from '../../../projections/lifetimeException/lifetimeExceptionQueries.ts';
import { mapStream, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import { jsonObjectBody, jsonObjectBodyOf, orNull, pathOf, pathText } from '../../params.ts';
import { created, type RouteOptions, type RouteTable, runCommand } from '../../route.ts';
import type { Services } from '../../services.ts';
import { lifetimeExceptionJson } from '../subscription/subscriptionRendering.ts';
import { EXCEPTION_REQUEST } from './lifetimeExceptionParams.ts';

/** UnsupportedOperation (no cutoff date ahead, a state other than A or R) is 400, as Rucio's approval route answers it. */
const ERRORS = { UnsupportedOperation: 400 };

const ASK = {
  errors: ERRORS,
  summary: 'Asks for exceptions to the end of life of DIDs (any account), while `lifetime_model.cutoff_date` is ahead.',
  body: jsonObjectBodyOf(EXCEPTION_REQUEST, {
    description: "`{dids: [{scope, name}], pattern?, comments?, expires_at?}` (Rucio's date format or ISO 8601).",
  }),
  success: {
    status: 201,
    type: 'application/json',
    description: '`{exceptions: {id: [{scope, name, did_type}]}, unknown: [...], not_affected: [...]}`.',
  },
  raises: [UnsupportedOperation, InvalidObject, LifetimeExceptionDuplicate],
} satisfies RouteOptions;
const DECIDE = {
  params: pathOf({ exception_id: pathText() }),
  errors: ERRORS,
  summary:
    'Approves (`{"state": "A"}`) or rejects (`"R"`) a lifetime exception (admins). Rucio 39 always answers 400 here.',
  // The state is the decision's to judge (after the caller's permission), as Rucio's core does.
  body: jsonObjectBody({ state: orNull(z.unknown()) }, { description: '`{state}`: A, R, APPROVED or REJECTED.' }),
  success: { status: 201, type: 'application/json', description: 'The JSON string "Created".' },
  raises: [UnsupportedOperation, LifetimeExceptionNotFound, AccessDenied],
} satisfies RouteOptions;

const didJson = (did: ExceptionDid) => ({ scope: did.scope, name: did.name, did_type: did.didType });

/**
 * The /lifetime_exceptions area (Rucio's lifetime_exceptions.py): any account asks for
 * exceptions and reads them; admins approve or reject them.
 */
export const registerLifetimeExceptionRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/lifetime_exceptions/',
    {
      accept: STREAM_ONLY,
      summary: 'Every lifetime exception: a line per exception and DID (query parameters are ignored, as in Rucio).',
    },
    async (ctx) => {
      await sendStream(ctx, mapStream(listExceptions(services.readModels), lifetimeExceptionJson));
    },
  );
  routes.post('/lifetime_exceptions/', ASK, async (ctx, { body: request }) => {
    const planned = await runCommand(ctx, services, (metadata) =>
      addException(services.commands, request, metadata, {
        hasOpenException: (did) =>
          hasOpenException(services.readModels, metadata.account, did, metadata.now.toISOString()),
      }),
    );
    const answer = {
      exceptions: Object.fromEntries(
        planned.exceptions.map((exception) => [exception.id, exception.dids.map(didJson)]),
      ),
      unknown: planned.unknown.map(didJson),
      not_affected: planned.notAffected.map(didJson),
    };
    sendJson(ctx, answer, 201);
  });
  routes.get(
    '/lifetime_exceptions/:exception_id',
    {
      params: pathOf({ exception_id: pathText() }),
      accept: STREAM_ONLY,
      summary: 'The rows of one lifetime exception.',
      raises: [LifetimeExceptionNotFound],
    },
    async (ctx, { params }) => {
      const id = params.exception_id;
      const rows = await exceptionRows(services.readModels, id);
      if (rows.length === 0) throw new LifetimeExceptionNotFound(`No lifetime exception with the id ${id} found`);
      await sendStream(
        ctx,
        mapStream(
          (async function* () {
            yield* rows;
          })(),
          lifetimeExceptionJson,
        ),
      );
    },
  );
  routes.put('/lifetime_exceptions/:exception_id', DECIDE, async (ctx, { params, body }) => {
    await created(ctx, services, (metadata) =>
      decideException(services.commands, { id: params.exception_id, state: body.state }, metadata),
    );
  });
};
