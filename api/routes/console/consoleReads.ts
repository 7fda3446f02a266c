import { pathOf, pathText } from '../../params.ts';
import { RULE_STATES } from '../../../domain/rule/rule.ts';
import { InvalidValueForKey, RSENotFound } from '../../../domain/shared/errors.ts';
import { distancesFrom } from '../../../projections/rse/rseQueries.ts';
import { MAX_RULE_PAGE, RULE_PAGE_FILTERS, rulePage } from '../../../projections/rule/rulePages.ts';
import { didBytes } from '../../../projections/rule/ruleQueries.ts';
import { JSON_ONLY, sendJson } from '../../http.ts';
import { queryOf, queryText } from '../../params.ts';
import { convertedBy } from '../../routeInput.ts';
import type { RouteTable } from '../../route.ts';
import type { Services } from '../../services.ts';
import { activeRse, distanceView } from '../rse/rseViews.ts';
import { ruleJson } from '../rule/ruleRendering.ts';

/**
 * Reads the console needs and Rucio's API lacks (our own prefix, any logged-in account, as the
 * API's own lists are open to any account):
 *
 * - `GET /console/rules?state=&account=&activity=&rse_expression=&after=&limit=`: every rule,
 *   newest first, one page at a time from a cursor (`next` of the previous page). Rucio's
 *   `GET /rules/` takes every parameter as a filter and streams the whole list, so it has no room
 *   for a cursor. Each filter has its index (projections/rule/rulePages.ts).
 * - `GET /console/rses/{rse}/distances`: the distances from an RSE to every other, which Rucio
 *   answers only one pair at a time.
 */
const rulePageQuery = queryOf({
  // The names are declared as the enum (the console offers them from this document); the filter
  // also takes them in any case and Rucio's letters, and refuses the rest when it reads the page.
  state: queryText()
    .describe('A state, in any case, or its letter (STUCK, S, …).')
    .meta({ enum: [...RULE_STATES] }),
  account: queryText().describe('The owner.'),
  activity: queryText().describe('The activity.'),
  rse_expression: queryText().describe('The RSE expression, as written.'),
  scope: queryText().describe('The scope of the rules’ DIDs.'),
  after: queryText().describe('The `next` of the previous page.'),
  limit: convertedBy(queryText(), (text = '50') => {
    const limit = Number(text);
    if (!Number.isInteger(limit) || limit < 1) throw new InvalidValueForKey(`limit: '${text}' is not a count`);
    return limit;
  }).describe(`Rules per page, at most ${MAX_RULE_PAGE} (50 by default).`),
});

export const registerConsoleReadRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/console/rules',
    {
      accept: JSON_ONLY,
      summary: 'A page of rules, newest first, filtered by state, account, activity or RSE expression.',
      query: rulePageQuery,
      raises: [InvalidValueForKey],
    },
    async (ctx, { query }) => {
      const filters: Record<string, string> = {};
      for (const key of RULE_PAGE_FILTERS) {
        const value = query[key]?.trim();
        if (value) filters[key] = value;
      }
      const { limit, after } = query;
      const page = await rulePage(services.readModels, filters, { limit, ...(after ? { after } : {}) });
      const rules = [];
      for (const rule of page.rules)
        rules.push(ruleJson(rule, await didBytes(services.readModels, rule.scope, rule.name)));
      sendJson(ctx, { rules, next: page.next });
    },
  );

  routes.get(
    '/console/rses/:rse/distances',
    {
      params: pathOf({ rse: pathText() }),
      accept: JSON_ONLY,
      summary: 'The distances from an RSE to every other RSE it has one to.',
      raises: [RSENotFound],
    },
    async (ctx, { params }) => {
      const source = await activeRse(services, params.rse);
      const found = [];
      for await (const distance of distancesFrom(services.readModels, source.id)) found.push(distanceView(distance));
      sendJson(ctx, found);
    },
  );
};
