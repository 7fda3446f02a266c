import { createServer, type Server } from 'node:http';
import type { Logger } from '../../infra/logger.ts';
import type { ServiceMetrics } from './serviceMetrics.ts';

export type MetricsServer = Readonly<{ url: string; stop(): Promise<void> }>;

/**
 * DMS_METRICS_PORT: a listener of its own that answers `GET /metrics` (and nothing else) to
 * anyone who reaches it, for every kind of process: `dms projector` and `dms worker` have no API
 * port, and an internal port keeps the API's clients away from the metrics.
 */
export const startMetricsServer = async (
  metrics: ServiceMetrics,
  options: Readonly<{ port: number; host: string; logger: Logger }>,
): Promise<MetricsServer> => {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response
        .writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end('Only GET /metrics is served here.\n');
      return;
    }
    metrics.text().then(
      (text) => {
        response.writeHead(200, { 'Content-Type': metrics.contentType, 'Content-Length': Buffer.byteLength(text) });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        options.logger.warn({ err: error }, 'could not collect the metrics');
        response
          .writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
          .end('The metrics could not be collected.\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The metrics server listens on no TCP port');
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  options.logger.info({ url: `${url}/metrics` }, 'metrics listening');
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
