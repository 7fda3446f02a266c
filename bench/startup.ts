import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { dmsCommand } from './lib/dmsCommand.ts';
import { client, expectStatus, login } from './lib/httpClient.ts';
import { startProcess } from './lib/serverProcess.ts';
import { addRse } from './rules.ts';
import { formatNumber, printColumns } from './lib/report.ts';
import { tempDir } from './lib/tempDir.ts';
import { cpuSeconds } from './lib/wrk.ts';
import { freeLoopbackPort } from '../infra/freePort.ts';

const ROOT = join(import.meta.dirname, '..');

/**
 * `npm run bench startup [-- --runs N --data DIR]`: how long `dms serve` takes to answer its first
 * `GET /ping`, phase by phase, beside a bare Koa route bundled the same way and a bare `node`
 * started in the same run; and the CPU of the command line's quick commands.
 *
 * - **Empty data directory** (N runs, default 5): from the spawn to the first 200 of /ping, the
 *   phases the primary logs (`phasesMs` of its `API listening` line: loading, opening the stores,
 *   the projections caught up, root, the API workers) and the time until the daemons run (its
 *   `started` line: the private redis-server, the daemons), and the CPU of every process of the
 *   server until /ping answered.
 * - **Again on that data** (a restart): the same, with root and the read models already there.
 * - **--files N**: the same against a store of N files registered first (1000-file datasets, a
 *   replica each, as `bench scale` registers them), or **--data DIR** against an existing data
 *   directory (say the one `bench scale` kept with BENCH_KEEP_DIR=1): what a large store costs
 *   the start, per million events.
 * - **The command line**: CPU seconds (user + system, from the shell's `times`) of `bin/dms
 *   --help` and `bin/dms projections status`.
 *
 * Run it on an idle machine for the figures the README gives; on a busy one the wall times grow
 * with the load, the CPU far less.
 */
export const runStartupBenchmark = async (): Promise<void> => {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { runs: { type: 'string' }, data: { type: 'string' }, files: { type: 'string' } },
    strict: false,
  });
  const runs = Number(typeof values.runs === 'string' ? values.runs : (process.env.BENCH_STARTUP_RUNS ?? '5'));
  const dms = dmsCommand();
  if (!dms.args.some((arg) => arg.endsWith(join('dist', 'dms.js'))))
    console.log('  (dist/ is missing or stale: the figures are those of the sources through tsx; run npm run build)');

  const bareNode = await median(runs, () => firstAnswer(process.execPath, ['-e', bareNodeServer], {}));
  const koaBundle = await bundledBareKoa();
  const bareKoa = await median(runs, () => firstAnswer(process.execPath, [koaBundle.file], { BARE_KOA_PORT: '' }));
  koaBundle.dispose();

  const empty: Start[] = [];
  const again: Start[] = [];
  for (let run = 0; run < runs; run += 1) {
    const dir = tempDir();
    try {
      empty.push(await startDms(dms, dir.path));
      again.push(await startDms(dms, dir.path));
    } finally {
      dir.dispose();
    }
  }
  const rows: string[][] = [['', 'first /ping', 'daemons running', 'CPU to /ping', 'phases (ms, median)']];
  rows.push(['bare node http server', ms(bareNode.firstAnswerMs), '', `${bareNode.cpuSeconds.toFixed(2)} s`, '']);
  rows.push(['bare Koa route (bundled)', ms(bareKoa.firstAnswerMs), '', `${bareKoa.cpuSeconds.toFixed(2)} s`, '']);
  rows.push(startRow('dms serve, empty data directory', empty));
  rows.push(startRow('dms serve, again on that data', again));
  const files = typeof values.files === 'string' ? Number(values.files.replaceAll('_', '')) : 0;
  const filled = files > 0 ? await storeOf(files) : undefined;
  const largeDir = typeof values.data === 'string' ? values.data : filled?.path;
  if (largeDir !== undefined) {
    const large: Start[] = [];
    for (let run = 0; run < Math.min(runs, 3); run += 1) large.push(await startDms(dms, largeDir));
    const events = large[0]!.events;
    rows.push(startRow(`dms serve, a store of ${events.toLocaleString('en-US')} events`, large));
    const extraMs =
      medianOf(large.map((start) => start.firstAnswerMs)) - medianOf(again.map((start) => start.firstAnswerMs));
    const extraCpu =
      medianOf(large.map((start) => start.cpuSeconds)) - medianOf(again.map((start) => start.cpuSeconds));
    const perMillion = 1e6 / Math.max(1, events);
    const signed = (value: number, text: string) => `${value >= 0 ? '+' : ''}${text}`;
    // CPU is the figure to read on a shared machine: the wall time moves with the load.
    console.log(
      `  ${events.toLocaleString('en-US')} events against the small store: first /ping ${signed(extraMs, ms(extraMs))} wall, ${signed(extraCpu, extraCpu.toFixed(2))} s CPU; per million events ${ms(extraMs * perMillion)}, ${(extraCpu * perMillion).toFixed(2)} s CPU`,
    );
  }
  // BENCH_KEEP_DIR=1 keeps the filled store for another run (--data DIR).
  if (filled && process.env.BENCH_KEEP_DIR) console.log(`  (kept ${filled.path})`);
  else filled?.dispose();
  printColumns(`Start-up, median of ${runs} runs (wall time from the spawn; CPU of every process of the server)`, rows);

  const cliDir = tempDir();
  try {
    await startDms(dms, cliDir.path);
    const environment = { DMS_DATA_DIR: cliDir.path, DMS_LOG_LEVEL: 'warn' };
    printColumns('The command line: CPU seconds (user + system), median of the runs', [
      ['bare node', `${medianOf(repeat(runs, () => cpuOf(process.execPath, ['-e', '0'], {}))).toFixed(2)} s`],
      ['bin/dms --help', `${medianOf(repeat(runs, () => cpuOf('sh', ['bin/dms', '--help'], {}))).toFixed(2)} s`],
      [
        'bin/dms projections status',
        `${medianOf(repeat(runs, () => cpuOf('sh', ['bin/dms', 'projections', 'status'], environment))).toFixed(2)} s`,
      ],
    ]);
  } finally {
    cliDir.dispose();
  }
};

type Answered = Readonly<{ firstAnswerMs: number; cpuSeconds: number }>;
type Start = Answered & Readonly<{ daemonsMs: number; phases: Readonly<Record<string, number>>; events: number }>;

const ms = (value: number): string => `${formatNumber(value)} ms`;

const medianOf = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const repeat = <T>(times: number, work: () => T): T[] => Array.from({ length: times }, work);

const median = async (runs: number, measure: () => Promise<Answered>): Promise<Answered> => {
  const measured: Answered[] = [];
  for (let run = 0; run < runs; run += 1) measured.push(await measure());
  return {
    firstAnswerMs: medianOf(measured.map((one) => one.firstAnswerMs)),
    cpuSeconds: medianOf(measured.map((one) => one.cpuSeconds)),
  };
};

const startRow = (name: string, starts: readonly Start[]): string[] => {
  const phaseNames = [...new Set(starts.flatMap((start) => Object.keys(start.phases)))].filter(
    (phase) => phase !== 'total',
  );
  const phases = phaseNames
    .map((phase) => `${phase} ${formatNumber(medianOf(starts.map((start) => start.phases[phase] ?? 0)))}`)
    .join(', ');
  return [
    name,
    ms(medianOf(starts.map((start) => start.firstAnswerMs))),
    ms(medianOf(starts.map((start) => start.daemonsMs))),
    `${medianOf(starts.map((start) => start.cpuSeconds)).toFixed(2)} s`,
    phases,
  ];
};

/** A plain node:http server answering 200: the least a Node process can do before its first answer. */
const bareNodeServer = `require('node:http').createServer((q, s) => s.end('{}')).listen(Number(process.env.PORT), '127.0.0.1')`;

/** bench/fixtures/bareKoa.ts bundled as bin/build.mjs bundles dms, so both load the same way. */
const bundledBareKoa = async (): Promise<{ file: string; dispose(): void }> => {
  const dir = tempDir();
  const file = join(dir.path, 'bareKoa.mjs');
  await build({
    absWorkingDir: ROOT,
    entryPoints: ['bench/fixtures/bareKoa.ts'],
    outfile: file,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  return { file, dispose: dir.dispose };
};

/** GET `path` once: the status, or 0 when nothing answers yet. */
const get = (port: number, path: string): Promise<number> =>
  new Promise((resolve) => {
    const call = request({ host: '127.0.0.1', port, path, timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    call.once('error', () => resolve(0));
    call.once('timeout', () => call.destroy());
    call.end();
  });

/** Starts `command` with PORT set and polls GET /ping every 5 ms until it answers 200. */
const firstAnswer = async (
  command: string,
  args: readonly string[],
  environment: NodeJS.ProcessEnv,
  onLine: (line: string) => void = () => undefined,
): Promise<Answered & { child: ChildProcess; port: number }> => {
  const port = await freeLoopbackPort();
  const started = performance.now();
  const child = spawn(command, [...args], {
    cwd: ROOT,
    env: { ...process.env, ...environment, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const end = buffer.lastIndexOf('\n');
    for (const line of buffer.slice(0, end + 1).split('\n')) if (line) onLine(line);
    buffer = buffer.slice(end + 1);
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code} before answering`))),
  );
  exited.catch(() => undefined);
  for (;;) {
    const status = await Promise.race([get(port, '/ping'), exited]);
    if (status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const firstAnswerMs = performance.now() - started;
  const cpu = cpuSeconds(child.pid!);
  if (command !== process.execPath || !args.some((arg) => arg.includes('dms.js') || arg.includes('dms.ts')))
    await stop(child);
  return { firstAnswerMs, cpuSeconds: cpu, child, port };
};

const stop = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

/** One `dms serve` on `dataDir`: until /ping answers, then until its daemons run; stopped after. */
const startDms = async (
  dms: Readonly<{ command: string; args: readonly string[] }>,
  dataDir: string,
): Promise<Start> => {
  mkdirSync(dataDir, { recursive: true });
  let listening: Record<string, unknown> | undefined;
  let daemonsAt: number | undefined;
  let started = 0;
  const answered = await firstAnswer(
    dms.command,
    [...dms.args, 'serve'],
    { DMS_DATA_DIR: dataDir, DMS_LOG_FORMAT: 'json', DMS_LOG_LEVEL: 'info', DMS_QUEUE_PREFIX: `startup${process.pid}` },
    (line) => {
      if (started === 0) started = performance.now();
      try {
        const entry: unknown = JSON.parse(line);
        if (typeof entry !== 'object' || entry === null) return;
        const message = 'msg' in entry ? entry.msg : undefined;
        if (message === 'API listening') listening = { ...entry };
        if (message === 'daemon roles running') daemonsAt = performance.now();
      } catch {
        // Not a log line.
      }
    },
  );
  const spawnedAt = performance.now() - answered.firstAnswerMs;
  while (daemonsAt === undefined || listening === undefined) {
    if (answered.child.exitCode !== null) throw new Error('dms serve exited before its daemons ran');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const phases = listening.phasesMs;
  const events = await headPosition(answered.port);
  await stop(answered.child);
  return {
    firstAnswerMs: answered.firstAnswerMs,
    cpuSeconds: answered.cpuSeconds,
    daemonsMs: daemonsAt - spawnedAt,
    phases: isNumberRecord(phases) ? phases : {},
    events,
  };
};

const isNumberRecord = (value: unknown): value is Record<string, number> =>
  typeof value === 'object' && value !== null && Object.values(value).every((one) => typeof one === 'number');

/** The event log's head, from the metrics the server serves to loopback (0 when not found). */
const headPosition = async (port: number): Promise<number> =>
  new Promise((resolve) => {
    const call = request({ host: '127.0.0.1', port, path: '/metrics', timeout: 5000 }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => {
        const match = /^dms_event_store_head_position\S* (\d+)/m.exec(text);
        resolve(match ? Number(match[1]) : 0);
      });
    });
    call.once('error', () => resolve(0));
    call.end();
  });

/** CPU seconds (user + system) of `command` run to its end, from the shell's `times`. */
const cpuOf = (command: string, args: readonly string[], environment: NodeJS.ProcessEnv): number => {
  const quoted = [command, ...args].map((part) => `'${part.replaceAll("'", "'\\''")}'`).join(' ');
  const result = spawnSync('sh', ['-c', `${quoted} >/dev/null 2>&1; times`], {
    cwd: ROOT,
    env: { ...process.env, ...environment },
    encoding: 'utf8',
  });
  // `times` prints the shell's own times, then its children's: "0m0.101s 0m0.020s".
  const children = result.stdout.trim().split('\n').at(-1) ?? '';
  const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((match) => Number(match[1]) * 60 + Number(match[2]));
  return seconds.reduce((sum, value) => sum + value, 0);
};

/** A data directory holding `files` files with a replica each, registered through the API of a `dms serve`. */
const storeOf = async (files: number): Promise<{ path: string; dispose(): void }> => {
  const dir = tempDir();
  const began = performance.now();
  const server = await startProcess(
    'bin/dms.ts',
    ['serve', '--roles', 'kronos'],
    { DMS_DATA_DIR: dir.path, PORT: '0', DMS_LOG_LEVEL: 'info', DMS_LOG_FORMAT: 'json' },
    'API listening',
  );
  try {
    const call = client(server, await login(server), 5);
    expectStatus(await call('POST', '/scopes/root/bench'), 201, 'scope');
    await addRse(call, 'STARTUP_SOURCE');
    const datasets = Math.ceil(files / 1000);
    const names = Array.from({ length: datasets }, (_, index) => `ds.${index}`);
    for (let start = 0; start < names.length; start += 1000)
      expectStatus(
        await call(
          'POST',
          '/dids',
          names.slice(start, start + 1000).map((name) => ({ scope: 'bench', name, type: 'DATASET' })),
        ),
        201,
        'datasets',
      );
    let next = 0;
    const worker = async () => {
      for (let index = next++; index < datasets; index = next++) {
        const count = Math.min(1000, files - index * 1000);
        const dids = Array.from({ length: count }, (_, offset) => ({
          scope: 'bench',
          name: `f.${index}.${offset}`,
          bytes: 1_000_000,
          adler32: '0cc737eb',
        }));
        expectStatus(
          await call('POST', `/dids/bench/${names[index]!}/dids`, { rse: 'STARTUP_SOURCE', dids }),
          201,
          'attach',
        );
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
  } finally {
    await server.stop();
  }
  console.log(
    `  (registered ${files.toLocaleString('en-US')} files in ${formatNumber((performance.now() - began) / 1000)} s)`,
  );
  return dir;
};
