import { availableParallelism } from 'node:os';
import { client, expectStatus, login } from './lib/httpClient.ts';
import { runLoad } from './lib/load.ts';
import { printTable, type Row } from './lib/report.ts';
import { startDms, startProcess, type ServerProcess } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';
import { cpuSeconds, runWrk, wrkAvailable, type WrkResult } from './lib/wrk.ts';

const DURATION_SECONDS = Number(process.env.BENCH_DURATION_MS ?? 5000) / 1000;
/** The figures are at 32 connections. */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

export type Load = Readonly<{
  path: string;
  headers?: Record<string, string>;
  /** POST a new name per request under `path`, with this body. */
  postUnique?: { body: string; prefix: string };
}>;

export type Measured = WrkResult & Readonly<{ cpuUsPerRequest: number }>;

export type HttpLoader = Readonly<{
  /** What loads the servers: 'wrk', or 'house client' where wrk cannot be had. */
  tool: string;
  /** Loads `server` with `load` for `durationSeconds` at CONNECTIONS connections; with the server's CPU per request. */
  measure(server: ServerProcess, load: Load, durationSeconds?: number): Promise<Measured>;
}>;

/** wrk when it can be had (installed when missing, as root), else the house client. */
export const httpLoader = (): HttpLoader => {
  const useWrk = wrkAvailable();
  if (!useWrk) console.log('  (wrk is not available: loading with the house client, a Node process)');
  return {
    tool: useWrk ? 'wrk' : 'house client',
    measure: async (server, load, durationSeconds = DURATION_SECONDS) => {
      const before = cpuSeconds(server.pid);
      const result = useWrk
        ? await runWrk({ url: server.url, connections: CONNECTIONS, durationSeconds, ...load })
        : await houseClient(server.url, load, durationSeconds);
      const cpu = cpuSeconds(server.pid) - before;
      return { ...result, cpuUsPerRequest: (cpu * 1e6) / Math.max(1, result.requests) };
    },
  };
};

/**
 * Requests per second of the service against a bare Koa route run the same way (one process,
 * then node:cluster over every core), loaded by wrk at 32 connections (the house client, a Node
 * process, where wrk cannot be had): the gap is the price of the middleware chain, token checks,
 * read models and, for writes, the durable commit plus the wait for the projections. Each figure
 * also gives the servers' CPU per request (every process of the server, from /proc), which moves
 * far less than the rate on a machine shared with other work.
 */
export const runHttpOverhead = async (): Promise<void> => {
  const loader = httpLoader();
  const measure = (server: ServerProcess, load: Load) => loader.measure(server, load);
  const cores = availableParallelism();
  for (const workers of cores > 1 ? [1, cores] : [1]) {
    const dir = tempDir();
    const bare = await startProcess(
      'bench/fixtures/bareKoa.ts',
      [],
      { BARE_KOA_WORKERS: String(workers) },
      'listening',
    );
    // Request logging stays on (info), as in production.
    const dms = await startDms(dir.path, { DMS_API_WORKERS: String(workers) });
    try {
      const token = await login(dms);
      const call = client(dms, token);
      expectStatus(await call('POST', '/scopes/root/bench'), 201, 'add scope');
      expectStatus(await call('POST', '/dids/bench/dataset1', { type: 'DATASET' }), 201, 'add dataset');
      const auth = { 'X-Svc-Auth-Token': token };
      const baseline = await measure(bare, { path: '/' });
      const ping = await measure(dms, { path: '/ping' });
      const did = await measure(dms, { path: '/dids/bench/dataset1', headers: auth });
      const account = await measure(dms, { path: '/accounts/root', headers: auth });
      const commitsBefore = await commitCounters(dms.url);
      const write = await measure(dms, {
        path: '/accounts/',
        headers: auth,
        postUnique: { body: '{"type": "USER", "email": "bench@example.org"}', prefix: `w${workers}t` },
      });
      const commitsAfter = await commitCounters(dms.url);
      const base = { name: 'bare Koa', value: baseline.perSecond };
      const row = (name: string, measured: Measured): Row => ({
        name: `${name} (p50 ${measured.p50Ms.toFixed(2)} ms, p99 ${measured.p99Ms.toFixed(1)} ms, ${Math.round(measured.cpuUsPerRequest)} µs CPU/req)`,
        value: measured.perSecond,
        unit: 'req/s',
        ...(measured === baseline ? {} : { baseline: base }),
      });
      const setup = workers === 1 ? 'one process' : `${workers} API workers (node:cluster), bare Koa the same`;
      // The aims are for every core: GET /ping at 80 % of bare Koa, GET /dids at 28 000 req/s,
      // one-event writes at 50 % of bare Koa.
      const aim = (text: string) => (workers === cores ? `, aim ${text}` : '');
      printTable(`HTTP, ${setup}, ${CONNECTIONS} connections, ${DURATION_SECONDS} s each (${loader.tool})`, [
        row('bare Koa route', baseline),
        row(`GET /ping${aim('≥ 80 % of bare Koa')}`, ping),
        row(`GET /dids/{scope}/{name}, token checked${aim('≥ 28 000 req/s')}`, did),
        row('GET /accounts/root, token and access checked', account),
        row(`POST /accounts/{new}, durable + projected${aim('≥ 50 % of bare Koa')}`, write),
      ]);
      const commits = commitsAfter.commits - commitsBefore.commits;
      const appends = commitsAfter.appends - commitsBefore.appends;
      const seconds = commitsAfter.seconds - commitsBefore.seconds;
      if (commits > 0) {
        const msPerCommit = (seconds * 1000) / commits;
        // Each connection has one write in flight: a commit can hold at most one per connection.
        console.log(
          `  POST: ${commits} group commits, ${(appends / commits).toFixed(1)} appends each, ${msPerCommit.toFixed(2)} ms each (fsync included): at most ${Math.round((CONNECTIONS * 1000) / msPerCommit).toLocaleString('en-US')} req/s at ${CONNECTIONS} connections`,
        );
      }
      const failures = [baseline, ping, did, account, write].reduce((sum, measured) => sum + measured.failures, 0);
      if (failures > 0) console.log(`  (${failures} requests failed or answered otherwise)`);
    } finally {
      await bare.stop();
      await dms.stop();
      dir.dispose();
    }
  }
};

const houseClient = async (url: string, load: Load, durationSeconds: number): Promise<WrkResult> => {
  const result = await runLoad({
    url,
    concurrency: Math.min(CONNECTIONS, 16),
    durationMs: durationSeconds * 1000,
    ...(load.headers ? { headers: load.headers } : {}),
    ...(load.postUnique
      ? {
          method: 'POST',
          path: (index: number) => `${load.path}${load.postUnique!.prefix}${index}`,
          body: () => load.postUnique!.body,
          expectStatus: 201,
        }
      : { path: load.path }),
  });
  return result;
};

/** The event log's commit counters from the server's /metrics (served without a token on loopback). */
const commitCounters = async (url: string): Promise<{ commits: number; appends: number; seconds: number }> => {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counter = (name: string): number => Number(new RegExp(`^${name} ([\\d.e+]+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    commits: counter('dms_event_log_commits_total'),
    appends: counter('dms_event_log_committed_appends_total'),
    seconds: counter('dms_event_log_commit_seconds_total'),
  };
};
