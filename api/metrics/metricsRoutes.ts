import { isIP } from 'node:net';
import { writeError } from '../errorAnswers.ts';
import type { RouteTable } from '../route.ts';
import type { AppContext, Services } from '../services.ts';

/**
 * `GET /metrics`: this process's metrics in Prometheus's text format, without a token, as
 * Prometheus scrapes. DMS_METRICS says who may read them on the API port: `loopback` (the
 * default: a Prometheus or an agent on this machine), `open`, or `off` (404, as any unknown URL).
 * Behind DMS_TRUST_PROXY the address is the forwarded client's, so a proxy on this machine does
 * not make every client local. DMS_METRICS_PORT serves them on a port of their own instead
 * (api/metrics/metricsServer.ts).
 */
export const registerMetricsRoutes = (routes: RouteTable, services: Services): void => {
  routes.get(
    '/metrics',
    {
      auth: false,
      commonHeaders: false,
      summary:
        "This process's metrics in Prometheus's text format (requests, appends, projection lag, queues, logins, the process).",
      success: {
        status: 200,
        type: 'text/plain; version=0.0.4; charset=utf-8',
        description: 'Prometheus text exposition format 0.0.4.',
      },
    },
    async (ctx) => {
      const policy = services.config.metrics;
      if (policy === 'off') {
        writeError(ctx, 404, 'NotFound', 'The requested URL was not found on the server.');
        return;
      }
      if (policy === 'loopback' && !isLoopback(ctx)) {
        writeError(
          ctx,
          403,
          'AccessDenied',
          'Metrics are served to clients on this machine only (DMS_METRICS=loopback).',
        );
        return;
      }
      await sendMetrics(ctx, services);
    },
  );
};

const sendMetrics = async (ctx: AppContext, services: Services): Promise<void> => {
  const text = await services.metrics.text();
  ctx.status = 200;
  ctx.set('Content-Type', services.metrics.contentType);
  ctx.body = text;
};

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (`::ffff:127.0.0.1`). */
export const isLoopbackAddress = (address: string): boolean => {
  const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  return plain === '::1' || (isIP(plain) === 4 && plain.startsWith('127.'));
};

const isLoopback = (ctx: AppContext): boolean => isLoopbackAddress(ctx.ip);
