import { loadCaller } from '../../../commands/caller.ts';
import { scopeAccess } from '../../../commands/did/didStreams.ts';
import { accountStreamName } from '../../../domain/account/account.ts';
import { didStreamName } from '../../../domain/did/did.ts';
import { AUDIT_PERMISSIONS } from '../../../domain/permission/auditPolicy.ts';
import { allowOnly } from '../../../domain/permission/policy.ts';
import { rseStreamName } from '../../../domain/rse/rse.ts';
import { ruleStreamName } from '../../../domain/rule/rule.ts';
import { subscriptionStreamName } from '../../../domain/subscription/subscription.ts';
import {
  AccessDenied,
  AccountNotFound,
  DataIdentifierNotFound,
  RSENotFound,
  type RucioErrorClass,
} from '../../../domain/shared/errors.ts';
import { RuleNotFound } from '../../../domain/rule/ruleErrors.ts';
import { SubscriptionNotFound } from '../../../domain/subscription/subscriptionErrors.ts';
import {
  feedEvents,
  subjectHistory,
  type FeedQuery,
  type HistoryRange,
} from '../../../projections/audit/auditQueries.ts';
import { didSubject, rseSubject, ruleSubject, subscriptionSubject } from '../../../domain/shared/auditSubjects.ts';
import { didStateAsOf } from '../../../projections/audit/didStateAsOf.ts';
import { JSON_ONLY, mapStream, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import type { RouteOptions, RouteTable } from '../../route.ts';
import { pathOf, pathText } from '../../params.ts';
import { convertedBy } from '../../routeInput.ts';
import type { z } from 'zod';
import type { AppContext, Services } from '../../services.ts';
import { scopeNamePath } from '../did/didParams.ts';
import { accountHistoryQuery, asOfQuery, feedQuery, rangeQuery, traceIdParam } from './auditParams.ts';
import { renderDidState, renderEvent } from './auditRendering.ts';

const history = <P>(params: z.ZodType<P>, summary: string, notFound: RucioErrorClass) =>
  ({
    params,
    accept: STREAM_ONLY,
    summary,
    query: rangeQuery,
    raises: [AccessDenied, notFound],
  }) satisfies RouteOptions<P>;

type Range = z.output<typeof rangeQuery>;

const didPath = pathOf({ scope_name: scopeNamePath() });

/**
 * The audit API (our own prefix; Rucio has none): the history of a DID, a rule, an RSE or an
 * account as NDJSON, oldest first, found through the audit index (projections/audit) and read
 * from the event store itself; a DID's state at a past position or time, folded from its events;
 * and the whole feed, paged by position. Admins read everything; a scope's owner reads its DIDs.
 *
 * Filters: `since` and `until` (inclusive; a global position or an RFC 3339 time), `type`
 * (repeated or comma-separated). The feed also takes `account`, `identity_type` with `identity`
 * (who acted), `trace` (what one request caused; also `/audit/traces/{id}/events`), `after` (a
 * position: the last line of the previous page) and `limit` (default 1000, at most 10 000).
 */
export const registerAuditRoutes = (routes: RouteTable, services: Services): void => {
  const { eventStore, upcasters } = services.commands;

  const rangeOf = ({ since, until, type: types }: Range): HistoryRange => ({
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    ...(types ? { types } : {}),
  });

  const requireStream = async (streamName: string, notFound: RucioErrorClass, message: string): Promise<void> => {
    if ((await eventStore.streamRevision(streamName)) === 'no_stream') throw new notFound(message);
  };

  const requireHistoryReader = async (ctx: AppContext, what: string): Promise<void> => {
    const caller = await loadCaller(services.commands, ctx.state.issuer!);
    allowOnly(AUDIT_PERMISSIONS.readHistory(caller), `Account ${caller.account} can not read the history of ${what}`);
  };

  const requireDidHistoryReader = async (ctx: AppContext, scope: string, name: string): Promise<void> => {
    const caller = await loadCaller(services.commands, ctx.state.issuer!);
    const access = await scopeAccess(services.commands, caller, scope);
    allowOnly(
      AUDIT_PERMISSIONS.readDidHistory(access),
      `Account ${caller.account} can not read the history of ${scope}:${name}`,
    );
    await requireStream(
      didStreamName(scope, name),
      DataIdentifierNotFound,
      `Data identifier '${scope}:${name}' not found`,
    );
  };

  const sendFeed = (ctx: AppContext, query: FeedQuery): Promise<void> =>
    sendStream(ctx, mapStream(feedEvents(services.readModels, eventStore, query), renderEvent));

  const sendSubjectHistory = (ctx: AppContext, subject: string, streamName: string, range: Range): Promise<void> =>
    sendStream(
      ctx,
      mapStream(subjectHistory(services.readModels, eventStore, { subject, streamName }, rangeOf(range)), renderEvent),
    );

  routes.get(
    '/audit/dids/*scope_name/events',
    history(
      didPath,
      'Everything that touched a DID, oldest first (admins, or the owner of its scope).',
      DataIdentifierNotFound,
    ),
    async (ctx, { params, query }) => {
      const { scope, name } = params.scope_name;
      await requireDidHistoryReader(ctx, scope, name);
      await sendSubjectHistory(ctx, didSubject(scope, name), didStreamName(scope, name), query);
    },
  );

  const pastState = {
    params: didPath,
    accept: JSON_ONLY,
    summary: 'A DID as it was at a position or time, folded from its events and its rules’ events.',
    query: asOfQuery,
    raises: [AccessDenied, DataIdentifierNotFound],
  } satisfies RouteOptions;
  routes.get('/audit/dids/*scope_name/state', pastState, async (ctx, { params, query }) => {
    const { scope, name } = params.scope_name;
    const asOf = query.as_of;
    await requireDidHistoryReader(ctx, scope, name);
    const state = await didStateAsOf(eventStore, upcasters, scope, name, asOf);
    const asked = asOf === undefined ? null : 'position' in asOf ? Number(asOf.position) : asOf.time;
    sendJson(ctx, renderDidState(scope, name, asked, state));
  });

  routes.get(
    '/audit/rules/:ruleId/events',
    history(pathOf({ ruleId: pathText() }), 'A rule’s events, its locks and transfer requests (admins).', RuleNotFound),
    async (ctx, { params, query }) => {
      const ruleId = params.ruleId;
      await requireHistoryReader(ctx, `rule ${ruleId}`);
      await requireStream(ruleStreamName(ruleId), RuleNotFound, `No replication rule found with id ${ruleId}`);
      await sendSubjectHistory(ctx, ruleSubject(ruleId), ruleStreamName(ruleId), query);
    },
  );

  routes.get(
    '/audit/rses/:rse/events',
    history(
      pathOf({ rse: pathText() }),
      'An RSE’s events, the replicas, locks and rules it received or lost (admins).',
      RSENotFound,
    ),
    async (ctx, { params, query }) => {
      const rse = params.rse;
      await requireHistoryReader(ctx, `RSE ${rse}`);
      await requireStream(rseStreamName(rse), RSENotFound, `RSE '${rse}' cannot be found`);
      await sendSubjectHistory(ctx, rseSubject(rse), rseStreamName(rse), query);
    },
  );

  routes.get(
    '/audit/subscriptions/:id/events',
    history(
      pathOf({ id: pathText() }),
      'A subscription’s events, its name, dry runs and the rules it made (admins).',
      SubscriptionNotFound,
    ),
    async (ctx, { params, query }) => {
      const id = params.id;
      await requireHistoryReader(ctx, `subscription ${id}`);
      await requireStream(subscriptionStreamName(id), SubscriptionNotFound, `No subscription with the id ${id} found`);
      await sendSubjectHistory(ctx, subscriptionSubject(id), subscriptionStreamName(id), query);
    },
  );

  routes.get(
    '/audit/accounts/:account/events',
    {
      ...history(
        pathOf({ account: pathText() }),
        'What an account did: the events whose acting account it is (admins).',
        AccountNotFound,
      ),
      query: accountHistoryQuery,
    },
    async (ctx, { params, query }) => {
      const account = params.account;
      await requireHistoryReader(ctx, `account ${account}`);
      await requireStream(accountStreamName(account), AccountNotFound, `Account with ID '${account}' cannot be found`);
      const { identity } = query;
      await sendFeed(ctx, { ...rangeOf(query), account, ...(identity ? { identity } : {}) });
    },
  );

  routes.get(
    '/audit/traces/:traceId/events',
    history(
      pathOf({ traceId: convertedBy(pathText(), traceIdParam) }),
      'Everything one request caused: the events of its trace, daemon work included (admins).',
      AccessDenied,
    ),
    async (ctx, { params, query }) => {
      const trace = params.traceId;
      await requireHistoryReader(ctx, `trace ${trace}`);
      await sendFeed(ctx, { ...rangeOf(query), trace });
    },
  );

  const feed = {
    accept: STREAM_ONLY,
    summary: 'The whole event feed, paged by position (admins).',
    query: feedQuery,
    raises: [AccessDenied],
  } satisfies RouteOptions;
  routes.get('/audit/events', feed, async (ctx, { query: parameters }) => {
    await requireHistoryReader(ctx, 'the service');
    const { account, after, limit, identity, trace } = parameters;
    const query = {
      ...rangeOf(parameters),
      limit,
      ...(account ? { account } : {}),
      ...(identity ? { identity } : {}),
      ...(trace ? { trace } : {}),
      ...(after !== undefined ? { after } : {}),
    };
    await sendFeed(ctx, query);
  });
};
