import { join } from 'node:path';
import { rawFootprints, type RawFlow } from './footprintBaseline.ts';
import { client, expectStatus, login, type Call } from './lib/httpClient.ts';
import { formatNumber, printColumns } from './lib/report.ts';
import { startProcess, type ServerProcess } from './lib/serverProcess.ts';
import { footprintGrowth, readModelFootprint, type BtreeFootprint } from './lib/sqliteFootprint.ts';
import { tempDir } from './lib/tempDir.ts';
import { addRse, JUDGE_ROLES, ruleOn, waitForRule } from './rules.ts';

/**
 * `npm run bench footprint`: what one fact costs the read models (issue 30, item 3). One `dms
 * serve` (the projection groups, each in its file; the judge alone, so that the rule's requests
 * stay queued) takes BENCH_FOOTPRINT_FILES files (default 10 000) through three flows:
 *
 * - a registered file: `POST /replicas`, 1 000 files per call, each file created with its replica;
 * - an attach: the same files attached to datasets of 1 000, 1 000 per call;
 * - a lock: a rule on a container of those datasets, to another RSE (its locks, the replicas
 *   they create, their transfer requests).
 *
 * After each flow, once every projection has applied the whole log, every read-model file is read
 * with SQLite's `dbstat`: per table and per index, the entries (rows, index entries) and bytes
 * (pages, and the payload they hold) that flow added, divided by the files. Beside them, in the
 * same run, raw SQLite holding the same facts as plain rows (bench/footprintBaseline.ts): one
 * table per fact with the keys the queries need, and nothing else.
 *
 * BENCH_FOOTPRINT_BASELINE names another tree of this service (with its node_modules, e.g. `git
 * worktree add --detach /tmp/dms-main main` and a link to node_modules): its server takes the same
 * flows first, in the same run, and each flow's totals are printed beside that tree's.
 */

const FILES = Number(process.env.BENCH_FOOTPRINT_FILES ?? 10_000);
const SCOPE = 'bench';
const SOURCE = 'FOOT_SOURCE';
const TARGET = 'FOOT_TARGET';
const DATASETS = Math.ceil(FILES / 1000);

const progress = (text: string): void => console.log(`  ${new Date().toISOString().slice(11, 19)} ${text}`);

/** Waits until every projection has applied the head of the log. */
const projected = async (call: Call): Promise<void> => {
  const deadline = Date.now() + Number(process.env.BENCH_FOOTPRINT_WAIT_MS ?? 600_000);
  for (;;) {
    const response = await call('GET', '/admin/projections');
    expectStatus(response, 200, 'projections');
    const reports = JSON.parse(response.text) as { name: string; lag: number }[];
    if (reports.every((report) => report.lag === 0)) return;
    if (Date.now() > deadline) throw new Error(`the projections did not catch up within 10 minutes: ${response.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

const fileNames = (from: number, count: number) =>
  Array.from({ length: count }, (_, offset) => ({ scope: SCOPE, name: `file.${from + offset}` }));

export type FlowFootprint = Readonly<{ flow: RawFlow; unit: string; growth: readonly BtreeFootprint[] }>;

/** The three flows on a fresh server; what each added to the read models. */
export const measureFlows = async (tree?: string): Promise<FlowFootprint[]> => {
  const dir = tempDir();
  const data = join(dir.path, 'data');
  let server: ServerProcess | undefined;
  const flows: FlowFootprint[] = [];
  try {
    server = await startProcess(
      'bin/dms.ts',
      ['serve', '--roles', JUDGE_ROLES],
      { DMS_DATA_DIR: data, PORT: '0', DMS_LOG_LEVEL: 'info' },
      'API listening',
      tree,
    );
    const call = client(server, await login(server), 1);
    expectStatus(await call('POST', `/scopes/root/${SCOPE}`), 201, 'scope');
    for (const rse of [SOURCE, TARGET]) await addRse(call, rse);
    const datasets = Array.from({ length: DATASETS }, (_, index) => `dataset.${index}`);
    expectStatus(
      await call('POST', '/dids', [
        ...datasets.map((name) => ({ scope: SCOPE, name, type: 'DATASET' })),
        { scope: SCOPE, name: 'container', type: 'CONTAINER' },
      ]),
      201,
      'collections',
    );
    expectStatus(
      await call('POST', `/dids/${SCOPE}/container/dids`, { dids: datasets.map((name) => ({ scope: SCOPE, name })) }),
      201,
      'the container',
    );
    const measure = async (flow: RawFlow, unit: string, work: () => Promise<void>): Promise<void> => {
      await projected(call);
      const before = readModelFootprint(data);
      progress(`${flow}: ${formatNumber(FILES)} ${unit}s`);
      await work();
      await projected(call);
      flows.push({ flow, unit, growth: footprintGrowth(before, readModelFootprint(data)) });
    };
    await measure('registered file', 'file', async () => {
      for (let start = 0; start < FILES; start += 1000) {
        const files = fileNames(start, Math.min(1000, FILES - start)).map((did) => ({
          ...did,
          bytes: 1_000_000,
          adler32: '0cc737eb',
        }));
        expectStatus(await call('POST', '/replicas', { rse: SOURCE, files }), 201, 'replicas');
      }
    });
    await measure('attach', 'file', async () => {
      for (const [index, dataset] of datasets.entries()) {
        const dids = fileNames(index * 1000, Math.min(1000, FILES - index * 1000));
        expectStatus(await call('POST', `/dids/${SCOPE}/${dataset}/dids`, { dids }), 201, 'attach');
      }
    });
    await measure('lock', 'lock', async () => {
      const ruleId = await ruleOn(call, {
        dids: [{ scope: SCOPE, name: 'container' }],
        copies: 1,
        rse_expression: TARGET,
      });
      await waitForRule(call, ruleId, (rule) => Number(rule.locks_replicating_cnt) === FILES);
    });
  } finally {
    await server?.stop();
    dir.dispose();
  }
  return flows;
};

const perFile = (value: number): string => (value / FILES).toFixed(2);
const bytesPerFile = (value: number): string => formatNumber(Math.round(value / FILES));

const sum = (btrees: readonly BtreeFootprint[], pick: (btree: BtreeFootprint) => number): number =>
  btrees.reduce((total, btree) => total + pick(btree), 0);

const printFlow = (flow: FlowFootprint, raw: readonly BtreeFootprint[]): void => {
  // B-trees the flow barely touched (a counter rewritten, a heartbeat) are left out: under half a byte and a hundredth of an entry per unit.
  const lines = flow.growth
    .filter((btree) => Math.abs(btree.pageBytes) / FILES >= 0.5 || Math.abs(btree.entries) / FILES >= 0.01)
    .sort((a, b) => b.pageBytes - a.pageBytes);
  const row = (btree: BtreeFootprint): string[] => [
    btree.name,
    btree.kind === 'table' ? perFile(btree.entries) : '',
    btree.kind === 'index' ? perFile(btree.entries) : '',
    bytesPerFile(btree.pageBytes),
    bytesPerFile(btree.payloadBytes),
  ];
  const totals = (name: string, btrees: readonly BtreeFootprint[]): string[] => [
    name,
    perFile(
      sum(
        btrees.filter((b) => b.kind === 'table'),
        (b) => b.entries,
      ),
    ),
    perFile(
      sum(
        btrees.filter((b) => b.kind === 'index'),
        (b) => b.entries,
      ),
    ),
    bytesPerFile(sum(btrees, (b) => b.pageBytes)),
    bytesPerFile(sum(btrees, (b) => b.payloadBytes)),
  ];
  const withoutAudit = flow.growth.filter((btree) => !btree.name.startsWith('audit/'));
  printColumns(
    `Read models, per ${flow.unit} of "${flow.flow}" (${formatNumber(FILES)}), with raw SQLite of the same facts`,
    [
      ['table [index]', 'rows', 'index entries', 'page bytes', 'payload bytes'],
      ...lines.map(row),
      totals('read models, all', flow.growth),
      totals('read models, without the audit', withoutAudit),
      ...raw.map((btree) => row({ ...btree, name: `raw: ${btree.name}` })),
      totals('raw SQLite, all', raw),
    ],
  );
};

/** Each flow's totals per unit: this tree's beside the baseline tree's and raw SQLite's. */
const printComparison = (
  flows: readonly FlowFootprint[],
  baseline: readonly FlowFootprint[],
  raw: Map<RawFlow, BtreeFootprint[]>,
): void => {
  const figures = (btrees: readonly BtreeFootprint[]) => ({
    rows:
      sum(
        btrees.filter((b) => b.kind === 'table'),
        (b) => b.entries,
      ) / FILES,
    entries:
      sum(
        btrees.filter((b) => b.kind === 'index'),
        (b) => b.entries,
      ) / FILES,
    bytes: sum(btrees, (b) => b.pageBytes) / FILES,
  });
  const lines: string[][] = [];
  for (const flow of flows) {
    const before = baseline.find((candidate) => candidate.flow === flow.flow);
    const rawFigures = figures(raw.get(flow.flow) ?? []);
    for (const [label, scope] of [
      ['all', () => true],
      ['without the audit', (b: BtreeFootprint) => !b.name.startsWith('audit/')],
    ] as const) {
      const now = figures(flow.growth.filter(scope));
      const then = before ? figures(before.growth.filter(scope)) : undefined;
      for (const [figure, pick, digits] of [
        ['rows', (f: typeof now) => f.rows, 2],
        ['index entries', (f: typeof now) => f.entries, 2],
        ['bytes', (f: typeof now) => f.bytes, 0],
      ] as const)
        lines.push([
          `${flow.flow}, per ${flow.unit}: ${figure} (${label})`,
          then ? pick(then).toFixed(digits) : '',
          pick(now).toFixed(digits),
          then && pick(then) > 0 ? `${((pick(now) / pick(then)) * 100).toFixed(0)} %` : '',
          pick(rawFigures).toFixed(digits),
          pick(rawFigures) > 0 ? `${(pick(now) / pick(rawFigures)).toFixed(1)}×` : '',
        ]);
    }
  }
  printColumns(`What one fact costs the read models, baseline tree and this tree, beside raw SQLite (same run)`, [
    ['figure', 'baseline tree', 'this tree', 'this / baseline', 'raw SQLite', 'this / raw'],
    ...lines,
  ]);
};

export const runFootprintBenchmark = async (): Promise<void> => {
  const baselineTree = process.env.BENCH_FOOTPRINT_BASELINE;
  const baseline = baselineTree ? await measureFlows(baselineTree) : [];
  const flows = await measureFlows();
  const raw = rawFootprints(FILES);
  for (const flow of flows) printFlow(flow, raw.get(flow.flow) ?? []);
  printComparison(flows, baseline, raw);
};
