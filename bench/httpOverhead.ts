import { runLoad } from './lib/load.ts';
import { printTable, type Row } from './lib/report.ts';
import { startDms, startProcess } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';

const DURATION_MS = 4000;
const CONCURRENCY = 16;

/**
 * Requests per second of the service against a bare Koa route, both in their own process, loaded
 * from this one: the gap is the price of the middleware chain, token checks, read models and,
 * for writes, the event store commit plus the wait for the projections.
 */
export const runHttpOverhead = async (): Promise<void> => {
  const dir = tempDir();
  const bare = await startProcess('bench/fixtures/bareKoa.ts', [], {}, 'listening');
  // Request logging stays on (info), as in production.
  const dms = await startDms(dir.path);
  try {
    const baseline = await runLoad({ url: bare.url, path: '/', concurrency: CONCURRENCY, durationMs: DURATION_MS });
    const login = await fetch(`${dms.url}/auth/userpass`, {
      headers: { 'X-Svc-Username': 'ddmlab', 'X-Svc-Password': 'secret' },
    });
    const token = login.headers.get('x-svc-auth-token')!;
    const ping = await runLoad({ url: dms.url, path: '/ping', concurrency: CONCURRENCY, durationMs: DURATION_MS });
    const read = await runLoad({
      url: dms.url,
      path: '/accounts/root',
      headers: { 'X-Svc-Auth-Token': token },
      concurrency: CONCURRENCY,
      durationMs: DURATION_MS,
    });
    const write = await runLoad({
      url: dms.url,
      method: 'POST',
      path: (index) => `/accounts/bench${index}`,
      headers: { 'X-Svc-Auth-Token': token },
      body: () => '{"type": "USER", "email": "bench@example.org"}',
      concurrency: CONCURRENCY,
      durationMs: DURATION_MS,
      expectStatus: 201,
    });
    const base = { name: 'bare Koa', value: baseline.perSecond };
    const rows: Row[] = [
      { name: `bare Koa route (p50 ${baseline.p50Ms.toFixed(2)} ms)`, value: baseline.perSecond, unit: 'req/s' },
      { name: `GET /ping (p50 ${ping.p50Ms.toFixed(2)} ms)`, value: ping.perSecond, unit: 'req/s', baseline: base },
      {
        name: `GET /accounts/root, token checked (p50 ${read.p50Ms.toFixed(2)} ms)`,
        value: read.perSecond,
        unit: 'req/s',
        baseline: base,
      },
      {
        name: `POST /accounts/{new}, durable + projected (p50 ${write.p50Ms.toFixed(2)} ms, p99 ${write.p99Ms.toFixed(2)} ms)`,
        value: write.perSecond,
        unit: 'req/s',
        baseline: base,
      },
    ];
    printTable(`HTTP, ${CONCURRENCY} connections, ${DURATION_MS / 1000} s each`, rows);
    const failures = baseline.failures + ping.failures + read.failures + write.failures;
    if (failures > 0) console.log(`  (${failures} requests failed)`);
  } finally {
    await bare.stop();
    await dms.stop();
    dir.dispose();
  }
};
