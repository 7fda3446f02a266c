import { startPrivateRedisServer } from '../infra/queue/redisServer.ts';
import { login } from './lib/httpClient.ts';
import { runLoad, type LoadResult } from './lib/load.ts';
import { printTable, type Row } from './lib/report.ts';
import { startDms, startProcess, type ServerProcess } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4000);
/** Connections of the rate measurement; the latency one uses a single connection. */
const CONCURRENCY = 16;

type Setup = Readonly<{ name: string; start(dataDir: string): Promise<{ api: ServerProcess; stop(): Promise<void> }> }>;

/**
 * A write's answer time when the projections run in another process (`dms api` + `dms projector`)
 * beside `dms serve` (projections on a thread of the same process), in the same run: the gap is
 * what read your writes costs across processes. Each setup gets a fresh data directory; the split
 * one runs once with the shared Redis the scaled-out setup has (REDIS_URL) and once without.
 */
export const runMultiProcessBenchmark = async (): Promise<void> => {
  const redis = await startPrivateRedisServer();
  const split = (name: string, environment: NodeJS.ProcessEnv): Setup => ({
    name,
    start: async (dataDir) => {
      const shared = { DMS_DATA_DIR: dataDir, DMS_LOG_LEVEL: 'info', ...environment };
      const projector = await startProcess('bin/dms.ts', ['projector'], shared, 'projections running');
      const api = await startProcess('bin/dms.ts', ['api'], { ...shared, PORT: '0' }, 'API listening');
      return {
        api,
        stop: async () => {
          await api.stop();
          await projector.stop();
        },
      };
    },
  });
  const setups: Setup[] = [
    {
      name: '`dms serve`',
      start: async (dataDir) => {
        const api = await startDms(dataDir);
        return { api, stop: () => api.stop() };
      },
    },
    split('`dms api` + `dms projector`, REDIS_URL set', { REDIS_URL: redis.url, DMS_QUEUE_PREFIX: 'bench' }),
    split('`dms api` + `dms projector`, no Redis', {}),
  ];
  const rows: Row[] = [];
  let baselines: Record<'one' | 'many', { name: string; value: number }> | undefined;
  try {
    for (const setup of setups) {
      const dir = tempDir();
      const { api, stop } = await setup.start(dir.path);
      try {
        const token = await login(api);
        const write = (concurrency: number, prefix: string): Promise<LoadResult> =>
          runLoad({
            url: api.url,
            method: 'POST',
            path: (index) => `/accounts/${prefix}${index}`,
            headers: { 'X-Svc-Auth-Token': token },
            body: () => '{"type": "USER", "email": "bench@example.org"}',
            concurrency,
            durationMs: DURATION_MS,
            expectStatus: 201,
          });
        const one = await write(1, 'one');
        const many = await write(CONCURRENCY, 'many');
        const failures = one.failures + many.failures;
        if (failures > 0) throw new Error(`${setup.name}: ${failures} writes failed`);
        baselines ??= {
          one: { name: 'dms serve', value: one.perSecond },
          many: { name: 'dms serve', value: many.perSecond },
        };
        rows.push({
          name: `${setup.name}, 1 connection: p50 ${one.p50Ms.toFixed(1)} ms, p99 ${one.p99Ms.toFixed(1)} ms`,
          value: one.perSecond,
          unit: 'req/s',
          baseline: baselines.one,
        });
        rows.push({
          name: `${setup.name}, ${CONCURRENCY} connections: p50 ${many.p50Ms.toFixed(1)} ms, p99 ${many.p99Ms.toFixed(1)} ms`,
          value: many.perSecond,
          unit: 'req/s',
          baseline: baselines.many,
        });
      } finally {
        await stop();
        dir.dispose();
      }
    }
  } finally {
    await redis.stop();
  }
  printTable(`POST /accounts/{new}, durable and projected before the answer, ${DURATION_MS / 1000} s each`, rows);
};
