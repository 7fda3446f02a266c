import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import type { CommandMetadata } from '../domain/shared/event.ts';
import { dateOf, type Clock } from '../infra/clock.ts';
import { ResourceTemporaryUnavailable, type RucioErrorClass } from '../domain/shared/errors.ts';
import { actingIdentity } from './auth/actingIdentity.ts';
import { authenticate } from './auth/authenticate.ts';
import { requireAccept, sendCreated, sendOk } from './http.ts';
import type { z } from 'zod';
import { parseRouteInput, type EmptyInput, type JsonBody, type RouteInput, type RouteSchemas } from './routeInput.ts';
import { compareRanks, rankPath, type RouteRank } from './routeRanking.ts';
import type { AppContext, AppState, Services } from './services.ts';

/** A route's handler: the request's context, and what the route's schemas parsed from it. */
export type Handler<P = EmptyInput, Q = EmptyInput, B = undefined> = (
  ctx: AppContext,
  input: RouteInput<P, Q, B>,
) => Promise<void> | void;

/**
 * The handler of routes declared with `options` (for a handler shared by several routes, or
 * written apart from its options): its input typed by the options' schemas.
 */
export type HandlerFor<O> = Handler<
  O extends { params: z.ZodType<infer P> } ? P : EmptyInput,
  O extends { query: z.ZodType<infer Q> } ? Q : EmptyInput,
  O extends { body: JsonBody<infer B> } ? B : undefined
>;

/**
 * A route's options: its schemas (what it reads: `params`, `query`, `body`, api/routeInput.ts),
 * how it answers, and what the OpenAPI document says of it.
 */
export type RouteOptions<P = unknown, Q = unknown, B = unknown> = RouteSchemas<P, Q, B> &
  RouteBehaviour &
  RouteDocumentation;

type RouteBehaviour = Readonly<{
  /** Needs X-Svc-Auth-Token; default true. */
  auth?: boolean;
  /** Content types the answer can take; an Accept header allowing none of them gets 406. */
  accept?: readonly string[];
  /** Statuses this route gives exception classes instead of the ones declared with each class. */
  errors?: Readonly<Record<string, number>>;
  /** Adds Rucio's CORS and no-cache headers (every blueprint but auth and redirect); default true. */
  commonHeaders?: boolean;
}>;

/**
 * What `GET /openapi.json` says of a route beyond its method, path, token and content types
 * (api/openapi/openApiDocument.ts). All optional: a route without them is documented from the
 * defaults of its method.
 */
export type RouteDocumentation = Readonly<{
  /** What the route does, in one line. */
  summary?: string;
  /**
   * Its answer on success where that is not the usual one: GET 200 (and POST with `accept`
   * STREAM_ONLY) in the first `accept` type, else JSON; POST 201 with the JSON string "Created";
   * PUT and DELETE 200 with an empty body. `'none'`: it always answers an error (a login method
   * not offered).
   */
  success?: Readonly<{ status: number; type?: string; description?: string }> | 'none';
  /**
   * Exception classes it answers besides the ones every route may (ValueError, CannotAuthenticate
   * with `auth`, UnsupportedRequestedContentType with `accept`, ...), at their declared status
   * unless `errors` gives another.
   */
  raises?: readonly RucioErrorClass[];
}>;

type Method = 'get' | 'post' | 'put' | 'delete';

const UPPER_CASE = { get: 'GET', post: 'POST', put: 'PUT', delete: 'DELETE' } as const satisfies Record<Method, string>;

/** What the table tells about a route: its method, its path pattern, whether it needs a token, its options. */
export type RouteEntry = Readonly<{
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  auth: boolean;
  options: RouteOptions;
}>;

type Route = Readonly<{
  method: Method;
  path: string;
  auth: boolean;
  options: RouteOptions;
  chain: readonly RouterMiddleware<AppState>[];
  rank: RouteRank;
  /** Registration index of the first route of the same shape, then of this route: Werkzeug's tie-breakers. */
  shapeOrder: number;
  order: number;
}>;

/**
 * Collects the routes of every area, then installs them on the one router ranked as Werkzeug
 * ranks Rucio's rules (api/routeRanking.ts), so areas and modules register in any order. The
 * first route whose path and method match answers.
 */
export class RouteTable {
  private readonly routes: Route[] = [];
  private readonly shapes = new Map<string, number>();
  private installed = false;

  constructor(private readonly services: Services) {}

  get<P = EmptyInput, Q = EmptyInput, B = undefined>(
    path: string,
    options: RouteOptions<P, Q, B>,
    handler: Handler<P, Q, B>,
  ): this {
    return this.add('get', path, options, handler);
  }
  post<P = EmptyInput, Q = EmptyInput, B = undefined>(
    path: string,
    options: RouteOptions<P, Q, B>,
    handler: Handler<P, Q, B>,
  ): this {
    return this.add('post', path, options, handler);
  }
  put<P = EmptyInput, Q = EmptyInput, B = undefined>(
    path: string,
    options: RouteOptions<P, Q, B>,
    handler: Handler<P, Q, B>,
  ): this {
    return this.add('put', path, options, handler);
  }
  delete<P = EmptyInput, Q = EmptyInput, B = undefined>(
    path: string,
    options: RouteOptions<P, Q, B>,
    handler: Handler<P, Q, B>,
  ): this {
    return this.add('delete', path, options, handler);
  }

  /** Every route, in registration order (read-only: for tests and documentation). */
  entries(): readonly RouteEntry[] {
    return this.routes.map(({ method, path, auth, options }) => ({
      method: UPPER_CASE[method],
      path,
      auth,
      options,
    }));
  }

  /** Puts every route on the router, best ranked first. Once: a route added later would be lost. */
  install(router: Router<AppState>): void {
    if (this.installed) throw new Error('The route table is installed already');
    this.installed = true;
    const ranked = [...this.routes].sort(
      (a, b) => compareRanks(a.rank, b.rank) || a.shapeOrder - b.shapeOrder || a.order - b.order,
    );
    for (const { method, path, chain } of ranked) {
      router[method](path, ...chain);
    }
  }

  private add<P, Q, B>(method: Method, path: string, options: RouteOptions<P, Q, B>, handler: Handler<P, Q, B>): this {
    if (this.installed) throw new Error(`The route ${path} comes after the route table was installed`);
    const chain: RouterMiddleware<AppState>[] = [
      async (ctx, next) => {
        if (options.errors) ctx.state.errorStatus = options.errors;
        if (options.commonHeaders ?? true) setCommonHeaders(ctx);
        await next();
      },
    ];
    if (options.auth ?? true) chain.push(authenticate(this.services));
    chain.push(async (ctx) => {
      if (options.accept) requireAccept(ctx, options.accept);
      await handler(ctx, parseRouteInput(ctx, options));
    });
    const rank = rankPath(path);
    const order = this.routes.length;
    if (!this.shapes.has(rank.shape)) this.shapes.set(rank.shape, order);
    this.routes.push({
      method,
      path,
      auth: options.auth ?? true,
      options,
      chain,
      rank,
      shapeOrder: this.shapes.get(rank.shape)!,
      order,
    });
    return this;
  }
}

/**
 * Rucio's after_request hook: CORS echo (the literal `None` without an Origin) and no-cache on GET.
 * Set with Node's own call: Koa's ctx.set allocates arrays for every header, on every request.
 */
const setCommonHeaders = (ctx: AppContext): void => {
  const headers = ctx.req.headers;
  const response = ctx.res;
  response.setHeader('Access-Control-Allow-Origin', headers.origin || 'None');
  response.setHeader('Access-Control-Allow-Headers', headers['access-control-request-headers'] || 'None');
  response.setHeader('Access-Control-Allow-Methods', '*');
  response.setHeader('Access-Control-Allow-Credentials', 'true');
  if (ctx.method === 'GET') {
    response.setHeader('Cache-Control', 'post-check=0, pre-check=0');
    response.setHeader('Pragma', 'no-cache');
  }
};

/**
 * The metadata of a command issued by this request: now (the service's clock), the caller (the
 * account and the identity its token was issued to), the request id and the request's trace.
 */
export const commandMetadata = (ctx: AppContext, clock: Clock): CommandMetadata => {
  const { identity, identityType } = ctx.state;
  return {
    now: dateOf(clock),
    account: ctx.state.issuer ?? 'anonymous',
    requestId: ctx.state.requestId,
    correlationId: ctx.state.traceId,
    ...(identity !== undefined && identityType !== undefined
      ? { identity: actingIdentity(identityType, identity) }
      : {}),
  };
};

/**
 * Read your writes: a write is acknowledged only once the read models it changed (those of the
 * projection groups its events touched) have applied its last event, so that every read that
 * follows, through any API process, shows it. Past the configured bound the write is durable but
 * not yet readable: answered 503 (ResourceTemporaryUnavailable) rather than a success a read could
 * contradict. A bound of 0 turns the wait off (the write side measured alone).
 */
const afterWrite = async (ctx: AppContext, services: Services, position: bigint | undefined): Promise<void> => {
  const timeoutMs = services.config.readYourWritesTimeoutMs;
  if (position === undefined || timeoutMs === 0) return;
  if (await services.afterWrite(position, timeoutMs)) return;
  ctx.state.logger.warn({ position: position.toString(), timeoutMs }, 'read models lag behind a write');
  throw new ResourceTemporaryUnavailable(
    `The write is stored (position ${position}) but the read models have not shown it within ${timeoutMs} ms; it becomes readable once they do`,
  );
};

/** What every command gives back: the position of its last event, none when it wrote nothing. */
type WriteOutcome = Readonly<{ position: bigint | undefined }>;

/**
 * A route's write: the command runs with this request's metadata, and the outcome comes back once
 * the read models have caught up with it (read your writes), ready for the answer.
 */
export const runCommand = async <Outcome extends WriteOutcome>(
  ctx: AppContext,
  services: Services,
  command: (metadata: CommandMetadata) => Promise<Outcome>,
): Promise<Outcome> => {
  const outcome = await command(commandMetadata(ctx, services.clock));
  await afterWrite(ctx, services, outcome.position);
  return outcome;
};

/** A write answered as Rucio's creations are: 201 and the JSON string "Created". */
export const created = async (
  ctx: AppContext,
  services: Services,
  command: (metadata: CommandMetadata) => Promise<WriteOutcome>,
): Promise<void> => {
  await runCommand(ctx, services, command);
  sendCreated(ctx);
};

/** A write answered as Rucio's updates and deletions are: 200 and an empty body. */
export const ok = async (
  ctx: AppContext,
  services: Services,
  command: (metadata: CommandMetadata) => Promise<WriteOutcome>,
): Promise<void> => {
  await runCommand(ctx, services, command);
  sendOk(ctx);
};
