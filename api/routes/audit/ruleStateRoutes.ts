import { pathOf, pathText } from '../../params.ts';
import { loadCaller } from '../../../commands/caller.ts';
import { AUDIT_PERMISSIONS } from '../../../domain/permission/auditPolicy.ts';
import { allowOnly } from '../../../domain/permission/policy.ts';
import { AccessDenied } from '../../../domain/shared/errors.ts';
import { RuleNotFound } from '../../../domain/rule/ruleErrors.ts';
import { ruleStateAsOf } from '../../../projections/audit/ruleStateAsOf.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import type { RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import { asOfQuery } from './auditParams.ts';
import { renderRule } from './auditRendering.ts';

/**
 * `GET /audit/rules/{id}/state` (admins; our own route): a rule as it was at a position or time,
 * folded from its stream (projections/audit/ruleStateAsOf.ts), beside which the console shows the
 * rule as it is. `status` is LIVE, DELETED or ABSENT (not created yet, at that point); `position`
 * and `at` name the newest event folded.
 */
export const registerRuleStateRoute = (routes: RouteTable, services: Services): void => {
  const { eventStore, upcasters } = services.commands;
  routes.get(
    '/audit/rules/:ruleId/state',
    {
      params: pathOf({ ruleId: pathText() }),
      accept: JSON_ONLY,
      summary: 'A rule as it was at a position or time, folded from its events (admins).',
      query: asOfQuery,
      raises: [AccessDenied, RuleNotFound],
    },
    async (ctx, { params, query }) => {
      const ruleId = params.ruleId;
      const asOf = query.as_of;
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      allowOnly(
        AUDIT_PERMISSIONS.readHistory(caller),
        `Account ${caller.account} can not read the history of rule ${ruleId}`,
      );
      const state = await ruleStateAsOf(eventStore, upcasters, ruleId, asOf);
      if (!state.exists) throw new RuleNotFound(`No replication rule found with id ${ruleId}`);
      const last = state.lastEvent;
      sendJson(ctx, {
        ...renderRule(ruleId, state.rule),
        as_of: asOf === undefined ? null : 'position' in asOf ? Number(asOf.position) : asOf.time,
        position: last ? Number(last.position) : null,
        at: last ? last.metadata.at : null,
      });
    },
  );
};
