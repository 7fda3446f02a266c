import {
  removeGlobalAccountLimit,
  removeLocalAccountLimit,
  setGlobalAccountLimit,
  setLocalAccountLimit,
} from '../../../commands/account/accountLimitCommands.ts';
import { limitBytes } from '../../../domain/accountLimit/accountLimit.ts';
import { matchRseExpression, parseRseExpression, type RseFacts } from '../../../domain/rse/rseExpression.ts';
import { AccountNotFound, RSENotFound } from '../../../domain/shared/errors.ts';
import {
  findGlobalLimit,
  findLocalLimit,
  globalLimitsOf,
  localLimitsOf,
} from '../../../projections/account/accountLimitQueries.ts';
import { findAccount } from '../../../projections/account/accountQueries.ts';
import type { AccountDocument } from '../../../projections/account/accountsProjection.ts';
import { loadRseFacts } from '../../../projections/rse/rseFacts.ts';
import { JSON_ONLY } from '../../http.ts';
import { limitValue, sendJsonWithInfinity } from '../../infinityJson.ts';
import { jsonObjectBody, pathOf, pathText, requiredValue } from '../../params.ts';
import { created, ok, type HandlerFor, type RouteTable } from '../../route.ts';
import { convertedBy } from '../../routeInput.ts';
import { activeRse } from '../rse/rseViews.ts';
import type { Services } from '../../services.ts';

/** The RSEs an expression selects today; none (or a bad expression) is an empty list here. */
export const resolvedRses = (rseExpression: string, rses: readonly RseFacts[]): RseFacts[] => {
  try {
    const selected = matchRseExpression(parseRseExpression(rseExpression), rses);
    return rses.filter((rse) => selected.has(rse.id));
  } catch {
    return [];
  }
};

/** "Exists" means ACTIVE for every limit and usage lookup, as in Rucio. */
export const activeAccount = async (services: Services, account: string): Promise<AccountDocument> => {
  const document = await findAccount(services.readModels, account);
  if (!document || document.status !== 'ACTIVE') throw new AccountNotFound(`Account ${account} does not exist`);
  return document;
};

/**
 * Local (per RSE) and global (per RSE expression) quotas: set and removed under
 * `/accountlimits`, read under `/accounts/{account}/limits` (§1.3, §1.4).
 */
const localPath = pathOf({ account: pathText(), rse: pathText() });
const globalPath = pathOf({ account: pathText(), rse_expression: pathText() });
const accountPath = pathOf({ account: pathText() });
/** `bytes`: the limit, a whole number of at least -1 (-1: none). */
const limitBody = jsonObjectBody(
  { bytes: convertedBy(requiredValue(), limitBytes).meta({ type: 'integer', minimum: -1 }) },
  { description: '`bytes`: the limit (-1: none).' },
);

export const registerAccountLimitRoutes = (routes: RouteTable, services: Services): void => {
  const setting = {
    params: localPath,
    body: limitBody,
    summary: "Sets an account's quota on one RSE.",
    raises: [AccountNotFound, RSENotFound],
  };
  const setLocal: HandlerFor<typeof setting> = async (ctx, { params, body }) => {
    await created(ctx, services, (metadata) =>
      setLocalAccountLimit(
        services.commands,
        { account: params.account, rse: params.rse, bytes: body.bytes },
        metadata,
      ),
    );
  };
  const removing = {
    params: localPath,
    summary: "Removes an account's quota on one RSE.",
    raises: [AccountNotFound, RSENotFound],
  };
  const removeLocal: HandlerFor<typeof removing> = async (ctx, { params }) => {
    await ok(ctx, services, (metadata) =>
      removeLocalAccountLimit(services.commands, { account: params.account, rse: params.rse }, metadata),
    );
  };
  routes.post('/accountlimits/local/:account/:rse', setting, setLocal);
  routes.delete('/accountlimits/local/:account/:rse', removing, removeLocal);
  routes.post(
    '/accountlimits/global/:account/:rse_expression',
    {
      params: globalPath,
      body: limitBody,
      summary: "Sets an account's quota over the RSEs of an expression.",
      raises: [AccountNotFound],
    },
    async (ctx, { params, body }) => {
      const data = {
        account: params.account,
        rseExpression: params.rse_expression,
        bytes: body.bytes,
        rses: await loadRseFacts(services.readModels),
      };
      await created(ctx, services, (metadata) => setGlobalAccountLimit(services.commands, data, metadata));
    },
  );
  routes.delete(
    '/accountlimits/global/:account/:rse_expression',
    {
      params: globalPath,
      summary: "Removes an account's quota over an RSE expression.",
      raises: [AccountNotFound],
    },
    async (ctx, { params }) => {
      const data = {
        account: params.account,
        rseExpression: params.rse_expression,
        rses: await loadRseFacts(services.readModels),
      };
      await ok(ctx, services, (metadata) => removeGlobalAccountLimit(services.commands, data, metadata));
    },
  );
  // The legacy form of /accountlimits/local/...
  routes.post('/accountlimits/:account/:rse', setting, setLocal);
  routes.delete('/accountlimits/:account/:rse', removing, removeLocal);

  const listing = {
    params: accountPath,
    accept: JSON_ONLY,
    summary: "An account's local quotas, bytes by RSE.",
    raises: [AccountNotFound],
  };
  const localLimits: HandlerFor<typeof listing> = async (ctx, { params }) => {
    const account = (await activeAccount(services, params.account)).account;
    const result: Record<string, number> = {};
    for await (const limit of localLimitsOf(services.readModels, account)) result[limit.rse!] = limitValue(limit.bytes);
    sendJsonWithInfinity(ctx, result);
  };
  const oneLimit = {
    params: localPath,
    accept: JSON_ONLY,
    summary: "An account's quota on one RSE (null: none).",
    raises: [AccountNotFound, RSENotFound],
  };
  const localLimit: HandlerFor<typeof oneLimit> = async (ctx, { params }) => {
    const account = (await activeAccount(services, params.account)).account;
    const rse = await activeRse(services, params.rse);
    const limit = await findLocalLimit(services.readModels, account, rse.id);
    sendJsonWithInfinity(ctx, { [rse.rse]: limit ? limitValue(limit.bytes) : null });
  };

  routes.get('/accounts/:account/limits/local', listing, localLimits);
  routes.get(
    '/accounts/:account/limits/global',
    {
      params: accountPath,
      accept: JSON_ONLY,
      summary: "An account's global quotas by RSE expression, with the RSEs each selects.",
      raises: [AccountNotFound],
    },
    async (ctx, { params }) => {
      const account = (await activeAccount(services, params.account)).account;
      const rses = await loadRseFacts(services.readModels);
      const result: Record<string, unknown> = {};
      for await (const limit of globalLimitsOf(services.readModels, account)) {
        const resolved = resolvedRses(limit.rseExpression!, rses);
        result[limit.rseExpression!] = {
          resolved_rses: resolved.map((rse) => rse.rse),
          resolved_rse_ids: resolved.map((rse) => rse.id),
          limit: limitValue(limit.bytes),
        };
      }
      sendJsonWithInfinity(ctx, result);
    },
  );
  routes.get('/accounts/:account/limits/local/:rse', oneLimit, localLimit);
  routes.get(
    '/accounts/:account/limits/global/:rse_expression',
    {
      params: globalPath,
      accept: JSON_ONLY,
      summary: "An account's quota over an RSE expression (null: none).",
      raises: [AccountNotFound],
    },
    async (ctx, { params }) => {
      const account = (await activeAccount(services, params.account)).account;
      const expression = params.rse_expression;
      const limit = await findGlobalLimit(services.readModels, account, expression);
      sendJsonWithInfinity(ctx, { [expression]: limit ? limitValue(limit.bytes) : null });
    },
  );
  routes.get('/accounts/:account/limits', listing, localLimits);
  routes.get('/accounts/:account/limits/:rse', oneLimit, localLimit);
};
