import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { CommandMetadata } from '../domain/shared/event.ts';
import { authenticate } from './auth/authenticate.ts';
import { requireAccept } from './http.ts';
import type { AppContext, AppState, Services } from './services.ts';

export type Handler = (ctx: AppContext) => Promise<void> | void;

export type RouteOptions = Readonly<{
  /** Needs X-Svc-Auth-Token; default true. */
  auth?: boolean;
  /** Content types the answer can take; an Accept header allowing none of them gets 406. */
  accept?: readonly string[];
  /** Statuses this route gives exception classes instead of the defaults of errorStatus.ts. */
  errors?: Readonly<Record<string, number>>;
  /** Adds Rucio's CORS and no-cache headers (every blueprint but auth and redirect); default true. */
  commonHeaders?: boolean;
}>;

type Method = 'get' | 'post' | 'put' | 'delete';

/**
 * Registers routes on the one router. Registration order is priority (the first matching route
 * answers), so each routes module lists its paths the way Werkzeug would rank them: static
 * segments before variables, a `*path` followed by a suffix before a bare `*path`.
 */
export class RouteTable {
  constructor(
    readonly router: Router<AppState>,
    private readonly services: Services,
  ) {}

  get(path: string, options: RouteOptions, handler: Handler): this {
    return this.add('get', path, options, handler);
  }
  post(path: string, options: RouteOptions, handler: Handler): this {
    return this.add('post', path, options, handler);
  }
  put(path: string, options: RouteOptions, handler: Handler): this {
    return this.add('put', path, options, handler);
  }
  delete(path: string, options: RouteOptions, handler: Handler): this {
    return this.add('delete', path, options, handler);
  }

  private add(method: Method, path: string, options: RouteOptions, handler: Handler): this {
    const chain: Middleware<AppState>[] = [
      async (ctx, next) => {
        if (options.errors) ctx.state.errorStatus = options.errors;
        if (options.commonHeaders ?? true) setCommonHeaders(ctx as unknown as AppContext);
        await next();
      },
    ];
    if (options.auth ?? true) chain.push(authenticate(this.services));
    chain.push(async (ctx) => {
      if (options.accept) requireAccept(ctx as unknown as AppContext, options.accept);
      await handler(ctx as unknown as AppContext);
    });
    (this.router[method] as (path: string, ...middleware: Middleware<AppState>[]) => unknown).call(this.router, path, ...chain);
    return this;
  }
}

/** Rucio's after_request hook: CORS echo (the literal `None` without an Origin) and no-cache on GET. */
const setCommonHeaders = (ctx: AppContext): void => {
  ctx.set('Access-Control-Allow-Origin', ctx.get('Origin') || 'None');
  ctx.set('Access-Control-Allow-Headers', ctx.get('Access-Control-Request-Headers') || 'None');
  ctx.set('Access-Control-Allow-Methods', '*');
  ctx.set('Access-Control-Allow-Credentials', 'true');
  if (ctx.method === 'GET') {
    ctx.set('Cache-Control', 'post-check=0, pre-check=0');
    ctx.set('Pragma', 'no-cache');
  }
};

/** The metadata of a command issued by this request: now, the caller, the request id. */
export const commandMetadata = (ctx: AppContext): CommandMetadata => ({
  now: new Date(),
  account: ctx.state.issuer ?? 'anonymous',
  requestId: ctx.state.requestId,
});

/**
 * Read your writes: answer only once every read model has applied the write's last event, or
 * after the configured bound (the write is durable either way; the delay is logged).
 */
export const afterWrite = async (ctx: AppContext, services: Services, position: bigint | undefined): Promise<void> => {
  if (position === undefined) return;
  const caughtUp = await services.progress.waitFor(position, services.config.readYourWritesTimeoutMs);
  if (!caughtUp) ctx.state.logger.warn({ position: position.toString() }, 'read models lag behind a write');
};
