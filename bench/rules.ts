import { rawBaselineRate } from './appendRates.ts';
import { client, expectStatus, login, type Call } from './lib/httpClient.ts';
import { perSecond, printTable, timed, type Row } from './lib/report.ts';
import { startProcess, type ServerProcess } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';

/**
 * Rules at scale, through the API of one `dms serve` with its workers (a private redis-server):
 *
 * - a rule on a 10 000-file dataset with a replica of each file on one RSE, to an RSE holding
 *   none: from the POST until its 10 000 locks, COPYING replicas and queued requests exist (the
 *   rule is large enough to go through the injector, as in Rucio);
 * - an asynchronous rule on a closed container of BENCH_RULE_DATASETS (default 100) datasets of
 *   1000 files: until the injector has made every lock;
 * - 1000 files attached to a dataset under 3 rules: until the evaluator has made the 3000 locks.
 *
 * The raw SQLite append rate measured in the same run is the baseline.
 */

const DATASETS = Number(process.env.BENCH_RULE_DATASETS ?? 100);
export const JUDGE_ROLES = 'judge-injector,judge-evaluator,judge-repairer,judge-cleaner';
const SCOPE = 'bench';
const SOURCE = 'BENCH_SOURCE';
const TARGETS = ['BENCH_TARGET_1', 'BENCH_TARGET_2', 'BENCH_TARGET_3', 'BENCH_TARGET_4'] as const;

export const addRse = async (call: Call, rse: string): Promise<void> => {
  expectStatus(await call('POST', `/rses/${rse}`, {}), 201, `RSE ${rse}`);
  const domains = {
    lan: { read: 1, write: 1, delete: 1 },
    wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
  };
  const protocol = {
    hostname: `${rse.toLowerCase()}.example.org`,
    port: 1094,
    prefix: '/data',
    impl: 'rucio.rse.protocols.xrootd.Default',
    domains,
  };
  expectStatus(await call('POST', `/rses/${rse}/protocols/root`, protocol), 201, `protocol of ${rse}`);
};

/** `count` files of 1 MB with a replica on the source, attached to `dataset` 1000 per call. */
export const fillDataset = async (call: Call, dataset: string, prefix: string, count: number): Promise<void> => {
  for (let start = 0; start < count; start += 1000) {
    const dids = Array.from({ length: Math.min(1000, count - start) }, (_, offset) => ({
      scope: SCOPE,
      name: `${prefix}.${start + offset}`,
      bytes: 1_000_000,
      adler32: '0cc737eb',
    }));
    expectStatus(
      await call('POST', `/dids/${SCOPE}/${dataset}/dids`, { rse: SOURCE, dids }),
      201,
      `attach to ${dataset}`,
    );
  }
};

export const ruleOn = async (call: Call, body: object): Promise<string> => {
  const response = await call('POST', '/rules/', body);
  expectStatus(response, 201, 'rule');
  return (JSON.parse(response.text) as string[])[0]!;
};

/** Polls a rule until `done` says so (every 20 ms, at most 10 minutes). */
export const waitForRule = async (
  call: Call,
  ruleId: string,
  done: (rule: Record<string, number | string>) => boolean,
): Promise<void> => {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const response = await call('GET', `/rules/${ruleId}`);
    if (response.status === 200 && done(JSON.parse(response.text) as Record<string, number | string>)) return;
    if (Date.now() > deadline) throw new Error(`rule ${ruleId} did not get there: ${response.text}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

export const runRuleBenchmark = async (): Promise<void> => {
  const rows: Row[] = [];
  const rawRate = rawBaselineRate();
  rows.push({ ...rawRate, unit: 'rows/s' });

  const dir = tempDir();
  let server: ServerProcess | undefined;
  try {
    // The judge alone: with the conveyor on, the mock tool would also copy and finish the requests
    // the rules queue, and the figures would measure transfers too (bench/transfers.ts does).
    server = await startProcess(
      'bin/dms.ts',
      ['serve', '--roles', JUDGE_ROLES],
      { DMS_DATA_DIR: dir.path, PORT: '0', DMS_LOG_LEVEL: 'info' },
      'API listening',
    );
    const call = client(server, await login(server));
    expectStatus(await call('POST', `/scopes/root/${SCOPE}`), 201, 'scope');
    for (const rse of [SOURCE, ...TARGETS]) await addRse(call, rse);

    // 1. A 10 000-file dataset, one rule to an empty RSE.
    expectStatus(await call('POST', '/dids', [{ scope: SCOPE, name: 'big', type: 'DATASET' }]), 201, 'dataset');
    await fillDataset(call, 'big', 'big', 10_000);
    let ruleId = '';
    const bigMs = await timed(async () => {
      ruleId = await ruleOn(call, { dids: [{ scope: SCOPE, name: 'big' }], copies: 1, rse_expression: TARGETS[0] });
      await waitForRule(call, ruleId, (rule) => rule.locks_replicating_cnt === 10_000 && rule.state === 'REPLICATING');
    });
    const request = await call('GET', `/requests/${SCOPE}/big.9999/${TARGETS[0]}`);
    expectStatus(request, 200, "the last file's request");
    rows.push({
      name: 'rule on a 10 000-file dataset: locks, COPYING replicas and requests made (via the injector)',
      value: bigMs,
      unit: 'ms',
    });
    rows.push({ name: '  the same as a rate', value: perSecond(10_000, bigMs), unit: 'locks/s', baseline: rawRate });

    // 2. An asynchronous rule on a closed container of DATASETS × 1000 files.
    const datasets = Array.from({ length: DATASETS }, (_, index) => ({
      scope: SCOPE,
      name: `part${index}`,
      type: 'DATASET',
    }));
    expectStatus(
      await call('POST', '/dids', [{ scope: SCOPE, name: 'container', type: 'CONTAINER' }, ...datasets]),
      201,
      'container',
    );
    for (const dataset of datasets) await fillDataset(call, dataset.name, dataset.name, 1000);
    expectStatus(
      await call('POST', `/dids/${SCOPE}/container/dids`, {
        dids: datasets.map(({ scope, name }) => ({ scope, name })),
      }),
      201,
      'attach datasets',
    );
    for (const dataset of datasets)
      expectStatus(await call('PUT', `/dids/${SCOPE}/${dataset.name}/status`, { open: false }), 200, 'close');
    expectStatus(await call('PUT', `/dids/${SCOPE}/container/status`, { open: false }), 200, 'close container');
    const files = DATASETS * 1000;
    const containerMs = await timed(async () => {
      ruleId = await ruleOn(call, {
        dids: [{ scope: SCOPE, name: 'container' }],
        copies: 1,
        rse_expression: TARGETS[1],
        asynchronous: true,
      });
      await waitForRule(call, ruleId, (rule) => rule.locks_replicating_cnt === files);
    });
    rows.push({
      name: `asynchronous rule on a closed ${files}-file container: every lock made by the injector`,
      value: containerMs,
      unit: 'ms',
    });
    rows.push({
      name: '  the same as a rate',
      value: perSecond(files, containerMs),
      unit: 'locks/s',
      baseline: rawRate,
    });

    // 3. 1000 files attached to a dataset under 3 rules.
    expectStatus(await call('POST', '/dids', [{ scope: SCOPE, name: 'growing', type: 'DATASET' }]), 201, 'dataset');
    await fillDataset(call, 'growing', 'seed', 1);
    const ruleIds: string[] = [];
    for (const target of TARGETS.slice(1))
      ruleIds.push(
        await ruleOn(call, { dids: [{ scope: SCOPE, name: 'growing' }], copies: 1, rse_expression: target }),
      );
    const attachMs = await timed(async () => {
      await fillDataset(call, 'growing', 'grown', 1000);
      for (const id of ruleIds)
        await waitForRule(call, id, (rule) => Number(rule.locks_replicating_cnt) + Number(rule.locks_ok_cnt) === 1001);
    });
    rows.push({
      name: '1000 files attached under 3 rules: the 3000 locks made by the evaluator (attach included)',
      value: attachMs,
      unit: 'ms',
    });
    rows.push({ name: '  the same as a rate', value: perSecond(3000, attachMs), unit: 'locks/s', baseline: rawRate });
  } finally {
    await server?.stop();
    dir.dispose();
  }
  printTable('Rules: locks, replicas and requests made by rule creation, the injector and the evaluator', rows);
};
