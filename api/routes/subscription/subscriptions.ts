import { loadCaller } from '../../../commands/caller.ts';
import { addSubscription, updateSubscription } from '../../../commands/subscription/subscriptionCommands.ts';
import { allowOnly } from '../../../domain/permission/policy.ts';
import { SUBSCRIPTION_PERMISSIONS } from '../../../domain/permission/subscriptionPolicy.ts';
import { AccessDenied, AccountNotFound, InvalidObject, InvalidValueForKey } from '../../../domain/shared/errors.ts';
import { SubscriptionDuplicate, SubscriptionNotFound } from '../../../domain/subscription/subscriptionErrors.ts';
import { listRules, ruleFilter } from '../../../projections/rule/ruleQueries.ts';
import {
  dryRuns,
  findSubscription,
  listSubscriptions,
  ruleStateCounts,
} from '../../../projections/subscription/subscriptionQueries.ts';
import type { SubscriptionDocument } from '../../../projections/subscription/subscriptionsProjection.ts';
import { JSON_ONLY, mapStream, sendJson, sendStream, sendText, STREAM_ONLY } from '../../http.ts';
import { jsonObjectBodyOf, pathOf, pathText, queryOf, queryText } from '../../params.ts';
import { convertedBy } from '../../routeInput.ts';
import { created, type RouteOptions, type RouteTable, runCommand } from '../../route.ts';
import type { Services } from '../../services.ts';
import { ruleLines } from '../rule/rules.ts';
import {
  accountName,
  isRucioId,
  NEW_SUBSCRIPTION,
  newSubscriptionSchema,
  SUBSCRIPTION_UPDATE,
  subscriptionName,
  subscriptionUpdateSchema,
} from './subscriptionParams.ts';
import { dryRunJson, ruleStateCountJson, subscriptionJson } from './subscriptionRendering.ts';

const ADD_SUBSCRIPTION = {
  params: pathOf({ account: convertedBy(pathText(), accountName), name: convertedBy(pathText(), subscriptionName) }),
  summary: 'Adds a subscription (admins): every new dataset or container its filter matches gets its rules.',
  body: jsonObjectBodyOf(NEW_SUBSCRIPTION, {
    documentedBy: newSubscriptionSchema,
    description:
      '`{options: {filter, replication_rules, comments, lifetime, retroactive?, dry_run?, priority?}}`: the filter (scope and pattern expressions, DID types, owners, metadata columns), the rule dictionaries (copies, rse_expression, ...), the lifetime in days (null for none).',
  }),
  success: { status: 201, type: 'text/html; charset=utf-8', description: "The new subscription's id, as text." },
  raises: [InvalidObject, SubscriptionDuplicate, AccountNotFound, AccessDenied],
} satisfies RouteOptions;
const UPDATE_SUBSCRIPTION = {
  params: pathOf({ account: pathText(), name: convertedBy(pathText(), subscriptionName) }),
  summary: 'Changes a subscription (admins); `state: "I"` stops it. Answered 201 as Rucio does.',
  body: jsonObjectBodyOf(SUBSCRIPTION_UPDATE, {
    documentedBy: subscriptionUpdateSchema,
    description: '`{options: {filter?, replication_rules?, comments?, lifetime?, retroactive?, priority?, state?}}`.',
  }),
  success: { status: 201, type: 'application/json', description: 'The JSON string "Created".' },
  raises: [InvalidObject, SubscriptionNotFound, AccessDenied],
} satisfies RouteOptions;

/**
 * Items of `source`, or, when there are none, the error Rucio's listing raises (read before the
 * answer starts, so it still becomes a proper 404).
 */
async function* orNotFound<T>(source: AsyncIterable<T>, error: () => Error): AsyncGenerator<T> {
  let found = false;
  for await (const item of source) {
    found = true;
    yield item;
  }
  if (!found) throw error();
}

/** Rucio's message for a listing that found nothing (`None` where it was not narrowed). */
const noneFound = (account: string | undefined, name: string | undefined) => () =>
  new SubscriptionNotFound(`Subscription for account '${account ?? '*'}' named '${name ?? 'None'}' not found`);

/**
 * The /subscriptions area (Rucio's subscriptions.py) and what dry-run subscriptions would have
 * made (`GET /admin/subscriptions/dry_runs`, our own). Adding and updating are for admins;
 * reading for every account.
 */
export const registerSubscriptionRoutes = (routes: RouteTable, services: Services): void => {
  const listing = (account: string | undefined, name: string | undefined) =>
    mapStream(
      orNotFound(listSubscriptions(services.readModels, { account, name }), noneFound(account, name)),
      subscriptionJson,
    );

  routes.get(
    '/subscriptions/',
    { accept: STREAM_ONLY, summary: 'Every subscription.', raises: [SubscriptionNotFound] },
    async (ctx) => {
      await sendStream(ctx, listing(undefined, undefined));
    },
  );
  routes.get(
    '/subscriptions/:account',
    {
      params: pathOf({ account: pathText() }),
      accept: STREAM_ONLY,
      summary: 'The subscriptions of an account (`*` wildcards allowed).',
      raises: [SubscriptionNotFound],
    },
    async (ctx, { params }) => {
      await sendStream(ctx, listing(params.account, undefined));
    },
  );
  routes.get(
    '/subscriptions/name/:name',
    {
      params: pathOf({ name: pathText() }),
      accept: STREAM_ONLY,
      summary: 'The subscriptions of that name, of every account.',
      raises: [SubscriptionNotFound],
    },
    async (ctx, { params }) => {
      await sendStream(ctx, listing(undefined, params.name));
    },
  );
  routes.get(
    '/subscriptions/id/:subscription_id',
    {
      params: pathOf({ subscription_id: pathText() }),
      accept: JSON_ONLY,
      summary: 'One subscription by id.',
      raises: [SubscriptionNotFound],
    },
    async (ctx, { params }) => {
      const id = params.subscription_id;
      const subscription = isRucioId(id) ? await findSubscription(services.readModels, id) : null;
      if (!subscription) throw new SubscriptionNotFound(`No subscription with the id ${id} found`);
      sendJson(ctx, subscriptionJson(subscription));
    },
  );
  routes.get(
    '/subscriptions/:account/:name',
    {
      params: pathOf({ account: pathText(), name: pathText() }),
      accept: STREAM_ONLY,
      summary: 'One subscription, as a stream of one line.',
      raises: [SubscriptionNotFound],
    },
    async (ctx, { params }) => {
      await sendStream(ctx, listing(params.account, params.name));
    },
  );

  routes.post('/subscriptions/:account/:name', ADD_SUBSCRIPTION, async (ctx, { params, body }) => {
    const subscription = { account: params.account, name: params.name, ...body };
    const { id } = await runCommand(ctx, services, (metadata) =>
      addSubscription(services.commands, subscription, metadata),
    );
    // Rucio answers the bare id as text, which the client returns as it is.
    sendText(ctx, id, 201);
  });
  routes.put('/subscriptions/:account/:name', UPDATE_SUBSCRIPTION, async (ctx, { params, body: update }) => {
    await created(ctx, services, (metadata) => updateSubscription(services.commands, { ...params, update }, metadata));
  });

  routes.get(
    '/subscriptions/:account/:name/rules',
    {
      params: pathOf({ account: pathText(), name: pathText() }),
      accept: STREAM_ONLY,
      summary: 'The rules a subscription made.',
      query: queryOf({ state: queryText().describe('A rule state or its letter.') }),
      raises: [SubscriptionNotFound, InvalidValueForKey],
    },
    async (ctx, { params, query }) => {
      const account = params.account;
      const name = params.name;
      const state = query.state;
      let subscription: SubscriptionDocument | undefined;
      for await (const found of listSubscriptions(services.readModels, { account, name })) {
        subscription = found;
        break;
      }
      if (!subscription) throw noneFound(account, name)();
      const filter = ruleFilter({ subscription_id: subscription.id, ...(state ? { state } : {}) });
      await sendStream(ctx, ruleLines(services, listRules(services.readModels, filter)));
    },
  );
  routes.get(
    '/subscriptions/:account/:name/rules/states',
    {
      params: pathOf({ account: pathText(), name: pathText() }),
      accept: STREAM_ONLY,
      summary: 'The rules of a subscription per state: `{account, name, state, count}` lines.',
    },
    async (ctx, { params }) => {
      const of = listSubscriptions(services.readModels, { account: params.account, name: params.name });
      await sendStream(ctx, mapStream(ruleStateCounts(services.readModels, of), ruleStateCountJson));
    },
  );
  routes.get(
    '/subscriptions/:account/rules/states',
    {
      params: pathOf({ account: pathText() }),
      accept: STREAM_ONLY,
      summary: 'The rules of each subscription of an account per state.',
    },
    async (ctx, { params }) => {
      const of = listSubscriptions(services.readModels, { account: params.account });
      await sendStream(ctx, mapStream(ruleStateCounts(services.readModels, of), ruleStateCountJson));
    },
  );

  routes.get(
    '/admin/subscriptions/dry_runs',
    {
      accept: STREAM_ONLY,
      summary: 'What dry-run subscriptions would have made, per DID, oldest first (admins).',
      query: queryOf({ subscription_id: queryText().describe('Only this subscription.') }),
      raises: [AccessDenied],
    },
    async (ctx, { query }) => {
      const caller = await loadCaller(services.commands, ctx.state.issuer!);
      allowOnly(
        SUBSCRIPTION_PERMISSIONS.listDryRuns(caller),
        `Account ${caller.account} can not list what subscriptions would have made`,
      );
      await sendStream(ctx, mapStream(dryRuns(services.readModels, query.subscription_id), dryRunJson));
    },
  );
};
