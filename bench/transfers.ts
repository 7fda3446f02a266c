import { rawBaselineRate } from './appendRates.ts';
import { client, expectStatus, login, type Call } from './lib/httpClient.ts';
import { perSecond, printTable, timed, type Row } from './lib/report.ts';
import { startProcess, type ServerProcess } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';
import { processCpuMs, waitFor } from './lib/waiting.ts';
import { addRse } from './rules.ts';

/**
 * The conveyor at scale, through one `dms serve` with its workers and the `mock` tool:
 * BENCH_TRANSFERS (default 10 000) requests, made by one rule and held PREPARING while the rule is
 * injected, then taken through preparer → submitter → poller → finisher until the rule is OK.
 * The clock starts when the first request leaves PREPARING and stops when the rule is OK: every
 * replica AVAILABLE, every lock OK, every request archived.
 *
 * Baseline, measured in the same run: raw SQLite appends at 1000 rows per commit, and the same
 * rate divided by the events one transfer writes at least (prepared, submitting, submitted,
 * succeeded, archived, the replica's state and its locks: 7).
 */

const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 10_000);
const SCOPE = 'bench';
const SOURCE = 'BENCH_SOURCE';
const TARGET = 'BENCH_TARGET';
const EVENTS_PER_TRANSFER = 7;
/** How long a step of the run may take before the benchmark gives up. */
const WAIT_MS = 900_000;

const ruleOf = async (call: Call, ruleId: string): Promise<Record<string, number | string>> => {
  const response = await call('GET', `/rules/${ruleId}`);
  expectStatus(response, 200, 'rule');
  return JSON.parse(response.text) as Record<string, number | string>;
};

export type TransferFigures = Readonly<{ ms: number; cpuMs: number }>;

/**
 * Starts its own `dms serve` with every worker, has one rule make `count` requests (held
 * PREPARING until it is whole), then times the conveyor from the preparer's first step until the
 * rule is OK; with the server's CPU time over the same span.
 */
export const measureTransfers = async (count: number): Promise<TransferFigures> => {
  const dir = tempDir();
  let server: ServerProcess | undefined;
  try {
    server = await startProcess(
      'bin/dms.ts',
      ['serve'],
      { DMS_DATA_DIR: dir.path, PORT: '0', DMS_LOG_LEVEL: 'info' },
      'API listening',
    );
    const call = client(server, await login(server));
    // Requests wait PREPARING, the preparer asleep, until the rule is whole.
    expectStatus(
      await call('POST', '/config', { conveyor: { use_preparer: true }, 'conveyor-preparer': { interval: 86_400 } }),
      201,
      'config',
    );
    expectStatus(await call('POST', `/scopes/root/${SCOPE}`), 201, 'scope');
    for (const rse of [SOURCE, TARGET]) await addRse(call, rse);
    expectStatus(await call('POST', `/rses/${SOURCE}/distances/${TARGET}`, { distance: 1 }), 201, 'distance');
    expectStatus(await call('POST', '/dids', [{ scope: SCOPE, name: 'big', type: 'DATASET' }]), 201, 'dataset');
    for (let start = 0; start < count; start += 1000) {
      const dids = Array.from({ length: Math.min(1000, count - start) }, (_, offset) => ({
        scope: SCOPE,
        name: `big.${start + offset}`,
        bytes: 1_000_000,
        adler32: '0cc737eb',
      }));
      expectStatus(await call('POST', `/dids/${SCOPE}/big/dids`, { rse: SOURCE, dids }), 201, 'attach');
    }
    const created = await call('POST', '/rules/', {
      dids: [{ scope: SCOPE, name: 'big' }],
      copies: 1,
      rse_expression: TARGET,
    });
    expectStatus(created, 201, 'rule');
    const [ruleId] = JSON.parse(created.text) as string[];
    await waitFor(
      'the rule injected',
      async () => (await ruleOf(call, ruleId!)).locks_replicating_cnt === count,
      100,
      WAIT_MS,
    );

    // Wake the preparer (the workers follow the configuration within 10 s); the clock starts at its first step.
    expectStatus(await call('POST', '/config', { 'conveyor-preparer': { interval: 1 } }), 201, 'config');
    await waitFor(
      'the preparer awake',
      async () => {
        const listed = await call('GET', `/requests/list?src_rse=${SOURCE}&dst_rse=${TARGET}&request_states=Q,G,S,D`);
        return listed.status === 200 && listed.text.length > 0;
      },
      20,
      WAIT_MS,
    );
    const cpuBefore = processCpuMs(server.pid);
    const ms = await timed(() =>
      waitFor('the rule OK', async () => (await ruleOf(call, ruleId!)).state === 'OK', 50, WAIT_MS),
    );
    const cpu = processCpuMs(server.pid) - cpuBefore;
    const rule = await ruleOf(call, ruleId!);
    if (rule.locks_ok_cnt !== count) throw new Error(`the rule has ${rule.locks_ok_cnt} OK locks`);
    return { ms, cpuMs: cpu };
  } finally {
    await server?.stop();
    dir.dispose();
  }
};

export const runTransferBenchmark = async (): Promise<void> => {
  const rows: Row[] = [];
  const rawRate = rawBaselineRate();
  rows.push({ ...rawRate, unit: 'rows/s' });
  const rawTransfers = {
    name: `raw SQLite appends of ${EVENTS_PER_TRANSFER} events per transfer`,
    value: rawRate.value / EVENTS_PER_TRANSFER,
  };
  rows.push({ ...rawTransfers, unit: 'transfers/s' });

  const { ms: conveyorMs, cpuMs: cpu } = await measureTransfers(TRANSFERS);
  rows.push({
    name: `${TRANSFERS} transfers, preparer → submitter → poller → finisher, until the rule is OK`,
    value: conveyorMs,
    unit: 'ms',
  });
  rows.push({
    name: '  the same as a rate',
    value: perSecond(TRANSFERS, conveyorMs),
    unit: 'transfers/s',
    baseline: rawTransfers,
  });
  // CPU time is steadier than wall time on a shared machine: what the server spent, all threads.
  rows.push({ name: '  server CPU time per transfer (every thread)', value: cpu / TRANSFERS, unit: 'ms' });
  printTable('Transfers: the conveyor with the mock tool', rows);
};
