import { pathOf, pathText } from '../../params.ts';
import { loadCaller } from '../../../commands/caller.ts';
import { requirePermission } from '../../../domain/permission/policy.ts';
import { mayReadAccountUsage } from '../../../domain/permission/rsePolicy.ts';
import { evaluateRseExpression } from '../../../domain/rse/rseExpression.ts';
import { isoSecondsOrNull } from '../../../domain/shared/dates.ts';
import { findGlobalLimit, globalLimitsOf, localLimitsOf } from '../../../projections/account/accountLimitQueries.ts';
import { usageHistoryOf, usageOf, usageSummedOver } from '../../../projections/account/accountUsageQueries.ts';
import { loadRseFacts } from '../../../projections/rse/rseFacts.ts';
import { JSON_ONLY, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import { jsonWithInfinity, limitValue } from '../../infinityJson.ts';
import { fromList } from '../../listSource.ts';
import type { HandlerFor, RouteTable } from '../../route.ts';
import { AccessDenied, AccountNotFound, RSENotFound } from '../../../domain/shared/errors.ts';
import { activeRse } from '../rse/rseViews.ts';
import type { AppContext, Services } from '../../services.ts';
import { activeAccount, resolvedRses } from './accountLimits.ts';

/**
 * What accounts store, against their quotas (§1.3). Usage comes from the account usage read
 * model, which replica locks fill; without rules every usage is zero.
 */
export const registerAccountUsageRoutes = (routes: RouteTable, services: Services): void => {
  /** The account must exist, and the caller be an admin, the account itself or a country admin. */
  const readableAccount = async (ctx: AppContext, account: string, what: string): Promise<string> => {
    const caller = await loadCaller(services.commands, ctx.state.issuer!);
    requirePermission(mayReadAccountUsage(caller, account), caller, what);
    return (await activeAccount(services, account)).account;
  };

  // One handler answers with or without the RSE (or expression) in the path.
  const local = {
    params: pathOf({ account: pathText(), rse: pathText().optional() }),
    accept: STREAM_ONLY,
    summary: 'What an account stores per RSE against its local quotas: bytes, files, limit, remaining.',
    raises: [AccessDenied, AccountNotFound, RSENotFound],
  };
  const global = {
    params: pathOf({ account: pathText(), rse_expression: pathText().optional() }),
    accept: STREAM_ONLY,
    summary: 'What an account stores per RSE expression against its global quotas.',
    raises: [AccessDenied, AccountNotFound],
  };

  /**
   * Per RSE with usage or a local limit: bytes and files used, the limit (0 without one) and what
   * remains. Usage and limits are merged by RSE, so the lines (at most one per RSE) are gathered
   * first.
   */
  const localUsage: HandlerFor<typeof local> = async (ctx, { params }) => {
    const account = await readableAccount(ctx, params.account, 'list account usage');
    const onlyRse = params.rse === undefined ? undefined : await activeRse(services, params.rse);
    const rows = new Map<string, { rse: string; bytes: number; files: number; limit: number | undefined }>();
    for await (const used of usageOf(services.readModels, account, onlyRse?.id)) {
      rows.set(used.rseId, { rse: used.rse, bytes: used.bytes, files: used.files, limit: undefined });
    }
    for await (const limit of localLimitsOf(services.readModels, account, onlyRse?.id)) {
      const row = rows.get(limit.rseId!) ?? { rse: limit.rse!, bytes: 0, files: 0, limit: undefined };
      rows.set(limit.rseId!, { ...row, limit: limitValue(limit.bytes) });
    }
    const entries = [...rows.entries()]
      .filter(([, row]) => row.bytes > 0 || row.files > 0 || row.limit !== undefined)
      .sort(([, a], [, b]) => (a.rse < b.rse ? -1 : a.rse > b.rse ? 1 : 0))
      .map(([rseId, row]) => ({
        rse_id: rseId,
        rse: row.rse,
        bytes: row.bytes,
        files: row.files,
        bytes_limit: row.limit ?? 0,
        bytes_remaining: (row.limit ?? 0) - row.bytes,
      }));
    await sendStream(ctx, fromList(entries), undefined, jsonWithInfinity);
  };

  const globalUsage: HandlerFor<typeof global> = async (ctx, { params }) => {
    const account = await readableAccount(ctx, params.account, 'list global account usage');
    const rses = await loadRseFacts(services.readModels);
    const expression = params.rse_expression;
    const line = async (rseExpression: string, rseIds: readonly string[], bytesLimit: number) => {
      const used = await usageSummedOver(services.readModels, account, rseIds);
      return {
        rse_expression: rseExpression,
        ...used,
        bytes_limit: bytesLimit,
        bytes_remaining: bytesLimit - used.bytes,
      };
    };
    if (expression !== undefined) {
      const selected = evaluateRseExpression(expression, rses).map((rse) => rse.id);
      const limit = await findGlobalLimit(services.readModels, account, expression);
      await sendStream(
        ctx,
        fromList([await line(expression, selected, limit ? limitValue(limit.bytes) : 0)]),
        undefined,
        jsonWithInfinity,
      );
      return;
    }
    const globalLimits = globalLimitsOf(services.readModels, account);
    async function* lines() {
      for await (const limit of globalLimits) {
        yield line(
          limit.rseExpression!,
          resolvedRses(limit.rseExpression!, rses).map((rse) => rse.id),
          limitValue(limit.bytes),
        );
      }
    }
    await sendStream(ctx, lines(), undefined, jsonWithInfinity);
  };

  routes.get(
    '/accounts/:account/usage/history/:rse',
    {
      params: pathOf({ account: pathText(), rse: pathText() }),
      accept: JSON_ONLY,
      summary: "The history of an account's usage of one RSE.",
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      const rse = await activeRse(services, params.rse);
      const history = await usageHistoryOf(services.readModels, params.account, rse.id);
      sendJson(
        ctx,
        history.map((entry) => ({
          bytes: entry.bytes,
          files: entry.files,
          updated_at: isoSecondsOrNull(entry.updatedAt),
        })),
      );
    },
  );
  routes.get('/accounts/:account/usage/local', local, localUsage);
  routes.get('/accounts/:account/usage/global', global, globalUsage);
  routes.get('/accounts/:account/usage/local/:rse', local, localUsage);
  routes.get('/accounts/:account/usage/global/:rse_expression', global, globalUsage);
  routes.get('/accounts/:account/usage', local, localUsage);
  routes.get('/accounts/:account/usage/', local, localUsage);
  routes.get('/accounts/:account/usage/:rse', local, localUsage);
};
