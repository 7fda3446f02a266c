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
  RuleNotFound,
  SubscriptionNotFound,
  type RucioErrorClass,
} from '../../../domain/shared/errors.ts';
import {
  feedEvents,
  subjectHistory,
  type FeedQuery,
  type HistoryRange,
} from '../../../projections/audit/auditQueries.ts';
import { didSubject, rseSubject, ruleSubject, subscriptionSubject } from '../../../projections/audit/auditSubjects.ts';
import { didStateAsOf } from '../../../projections/audit/didStateAsOf.ts';
import { JSON_ONLY, mapStream, sendJson, sendStream, STREAM_ONLY } from '../../http.ts';
import type { RouteOptions, RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
import { didFromPath } from '../did/didParams.ts';
import {
  eventTypes,
  historyBound,
  IDENTITY_KINDS,
  identityParam,
  limitParam,
  positionParam,
  traceIdParam,
} from './auditParams.ts';
import { renderDidState, renderEvent } from './auditRendering.ts';

/** The filters of every history (documentation: GET /openapi.json). */
const RANGE = {
  since: 'The first event: a global position (digits) or an RFC 3339 time, inclusive.',
  until: 'The last event: a global position or an RFC 3339 time, inclusive.',
  type: 'Event types, the parameter repeated or comma-separated.',
};
const history = (summary: string, notFound: RucioErrorClass): RouteOptions => ({
  accept: STREAM_ONLY,
  summary,
  query: RANGE,
  raises: [AccessDenied, notFound],
});

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

  const rangeOf = (ctx: AppContext): HistoryRange => {
    const since = historyBound(ctx, 'since');
    const until = historyBound(ctx, 'until');
    const types = eventTypes(ctx);
    return { ...(since ? { since } : {}), ...(until ? { until } : {}), ...(types ? { types } : {}) };
  };

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

  const sendSubjectHistory = (ctx: AppContext, subject: string, streamName: string): Promise<void> =>
    sendStream(
      ctx,
      mapStream(subjectHistory(services.readModels, eventStore, { subject, streamName }, rangeOf(ctx)), renderEvent),
    );

  routes.get(
    '/audit/dids/*scope_name/events',
    history('Everything that touched a DID, oldest first (admins, or the owner of its scope).', DataIdentifierNotFound),
    async (ctx) => {
      const { scope, name } = didFromPath(ctx);
      await requireDidHistoryReader(ctx, scope, name);
      await sendSubjectHistory(ctx, didSubject(scope, name), didStreamName(scope, name));
    },
  );

  const pastState: RouteOptions = {
    accept: JSON_ONLY,
    summary: 'A DID as it was at a position or time, folded from its events and its rules’ events.',
    query: { as_of: 'A global position or an RFC 3339 time; default now.' },
    raises: [AccessDenied, DataIdentifierNotFound],
  };
  routes.get('/audit/dids/*scope_name/state', pastState, async (ctx) => {
    const { scope, name } = didFromPath(ctx);
    const asOf = historyBound(ctx, 'as_of');
    await requireDidHistoryReader(ctx, scope, name);
    const state = await didStateAsOf(eventStore, upcasters, scope, name, asOf);
    const asked = asOf === undefined ? null : 'position' in asOf ? Number(asOf.position) : asOf.time;
    sendJson(ctx, renderDidState(scope, name, asked, state));
  });

  routes.get(
    '/audit/rules/:ruleId/events',
    history('A rule’s events, its locks and transfer requests (admins).', RuleNotFound),
    async (ctx) => {
      const ruleId = ctx.params.ruleId!;
      await requireHistoryReader(ctx, `rule ${ruleId}`);
      await requireStream(ruleStreamName(ruleId), RuleNotFound, `No replication rule found with id ${ruleId}`);
      await sendSubjectHistory(ctx, ruleSubject(ruleId), ruleStreamName(ruleId));
    },
  );

  routes.get(
    '/audit/rses/:rse/events',
    history('An RSE’s events, the replicas, locks and rules it received or lost (admins).', RSENotFound),
    async (ctx) => {
      const rse = ctx.params.rse!;
      await requireHistoryReader(ctx, `RSE ${rse}`);
      await requireStream(rseStreamName(rse), RSENotFound, `RSE '${rse}' cannot be found`);
      await sendSubjectHistory(ctx, rseSubject(rse), rseStreamName(rse));
    },
  );

  routes.get(
    '/audit/subscriptions/:id/events',
    history('A subscription’s events, its name, dry runs and the rules it made (admins).', SubscriptionNotFound),
    async (ctx) => {
      const id = ctx.params.id!;
      await requireHistoryReader(ctx, `subscription ${id}`);
      await requireStream(subscriptionStreamName(id), SubscriptionNotFound, `No subscription with the id ${id} found`);
      await sendSubjectHistory(ctx, subscriptionSubject(id), subscriptionStreamName(id));
    },
  );

  routes.get(
    '/audit/accounts/:account/events',
    {
      ...history('What an account did: the events whose acting account it is (admins).', AccountNotFound),
      query: {
        ...RANGE,
        identity_type: 'With identity: the kind of identity.',
        identity: 'Only what this identity did.',
      },
    },
    async (ctx) => {
      const account = ctx.params.account!;
      await requireHistoryReader(ctx, `account ${account}`);
      await requireStream(accountStreamName(account), AccountNotFound, `Account with ID '${account}' cannot be found`);
      const identity = identityParam(ctx);
      await sendFeed(ctx, { ...rangeOf(ctx), account, ...(identity ? { identity } : {}) });
    },
  );

  routes.get(
    '/audit/traces/:traceId/events',
    {
      accept: STREAM_ONLY,
      summary: 'Everything one request caused: the events of its trace, daemon work included (admins).',
      query: RANGE,
      raises: [AccessDenied],
    },
    async (ctx) => {
      const trace = traceIdParam(ctx.params.traceId!);
      await requireHistoryReader(ctx, `trace ${trace}`);
      await sendFeed(ctx, { ...rangeOf(ctx), trace });
    },
  );

  const feed: RouteOptions = {
    accept: STREAM_ONLY,
    summary: 'The whole event feed, paged by position (admins).',
    query: {
      ...RANGE,
      account: 'Only the events this account caused.',
      identity_type: `With identity: the kind of identity that acted (${IDENTITY_KINDS.join(', ')}).`,
      identity:
        'Only the events this identity caused (a user name, a DN, SUB=…, ISS=…, an SSH key’s fingerprint, a daemon).',
      trace: 'Only the events of this trace (a W3C trace id): what one request caused.',
      after: 'The last position of the previous page.',
      limit: 'Events per page: 1000 by default, at most 10 000.',
    },
    raises: [AccessDenied],
  };
  routes.get('/audit/events', feed, async (ctx) => {
    await requireHistoryReader(ctx, 'the service');
    const account = typeof ctx.query.account === 'string' && ctx.query.account !== '' ? ctx.query.account : undefined;
    const after = positionParam(ctx, 'after');
    const identity = identityParam(ctx);
    const trace =
      typeof ctx.query.trace === 'string' && ctx.query.trace !== '' ? traceIdParam(ctx.query.trace) : undefined;
    const query = {
      ...rangeOf(ctx),
      limit: limitParam(ctx, 1000, 10_000),
      ...(account ? { account } : {}),
      ...(identity ? { identity } : {}),
      ...(trace ? { trace } : {}),
      ...(after !== undefined ? { after } : {}),
    };
    await sendFeed(ctx, query);
  });
};
