import Database from 'better-sqlite3';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SqliteEventStore } from '../infra/eventstore/sqliteEventStore.ts';
import { client, expectStatus, login } from './lib/httpClient.ts';
import { streamLines, type StreamFigures } from './lib/ndjson.ts';
import { perSecond, printTable, timed, type Row } from './lib/report.ts';
import { rebuildEveryProjection, type RebuildOverHttp } from './lib/rebuildOverHttp.ts';
import { startDms, startProcess, type ServerProcess } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';
import { cpuSeconds } from './lib/wrk.ts';
import { addRse, ruleOn, waitForRule } from './rules.ts';
import { dmsCommand } from './lib/dmsCommand.ts';

/**
 * `npm run bench scale [-- --files N]`: how the figures move as the catalogue grows. N files
 * (default 1 000 000; BENCH_SCALE_FILES also sets it) are registered through the API of `dms
 * serve` in ten equal tenths. Each tenth is 1000-file datasets (attach with RSE, 1000 files per
 * call, 4 calls in flight), a rule on one dataset in ten (1000 locks each, made in the POST), and
 * a 10 000-file "probe" dataset. After each tenth the bench measures, against what is there by then:
 *
 * - the registration rate of that tenth, beside raw SQLite inserting as many rows into a table
 *   that grows as the catalogue does (one row per file, keyed by name, indexed by dataset);
 * - `POST /replicas/list` of the probe dataset: rows/s and first byte (median of three), beside
 *   raw SQLite selecting the probe's rows from that table;
 * - a rule on the probe dataset to an empty RSE, through the injector: from the POST until
 *   `GET /rules/{id}` shows its 10 000 locks replicating;
 * - the RSS of the server's processes;
 * - then with the server stopped: bytes on disk per file (pages in use, free pages excluded),
 *   the time of `dms audit verify`; then, in a `dms serve` of its own, the time to rebuild every projection through `POST /admin/projections/{name}/rebuild` (the projector threads, group by group).
 *
 * The server is restarted for each tenth, so its caches start cold as after any restart; the
 * judge runs, the conveyor does not, so the probe rules' requests stay queued.
 */

const SCOPE = 'bench';
const SOURCE = 'SCALE_SOURCE';
const COPY = 'SCALE_COPY';
const PROBE_TARGET = 'SCALE_PROBE';
const FILES_PER_CALL = 1000;
const CONCURRENCY = 4;
const RULE_EVERY = 10;
const JUDGE_ROLES = 'judge-injector,judge-evaluator,judge-repairer,judge-cleaner';

const filesWanted = (): number => {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { files: { type: 'string' } }, strict: false });
  const given = typeof values.files === 'string' ? values.files : (process.env.BENCH_SCALE_FILES ?? '1000000');
  const files = Number(given.replaceAll('_', ''));
  if (!Number.isInteger(files) || files < 10_000 || files % 10_000 !== 0)
    throw new Error(`--files ${given}: give a multiple of 10 000 (each tenth a whole number of 1000-file calls)`);
  return files;
};

type Tenth = Readonly<{
  files: number;
  events: number;
  registerFilesPerSecond: number;
  rawInsertRowsPerSecond: number;
  datasetRuleLocksPerSecond: number;
  list: StreamFigures;
  rawSelectRowsPerSecond: number;
  probeRuleMs: number;
  /** CPU seconds of the server's processes (API workers and private redis included) per file registered, and per probe lock. */
  registerCpuUsPerFile: number;
  probeRuleCpuUsPerLock: number;
  listCpuUsPerRow: number;
  rssMiB: number;
  anonymousRssMiB: number;
  eventBytesPerFile: number;
  readModelBytesPerFile: number;
  rawBytesPerFile: number;
  rebuildMs: number;
  /** Events the rebuild replayed while timed (from where the furthest-behind projection stood when all had started). */
  rebuildEvents: number;
  auditMs: number;
  auditOwnSeconds: number;
  rebuildCpuUsPerEvent: number;
  auditCpuUsPerEvent: number;
}>;

/** The figures measured while the server runs. */
type Served = Pick<
  Tenth,
  | 'files'
  | 'registerFilesPerSecond'
  | 'datasetRuleLocksPerSecond'
  | 'list'
  | 'probeRuleMs'
  | 'registerCpuUsPerFile'
  | 'probeRuleCpuUsPerLock'
  | 'listCpuUsPerRow'
  | 'rssMiB'
  | 'anonymousRssMiB'
>;

/** RSS of the server and its Node children (the API workers; not its private redis-server), in MiB. */
const treeRss = (pid: number, field: 'VmRSS' | 'RssAnon'): number => {
  let pids = [pid];
  try {
    const children = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(pid)], { encoding: 'utf8' });
    pids = pids.concat(
      children
        .split('\n')
        .map((line) => line.trim().split(/\s+/))
        .filter(([, command]) => command === 'node')
        .map(([child]) => Number(child)),
    );
  } catch {
    // ps exits with 1 when there are none.
  }
  return pids.reduce((sum, one) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${one}/status`, 'utf8'));
    return sum + (match ? Number(match[1]) / 1024 : 0);
  }, 0);
};

/** Bytes of the pages an SQLite file uses (free pages left by dropped generations excluded), WAL included. */
const usedBytes = (path: string): number => {
  const db = new Database(path, { readonly: true });
  try {
    const pages =
      Number(db.pragma('page_count', { simple: true })) - Number(db.pragma('freelist_count', { simple: true }));
    const wal = existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0;
    return pages * Number(db.pragma('page_size', { simple: true })) + wal;
  } finally {
    db.close();
  }
};

/**
 * The baseline: raw SQLite with the service's file settings, one row per file in a table keyed by
 * name and indexed by dataset, grown a tenth at a time, 1000 rows per commit.
 */
const rawCatalogue = (path: string) => {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(
    'CREATE TABLE files (scope TEXT NOT NULL, name TEXT NOT NULL, dataset TEXT NOT NULL, rse TEXT NOT NULL, bytes INTEGER NOT NULL, adler32 TEXT NOT NULL, PRIMARY KEY (scope, name)) WITHOUT ROWID;' +
      'CREATE INDEX files_by_dataset ON files (scope, dataset);',
  );
  const insert = db.prepare('INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)');
  const select = db.prepare<[string, string], { name: string; rse: string; bytes: number }>(
    'SELECT name, rse, bytes, adler32 FROM files WHERE scope = ? AND dataset = ?',
  );
  return {
    insertRate: (calls: readonly Call1000[]): number => {
      const ms = Number(
        (() => {
          const start = process.hrtime.bigint();
          for (const one of calls)
            db.transaction(() => {
              for (let offset = 0; offset < one.count; offset += 1)
                insert.run(
                  SCOPE,
                  `${one.prefix}.${one.start + offset}`,
                  one.dataset,
                  SOURCE,
                  1_000_000 + offset,
                  '0cc737eb',
                );
            }).immediate();
          return process.hrtime.bigint() - start;
        })(),
      );
      return perSecond(
        calls.reduce((sum, one) => sum + one.count, 0),
        ms / 1e6,
      );
    },
    selectRate: (dataset: string, expected: number): number => {
      const start = process.hrtime.bigint();
      const rows = select.all(SCOPE, dataset).length;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (rows !== expected) throw new Error(`raw select of ${dataset}: ${rows} rows, expected ${expected}`);
      return perSecond(rows, ms);
    },
    bytes: () => usedBytes(path),
    close: () => db.close(),
  };
};

/** One attach call: `count` files named `${prefix}.${start + i}` into `dataset`. */
type Call1000 = Readonly<{ dataset: string; prefix: string; start: number; count: number }>;

/** The calls of tenth `index`: its 1000-file datasets, then its probe dataset, 1000 files per call. */
const plan = (index: number, tenth: number, probeFiles: number) => {
  const datasets: string[] = [];
  const calls: Call1000[] = [];
  for (let start = 0; start < tenth - probeFiles; start += FILES_PER_CALL) {
    const dataset = `t${index}.d${start / FILES_PER_CALL}`;
    datasets.push(dataset);
    calls.push({ dataset, prefix: dataset, start: 0, count: FILES_PER_CALL });
  }
  const probe = `t${index}.probe`;
  for (let start = 0; start < probeFiles; start += FILES_PER_CALL)
    calls.push({ dataset: probe, prefix: probe, start, count: FILES_PER_CALL });
  return { datasets, probe, calls };
};

/** Runs `work` over `items`, `concurrency` at a time. */
const inParallel = async <T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>) => {
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < items.length; index = next++) await work(items[index]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
};

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * `dms audit verify --json` on the data directory: its wall time, the seconds it reports for the
 * verification itself, and its CPU seconds (sampled every 100 ms: /proc forgets a process once it exits).
 */
const auditVerify = async (dataDir: string): Promise<{ ms: number; ownSeconds: number; cpuSeconds: number }> => {
  let output = '';
  let cpu = 0;
  const ms = await timed(
    () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(dmsCommand().command, [...dmsCommand().args, 'audit', 'verify', '--json'], {
          env: { ...process.env, DMS_DATA_DIR: dataDir, DMS_LOG_LEVEL: 'warn' },
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        const sampler = setInterval(() => (cpu = Math.max(cpu, cpuSeconds(child.pid!))), 100);
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.once('error', reject);
        child.once('exit', (code) => {
          clearInterval(sampler);
          if (code === 0) resolve();
          else reject(new Error(`dms audit verify exited with ${code}: ${output}`));
        });
      }),
  );
  const report = JSON.parse(output) as { holds: boolean; seconds?: number };
  if (!report.holds) throw new Error(`dms audit verify: the chains do not hold: ${output}`);
  return { ms, ownSeconds: report.seconds ?? Number.NaN, cpuSeconds: cpu };
};

/**
 * The tenth's server. The rebuild's server (rebuildInServer) stops as soon as reads have switched,
 * leaving the replaced generations; this one drops them at its start (no grace: the rebuild's
 * server is gone), so that each tenth's bytes are those of one generation.
 */
const startServer = (dataDir: string): Promise<ServerProcess> =>
  startProcess(
    'bin/dms.ts',
    ['serve', '--roles', JUDGE_ROLES],
    { DMS_DATA_DIR: dataDir, PORT: '0', DMS_LOG_LEVEL: 'info', DMS_GENERATION_GRACE_SECONDS: '0' },
    'API listening',
  );

/** Every projection rebuilt by the projector threads of a `dms serve` without daemons (lib/rebuildOverHttp.ts). */
const rebuildInServer = async (dataDir: string): Promise<RebuildOverHttp> => {
  const server = await startDms(dataDir);
  try {
    return await rebuildEveryProjection(server, await login(server));
  } finally {
    await server.stop();
  }
};

export const runScaleBenchmark = async (): Promise<void> => {
  const files = filesWanted();
  const tenth = files / 10;
  const probeFiles = Math.min(10_000, tenth);
  const began = Date.now();
  console.log(
    `Scale: ${files.toLocaleString('en-US')} files; load average ${loadavg()
      .map((one) => one.toFixed(2))
      .join(', ')}`,
  );
  const dir = tempDir();
  const rawDir = tempDir();
  const raw = rawCatalogue(join(rawDir.path, 'raw.sqlite'));
  const tenths: Tenth[] = [];
  try {
    for (let index = 1; index <= 10; index += 1) {
      const { datasets, probe, calls } = plan(index, tenth, probeFiles);
      const server = await startServer(dir.path);
      let figures: Served;
      try {
        const token = await login(server);
        const call = client(server, token, CONCURRENCY + 1);
        if (index === 1) {
          expectStatus(await call('POST', `/scopes/root/${SCOPE}`), 201, 'scope');
          for (const rse of [SOURCE, COPY, PROBE_TARGET]) await addRse(call, rse);
        }
        const collections = [...datasets, probe].map((name) => ({ scope: SCOPE, name, type: 'DATASET' }));
        expectStatus(await call('POST', '/dids', collections), 201, 'datasets');
        // Calls in flight attach to different datasets; the probe's ten calls go one after the
        // other (first, so that they do not make a tail with one call in flight), as one client
        // filling one dataset would send them.
        const groups = [
          calls.filter((one) => one.dataset === probe),
          ...calls.filter((one) => one.dataset !== probe).map((one) => [one]),
        ];
        const registerCpu = cpuSeconds(server.pid);
        const registerMs = await timed(() =>
          inParallel(groups, CONCURRENCY, async (group) => {
            for (const one of group) {
              const dids = Array.from({ length: one.count }, (_, offset) => ({
                scope: SCOPE,
                name: `${one.prefix}.${one.start + offset}`,
                bytes: 1_000_000 + offset,
                adler32: '0cc737eb',
              }));
              const response = await call('POST', `/dids/${SCOPE}/${one.dataset}/dids`, { rse: SOURCE, dids });
              expectStatus(response, 201, `attach to ${one.dataset}`);
            }
          }),
        );
        const registerCpuUsPerFile = ((cpuSeconds(server.pid) - registerCpu) * 1e6) / tenth;
        const ruled = datasets.filter((_, at) => at % RULE_EVERY === 0);
        const rulesMs = await timed(() =>
          inParallel(ruled, CONCURRENCY, async (dataset) => {
            await ruleOn(call, { dids: [{ scope: SCOPE, name: dataset }], copies: 1, rse_expression: COPY });
          }),
        );
        // One listing to warm the server's caches after its restart, then three measured.
        const listings: StreamFigures[] = [];
        let listCpu = 0;
        for (let round = 0; round < 4; round += 1) {
          const cpuBefore = cpuSeconds(server.pid);
          const listing = await streamLines(server.url, token, 'POST', '/replicas/list', {
            dids: [{ scope: SCOPE, name: probe }],
          });
          if (listing.rows !== probeFiles) throw new Error(`listed ${listing.rows} replicas, expected ${probeFiles}`);
          if (round > 0) {
            listings.push(listing);
            listCpu += cpuSeconds(server.pid) - cpuBefore;
          }
        }
        const probeCpu = cpuSeconds(server.pid);
        const probeRuleMs = await timed(async () => {
          const ruleId = await ruleOn(call, {
            dids: [{ scope: SCOPE, name: probe }],
            copies: 1,
            rse_expression: PROBE_TARGET,
          });
          await waitForRule(
            call,
            ruleId,
            (rule) => rule.locks_replicating_cnt === probeFiles && rule.state === 'REPLICATING',
          );
        });
        figures = {
          files: index * tenth,
          registerFilesPerSecond: perSecond(tenth, registerMs),
          datasetRuleLocksPerSecond:
            ruled.length === 0 ? Number.NaN : perSecond(ruled.length * FILES_PER_CALL, rulesMs),
          list: {
            rows: probeFiles,
            ms: median(listings.map((one) => one.ms)),
            firstByteMs: median(listings.map((one) => one.firstByteMs)),
          },
          probeRuleMs,
          registerCpuUsPerFile,
          listCpuUsPerRow: (listCpu * 1e6) / (3 * probeFiles),
          probeRuleCpuUsPerLock: ((cpuSeconds(server.pid) - probeCpu) * 1e6) / probeFiles,
          rssMiB: treeRss(server.pid, 'VmRSS'),
          anonymousRssMiB: treeRss(server.pid, 'RssAnon'),
        };
      } finally {
        await server.stop();
      }

      const eventStore = new SqliteEventStore(join(dir.path, 'events.sqlite'));
      const events = Number(await eventStore.headPosition());
      await eventStore.close();
      const eventBytes = usedBytes(join(dir.path, 'events.sqlite'));
      // Every read-model file: one per projection group, and the shared one.
      const readModelBytes = readdirSync(dir.path)
        .filter((name) => name.startsWith('readmodels') && name.endsWith('.sqlite'))
        .reduce((sum, name) => sum + usedBytes(join(dir.path, name)), 0);
      // The rebuild runs as an operator would run it, in a server of its own (started after the
      // bytes are counted, as the replaced generations stay on disk for a grace period).
      const rebuild = await rebuildInServer(dir.path);
      const audit = await auditVerify(dir.path);
      const rawInsertRowsPerSecond = raw.insertRate(calls);
      const rawSelectRowsPerSecond = raw.selectRate(probe, probeFiles);
      const done: Tenth = {
        ...figures,
        events,
        rawInsertRowsPerSecond,
        rawSelectRowsPerSecond,
        eventBytesPerFile: eventBytes / figures.files,
        readModelBytesPerFile: readModelBytes / figures.files,
        rawBytesPerFile: raw.bytes() / figures.files,
        rebuildMs: rebuild.ms,
        rebuildEvents: rebuild.events,
        auditMs: audit.ms,
        auditOwnSeconds: audit.ownSeconds,
        rebuildCpuUsPerEvent: (rebuild.cpuSeconds * 1e6) / rebuild.events,
        auditCpuUsPerEvent: (audit.cpuSeconds * 1e6) / events,
      };
      tenths.push(done);
      printTenth(done, probeFiles, Date.now() - began);
    }
  } finally {
    raw.close();
    rawDir.dispose();
    if (process.env.BENCH_KEEP_DIR) console.log(`kept ${dir.path}`);
    else dir.dispose();
  }
  printSummary(tenths, probeFiles, Date.now() - began);
};

const printTenth = (tenth: Tenth, probeFiles: number, elapsedMs: number): void => {
  const rawInsert = { name: 'raw SQLite inserting as many rows, 1000 per commit', value: tenth.rawInsertRowsPerSecond };
  const rawSelect = { name: "raw SQLite selecting the probe's rows", value: tenth.rawSelectRowsPerSecond };
  const rows: Row[] = [
    { name: 'registration of this tenth', value: tenth.registerFilesPerSecond, unit: 'files/s', baseline: rawInsert },
    { name: "  the server's CPU per file", value: tenth.registerCpuUsPerFile, unit: 'µs' },
    // None when the tenth is its probe dataset alone (runs of 100 000 files or fewer).
    ...(Number.isNaN(tenth.datasetRuleLocksPerSecond)
      ? []
      : [
          {
            name: 'rules on its 1000-file datasets (locks made in the POST)',
            value: tenth.datasetRuleLocksPerSecond,
            unit: 'locks/s',
          },
        ]),
    {
      name: `list_replicas of a ${probeFiles}-file dataset`,
      value: perSecond(tenth.list.rows, tenth.list.ms),
      unit: 'rows/s',
      baseline: rawSelect,
    },
    { name: '  first byte', value: tenth.list.firstByteMs, unit: 'ms' },
    { name: "  the server's CPU per row", value: tenth.listCpuUsPerRow, unit: 'µs' },
    { name: `a ${probeFiles}-lock rule, until GET /rules/{id} shows every lock`, value: tenth.probeRuleMs, unit: 'ms' },
    { name: "  the server's CPU per lock", value: tenth.probeRuleCpuUsPerLock, unit: 'µs' },
    { name: "RSS of the server's processes (anonymous)", value: tenth.anonymousRssMiB, unit: 'MiB' },
    { name: "RSS of the server's processes (mapped database pages included)", value: tenth.rssMiB, unit: 'MiB' },
    { name: 'events per file', value: tenth.events / tenth.files, unit: 'events' },
    {
      name: 'disk per file: event store + read models',
      value: tenth.eventBytesPerFile + tenth.readModelBytesPerFile,
      unit: 'B',
      baseline: { name: 'raw SQLite, one row per file', value: tenth.rawBytesPerFile },
    },
    { name: '  event store', value: tenth.eventBytesPerFile, unit: 'B' },
    { name: '  read models', value: tenth.readModelBytesPerFile, unit: 'B' },
    { name: 'rebuild every projection', value: tenth.rebuildMs / 1000, unit: 's' },
    { name: '  as a rate', value: perSecond(tenth.rebuildEvents, tenth.rebuildMs), unit: 'events/s' },
    { name: '  CPU per event', value: tenth.rebuildCpuUsPerEvent, unit: 'µs' },
    { name: '`dms audit verify` (process start included)', value: tenth.auditMs / 1000, unit: 's' },
    { name: '  as a rate', value: perSecond(tenth.events, tenth.auditMs), unit: 'events/s' },
    { name: '  CPU per event (process start included)', value: tenth.auditCpuUsPerEvent, unit: 'µs' },
  ];
  printTable(
    `Scale: ${tenth.files.toLocaleString('en-US')} files, ${tenth.events.toLocaleString('en-US')} events (${Math.round(elapsedMs / 1000)} s into the run)`,
    rows,
  );
};

/** Every figure at each tenth, and the last tenth's as a percentage of the first's. */
const printSummary = (tenths: readonly Tenth[], probeFiles: number, elapsedMs: number): void => {
  const series: [string, (tenth: Tenth) => number][] = [
    ['registration, files/s', (t) => t.registerFilesPerSecond],
    ['  server CPU per file, µs', (t) => t.registerCpuUsPerFile],
    ['  raw SQLite inserts, rows/s', (t) => t.rawInsertRowsPerSecond],
    ['dataset rules, locks/s', (t) => t.datasetRuleLocksPerSecond],
    [`list_replicas of ${probeFiles} files, rows/s`, (t) => perSecond(t.list.rows, t.list.ms)],
    ['  first byte, ms', (t) => t.list.firstByteMs],
    ['  server CPU per row, µs', (t) => t.listCpuUsPerRow],
    ["  raw SQLite select of the probe's rows, rows/s", (t) => t.rawSelectRowsPerSecond],
    [`${probeFiles}-lock rule, ms`, (t) => t.probeRuleMs],
    ['  server CPU per lock, µs', (t) => t.probeRuleCpuUsPerLock],
    ['RSS, MiB', (t) => t.rssMiB],
    ['  anonymous, MiB', (t) => t.anonymousRssMiB],
    ['disk per file, B', (t) => t.eventBytesPerFile + t.readModelBytesPerFile],
    ['  event store, B', (t) => t.eventBytesPerFile],
    ['  read models, B', (t) => t.readModelBytesPerFile],
    ['  raw SQLite, B', (t) => t.rawBytesPerFile],
    ['rebuild, s', (t) => t.rebuildMs / 1000],
    ['  events/s', (t) => perSecond(t.rebuildEvents, t.rebuildMs)],
    ['  CPU per event, µs', (t) => t.rebuildCpuUsPerEvent],
    ['audit verify, s', (t) => t.auditMs / 1000],
    ['  events/s', (t) => perSecond(t.events, t.auditMs)],
    ['  CPU per event, µs', (t) => t.auditCpuUsPerEvent],
  ];
  const format = (value: number) =>
    Number.isNaN(value)
      ? '-'
      : value >= 100
        ? Math.round(value).toLocaleString('en-US')
        : value.toFixed(value >= 10 ? 1 : 2);
  const header = ['files', ...tenths.map((t) => t.files.toLocaleString('en-US')), 'last/first'];
  const lines = series.map(([name, of]) => {
    const values = tenths.map(of);
    const last = values.length > 1 ? values.at(-1)! / values[0]! : Number.NaN;
    const ratio = Number.isFinite(last) ? `${(last * 100).toFixed(0)}%` : '';
    return [name, ...values.map(format), ratio];
  });
  const widths = header.map((_, column) => Math.max(...[header, ...lines].map((line) => line[column]!.length)));
  console.log(
    `\nScale: every figure at each tenth (${Math.round(elapsedMs / 1000)} s in all; load average now ${loadavg()
      .map((one) => one.toFixed(2))
      .join(', ')})`,
  );
  for (const line of [header, ...lines])
    console.log(
      `  ${line.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')}`,
    );
};
