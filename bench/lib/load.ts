import { Agent, request } from 'node:http';

export type LoadResult = Readonly<{
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
}>;

export type LoadOptions = Readonly<{
  url: string;
  method?: string;
  /** Path of each request; a function gets a running counter (for unique names). */
  path: string | ((index: number) => string);
  headers?: Record<string, string>;
  body?: (index: number) => string | undefined;
  concurrency: number;
  durationMs: number;
  /** Status counted as success; default 200. */
  expectStatus?: number;
}>;

/** Keeps `concurrency` keep-alive requests in flight for `durationMs` and measures them. */
export const runLoad = async (options: LoadOptions): Promise<LoadResult> => {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies: number[] = [];
  let failures = 0;
  let counter = 0;
  const deadline = Date.now() + options.durationMs;
  const started = process.hrtime.bigint();
  const one = (index: number) =>
    new Promise<void>((resolve) => {
      const path = typeof options.path === 'string' ? options.path : options.path(index);
      const body = options.body?.(index);
      const begin = process.hrtime.bigint();
      const req = request(
        new URL(path, options.url),
        {
          method: options.method ?? 'GET',
          agent,
          headers: {
            ...(options.headers ?? {}),
            ...(body ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(Number(process.hrtime.bigint() - begin) / 1e6);
            if (res.statusCode !== (options.expectStatus ?? 200)) failures += 1;
            resolve();
          });
        },
      );
      req.on('error', () => {
        failures += 1;
        resolve();
      });
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (Date.now() < deadline) await one(counter++);
    }),
  );
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const percentile = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? Number.NaN;
  return {
    requests: latencies.length,
    perSecond: (latencies.length * 1000) / elapsedMs,
    p50Ms: percentile(0.5),
    p99Ms: percentile(0.99),
    failures,
  };
};
