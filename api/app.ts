import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import { randomUUID } from 'node:crypto';
import { ValueError } from '../domain/shared/errors.ts';
import { CONTROL_CHARACTERS } from '../domain/shared/names.ts';
import { configSetting } from '../projections/config/configQueries.ts';
import { clientHeaders } from './clientHeaders.ts';
import { errorMiddleware, writeError } from './errors.ts';
import { httpMetrics } from './metrics/httpMetrics.ts';
import { registerMetricsRoutes } from './metrics/metricsRoutes.ts';
import { registerOpenApiRoutes } from './openapi/openApiRoutes.ts';
import { sendText } from './http.ts';
import { hasBody, readBodyText } from './requestBody.ts';
import { refuseUnsafeQuery } from './requestText.ts';
import { RouteTable } from './route.ts';
import { indexRouteMatching } from './routeIndex.ts';
import { registerAccountLimitRoutes } from './routes/account/accountLimits.ts';
import { registerAccountRoutes } from './routes/account/accounts.ts';
import { registerAccountUsageRoutes } from './routes/account/accountUsage.ts';
import { registerAuthRoutes } from './routes/auth/authRoutes.ts';
import { registerConfigRoutes } from './routes/config/config.ts';
import { registerHeartbeatRoutes } from './routes/heartbeat/heartbeats.ts';
import { registerTraceRoutes, TRACE_BODY_BYTES, TRACE_PATHS } from './routes/trace/traces.ts';
import { registerDidRoutes } from './routes/did/dids.ts';
import { registerIdentityRoutes } from './routes/identity/identities.ts';
import { registerImportExportRoutes } from './routes/importExport/importExport.ts';
import { registerMetaConventionRoutes } from './routes/metaConvention/metaConventions.ts';
import { registerPingRoutes } from './routes/ping/ping.ts';
import { registerReplicaRoutes } from './routes/replica/replicas.ts';
import { registerRseProtocolRoutes } from './routes/rse/rseProtocols.ts';
import { registerRseResourceRoutes } from './routes/rse/rseResources.ts';
import { registerRseRoutes } from './routes/rse/rses.ts';
import { registerMessageRoutes } from './routes/admin/messages.ts';
import { registerProjectionRoutes } from './routes/admin/projections.ts';
import { registerAuditRoutes } from './routes/audit/auditRoutes.ts';
import { registerSessionRoutes } from './routes/admin/sessions.ts';
import { registerLockRoutes } from './routes/lock/locks.ts';
import { registerRequestRoutes } from './routes/request/requests.ts';
import { registerRuleRoutes } from './routes/rule/rules.ts';
import { registerScopeRoutes } from './routes/scope/scopes.ts';
import { registerLifetimeExceptionRoutes } from './routes/lifetimeException/lifetimeExceptions.ts';
import { registerSubscriptionRoutes } from './routes/subscription/subscriptions.ts';
import { registerOpenDataRoutes } from './routes/opendata/opendata.ts';
import { registerDiracRoutes } from './routes/dirac/dirac.ts';
import { SETTINGS } from '../domain/config/settings.ts';
import { registerArchiveRoutes } from './routes/did/archives.ts';
import { registerCredentialRoutes } from './routes/credential/credentials.ts';
import { registerRedirectRoutes } from './routes/redirect/redirect.ts';
import { registerDaemonRoutes } from './routes/admin/daemons.ts';
import { registerTransferStatusRoute } from './routes/admin/transfers.ts';
import { registerEventLogVerifyRoute } from './routes/audit/eventLogVerify.ts';
import { registerRuleStateRoute } from './routes/audit/ruleState.ts';
import { registerConsoleReadRoutes } from './routes/console/consoleReads.ts';
import { registerConsoleRoutes } from './routes/console/consoleRoutes.ts';
import { consoleFilesMiddleware } from './consoleFiles.ts';
import { answerBrowserNotFound } from './browserNotFound.ts';
import type { Logger } from '../infra/logger.ts';
import { inSpan, newTraceId, parseTraceparent, tracingOn, type TraceContext } from '../infra/tracing.ts';
import type { IdentityType } from '../domain/identity/identity.ts';
import type { AppState, Services } from './services.ts';

/** Every area's routes, registered in one table (api/route.ts). */
export const routeTable = (services: Services): RouteTable => {
  const routes = new RouteTable(services);
  registerPingRoutes(routes);
  registerAuthRoutes(routes, services);
  registerAccountRoutes(routes, services);
  registerScopeRoutes(routes, services);
  registerIdentityRoutes(routes, services);
  registerConfigRoutes(routes, services);
  registerRseRoutes(routes, services);
  registerRseProtocolRoutes(routes, services);
  registerRseResourceRoutes(routes, services);
  registerAccountLimitRoutes(routes, services);
  registerAccountUsageRoutes(routes, services);
  registerImportExportRoutes(routes, services);
  registerDidRoutes(routes, services);
  registerMetaConventionRoutes(routes, services);
  registerReplicaRoutes(routes, services);
  registerRuleRoutes(routes, services);
  registerRequestRoutes(routes, services);
  registerLockRoutes(routes, services);
  registerSubscriptionRoutes(routes, services);
  registerLifetimeExceptionRoutes(routes, services);
  registerOpenDataRoutes(routes, services);
  registerDiracRoutes(routes, services);
  registerMessageRoutes(routes, services);
  registerProjectionRoutes(routes, services);
  registerAuditRoutes(routes, services);
  registerSessionRoutes(routes, services);
  registerMetricsRoutes(routes, services);
  registerHeartbeatRoutes(routes, services);
  registerTraceRoutes(routes, services);
  registerArchiveRoutes(routes, services);
  registerCredentialRoutes(routes, services);
  registerRedirectRoutes(routes, services);
  registerDaemonRoutes(routes, services);
  registerTransferStatusRoute(routes, services);
  registerEventLogVerifyRoute(routes, services);
  registerRuleStateRoute(routes, services);
  registerConsoleRoutes(routes, services);
  registerConsoleReadRoutes(routes, services);
  registerOpenApiRoutes(routes);
  return routes;
};

/** The Koa application: one middleware chain, one router. Listening is the caller's business. */
export const createApp = (services: Services): Koa<AppState> => {
  const app = new Koa<AppState>();
  app.silent = true;
  // ctx.ip: the connection's address, or behind a trusted proxy the last hop it appended.
  app.proxy = services.config.trustProxy;
  app.maxIpsCount = 1;
  const routes = routeTable(services);
  const router = new Router<AppState>({ strict: true });
  routes.install(router);
  indexRouteMatching(router);

  app.use(httpMetrics(services.metrics));
  app.use(requestLog(services));
  // Outside the error answers, so that they get the X-Rucio-* twins too.
  app.use(
    clientHeaders(services.config.clientHeaders, [services.config.x509DnHeader, services.config.gssRemoteUserHeader]),
  );
  app.use(errorMiddleware());
  // The web console's page and modules (console/), before the API's routing.
  app.use(consoleFilesMiddleware());
  app.use(corsPreflight(services));
  app.use(decodedRoutingPath());
  app.use(rawTextBody(services.config.maxBodyBytes, services.config.connections.bodyIdleTimeoutMs));
  app.use(router.routes());
  app.use(unmatched(router));
  return app;
};

/**
 * The state of one request (Koa's `ctx.state`). Its logger (the service's with the request id
 * bound, and the account once the token check has named it) is made only when a route or the
 * error handler logs something besides the request line: most requests never need it, and making
 * one costs more than answering a `/ping`. A class rather than a property defined on each
 * request's object: defining an accessor per request turned every state into a slow dictionary.
 */
class RequestState implements AppState {
  issuer?: string;
  identity?: string;
  identityType?: IdentityType;
  clientHeaders?: 'svc' | 'rucio';
  errorStatus?: Readonly<Record<string, number>>;
  body?: string;
  private made: { for: string | undefined; logger: Logger } | undefined;

  constructor(
    private readonly base: Logger,
    readonly requestId: string,
    public traceId: string,
  ) {}

  get logger(): Logger {
    const account = this.issuer;
    if (!this.made || this.made.for !== account) {
      const bindings = { requestId: this.requestId, traceId: this.traceId };
      this.made = { for: account, logger: this.base.child(account ? { ...bindings, account } : bindings) };
    }
    return this.made.logger;
  }

  set logger(value: Logger) {
    this.made = { for: this.issuer, logger: value };
  }
}

/**
 * A request id (taken from X-Request-Id when given), the request's trace (its `traceparent`, or a
 * new one: infra/tracing.ts), and one structured log line per request. The trace id goes back in
 * `X-Trace-Id`, so a client can ask the audit what its request caused.
 */
const requestLog =
  (services: Services): Middleware<AppState> =>
  async (ctx, next) => {
    const started = process.hrtime.bigint();
    const given = ctx.req.headers['x-request-id'];
    const requestId = typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    const parent = parseTraceparent(ctx.req.headers.traceparent);
    const state = new RequestState(services.logger, requestId, parent?.traceId ?? newTraceId());
    ctx.state = state;
    // Node's own call: Koa's ctx.set allocates arrays for every header it sets.
    ctx.res.setHeader('X-Request-Id', requestId);
    try {
      if (tracingOn()) await inRequestSpan(ctx, state, parent, next);
      else {
        ctx.res.setHeader('X-Trace-Id', state.traceId);
        await next();
      }
    } finally {
      const milliseconds = Number(process.hrtime.bigint() - started) / 1e6;
      services.logger.info(
        {
          requestId,
          traceId: state.traceId,
          method: ctx.method,
          url: ctx.url,
          status: ctx.status,
          ms: Math.round(milliseconds * 10) / 10,
          account: ctx.state.issuer,
        },
        'request',
      );
    }
  };

/**
 * The request as a span (when spans are made), child of the caller's `traceparent`; a request
 * without one starts a trace, whose id becomes the request's. Named by the route's pattern once
 * the router has matched it, as OpenTelemetry's HTTP conventions ask.
 */
const inRequestSpan = (
  ctx: Koa.ParameterizedContext<AppState>,
  state: RequestState,
  parent: TraceContext | undefined,
  next: () => Promise<unknown>,
): Promise<void> =>
  inSpan(
    ctx.method,
    {
      kind: 'server',
      ...(parent ? { parent } : {}),
      attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path, 'dms.request_id': state.requestId },
    },
    async (span) => {
      if (span) state.traceId = span.spanContext().traceId;
      ctx.res.setHeader('X-Trace-Id', state.traceId);
      try {
        await next();
      } finally {
        const route = ctx.routerPath;
        span?.updateName(route ? `${ctx.method} ${route}` : ctx.method);
        span?.setAttributes({
          'http.response.status_code': ctx.status,
          ...(route ? { 'http.route': route } : {}),
          ...(ctx.state.issuer ? { 'dms.account': ctx.state.issuer } : {}),
        });
      }
    },
  );

/**
 * OPTIONS on any URL is Rucio's CORS pre-flight: allowed (200) when the Origin is listed in the
 * configuration option `webui.urls` (comma-separated), refused (403) otherwise. No token needed.
 */
const corsPreflight =
  (services: Services): Middleware<AppState> =>
  async (ctx, next) => {
    if (ctx.method !== 'OPTIONS') return next();
    const allowed = (await configSetting(services.readModels, SETTINGS.webuiUrls))
      .split(',')
      .map((url) => url.trim())
      .filter(Boolean);
    const origin = ctx.get('Origin');
    if (!origin || !allowed.includes(origin)) {
      // Rucio answers an empty 403; the error format tells the client why.
      writeError(
        ctx,
        403,
        'AccessDenied',
        origin
          ? `The origin '${origin}' may not make cross-origin requests.`
          : 'OPTIONS is a CORS pre-flight: it needs an Origin header.',
      );
      return;
    }
    ctx.body = '';
    ctx.status = 200;
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.set('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', ctx.get('Access-Control-Request-Headers'));
    ctx.set('Access-Control-Allow-Credentials', 'true');
  };

/**
 * Rucio's web server decodes percent-escapes before routing (`%2F` in a DID name becomes a `/`
 * that `*scope_name` swallows). The router matches the decoded path; `%` is escaped again so the
 * router's own parameter decoding gives the decoded text back unchanged. A path that is not
 * UTF-8 or holds control characters (`%0d%0a`) is refused: the router and the name patterns
 * would otherwise stop at them and act on a shorter name than the one given.
 */
const decodedRoutingPath = (): Middleware<AppState> => async (ctx, next) => {
  let decoded: string;
  try {
    decoded = decodeURIComponent(ctx.path);
  } catch {
    throw new ValueError(`Could not decode the path '${ctx.path}'`);
  }
  if (CONTROL_CHARACTERS.test(decoded)) throw new ValueError(`The path '${ctx.path}' holds control characters.`);
  refuseUnsafeQuery(ctx.querystring);
  ctx.newRouterPath = decoded.replaceAll('%', '%25');
  await next();
};

/**
 * Bodies are JSON whatever their Content-Type (the Python client sends none, also on DELETE), so
 * every body is read as text, bounded and checked (api/requestBody.ts), and the routes parse it
 * (api/params.ts).
 */
const rawTextBody =
  (limit: number, idleMs: number): Middleware<AppState> =>
  async (ctx, next) => {
    // Traces come without a token: their bodies are bounded far lower (api/routes/trace/traces.ts).
    const bound = TRACE_PATHS.has(ctx.path) ? Math.min(limit, TRACE_BODY_BYTES) : limit;
    if (hasBody(ctx.req)) ctx.state.body = await readBodyText(ctx.req, bound, idleMs);
    await next();
  };

/**
 * What the router did not answer, as Werkzeug would: a path that only exists with a trailing
 * slash redirects there (308, method and body kept, a line saying so as the body); a known path with another method is 405
 * with `Allow`; anything else is 404 (for a browser, a page: api/browserNotFound.ts).
 */
const unmatched =
  (router: Router<AppState>): Middleware<AppState> =>
  async (ctx) => {
    const path = ctx.newRouterPath ?? ctx.path;
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    if (!path.endsWith('/') && router.match(`${path}/`, method).route) {
      const location = `${ctx.path}/${ctx.querystring ? `?${ctx.querystring}` : ''}`;
      ctx.status = 308;
      ctx.set('Location', location);
      // Clients follow the Location; a person with `curl -s` sees this instead of nothing.
      sendText(
        ctx,
        `Permanent redirect to ${location}: this path ends with a slash. Send the same request there (curl: -L).\n`,
        308,
        'text/plain; charset=utf-8',
      );
      return;
    }
    const matched = router.match(path, method);
    if (matched.path.length > 0) {
      const allowed = new Set(matched.path.flatMap((layer) => layer.methods));
      allowed.add('OPTIONS');
      ctx.set('Allow', [...allowed].sort().join(', '));
      writeError(ctx, 405, 'MethodNotAllowed', `The method ${ctx.method} is not allowed for the requested URL.`);
      return;
    }
    if (answerBrowserNotFound(ctx)) return;
    writeError(ctx, 404, 'NotFound', 'The requested URL was not found on the server.');
  };
