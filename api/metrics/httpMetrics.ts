import type { Middleware } from 'koa';
import { Stream } from 'node:stream';
import type { AppState } from '../services.ts';
import type { ServiceMetrics } from './serviceMetrics.ts';

/** The route label of requests no route answered (404, 405, 308, CORS pre-flights). */
export const UNMATCHED_ROUTE = '(none)';

/**
 * Times every request, first in the chain, and counts it by method, route pattern
 * (`/dids/*scope_name/dids`: @koa/router's `routerPath`, so names never become labels) and
 * status. A streamed answer (NDJSON lists) is timed until its last byte left or the client went
 * away, the rest when the middleware chain returns.
 */
export const httpMetrics =
  (metrics: ServiceMetrics): Middleware<AppState> =>
  async (ctx, next) => {
    const started = process.hrtime.bigint();
    const observe = (status: number) => {
      const route = ctx.routerPath ?? UNMATCHED_ROUTE;
      metrics.observeRequest(ctx.method, route, status, Number(process.hrtime.bigint() - started) / 1e9);
    };
    try {
      await next();
    } catch (error) {
      // The error middleware answers every error; one escaping it becomes Koa's 500.
      observe(500);
      throw error;
    }
    if (ctx.body instanceof Stream) ctx.res.once('close', () => observe(ctx.status));
    else observe(ctx.status);
  };
