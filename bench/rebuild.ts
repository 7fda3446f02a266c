import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteEventStore } from '../infra/eventstore/sqliteEventStore.ts';
import type { SqliteReadStore } from '../infra/readstore/sqlite/sqliteReadStore.ts';
import { allProjections } from '../projections/index.ts';
import type { AnyProjection } from '../projections/projection.ts';
import { newRebuild, requestRebuild } from '../projections/runtime/projectionRunner.ts';
import { projectionStateCollection, type ProjectionStateDocument } from '../projections/runtime/projectionState.ts';
import { rawBatchRate, rawEventTable } from './appendRates.ts';
import { client, expectStatus, login, type Call } from './lib/httpClient.ts';
import { perSecond, printTable, timed, type Row } from './lib/report.ts';
import { startDms } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';
import { withProjectionRunner } from './lib/projectionRunner.ts';
import { addRse } from './rules.ts';

/** BENCH_REBUILD_DATASETS overrides the number of 1000-file datasets (default 60), for a quick or a larger run. */
const DATASETS = Number(process.env.BENCH_REBUILD_DATASETS ?? 60);
const FILES_PER_DATASET = 1000;
const SCOPE = 'bench';
const SOURCE = 'BENCH_SOURCE';
const TARGET = 'BENCH_TARGET';

/**
 * The log a rebuild replays, written through the API of a `dms serve` without workers: files
 * registered with a replica in datasets of 1000 (attach with RSE), the datasets in a container,
 * metadata on each dataset, a rule on every other dataset to a second RSE (made at once: a lock, a
 * COPYING replica and a queued request per file), and every dataset closed.
 */
const writeLog = async (call: Call): Promise<void> => {
  expectStatus(await call('POST', `/scopes/root/${SCOPE}`), 201, 'scope');
  await addRse(call, SOURCE);
  await addRse(call, TARGET);
  const datasets = Array.from({ length: DATASETS }, (_, index) => ({
    scope: SCOPE,
    name: `dataset${index}`,
    type: 'DATASET',
  }));
  expectStatus(
    await call('POST', '/dids', [{ scope: SCOPE, name: 'container', type: 'CONTAINER' }, ...datasets]),
    201,
    'datasets',
  );
  for (let index = 0; index < DATASETS; index += 1) {
    const dids = Array.from({ length: FILES_PER_DATASET }, (_, offset) => ({
      scope: SCOPE,
      name: `file.${index}.${offset}`,
      bytes: 1_000_000 + offset,
      adler32: '0cc737eb',
    }));
    const dataset = `/dids/${SCOPE}/dataset${index}`;
    expectStatus(await call('POST', `${dataset}/dids`, { rse: SOURCE, dids }), 201, `attach to dataset${index}`);
    expectStatus(
      await call('POST', `${dataset}/meta`, { meta: { project: 'bench', run_number: index } }),
      201,
      `metadata of dataset${index}`,
    );
    if (index % 2 === 0) {
      const rule = { dids: [{ scope: SCOPE, name: `dataset${index}` }], copies: 1, rse_expression: TARGET };
      expectStatus(await call('POST', '/rules/', rule), 201, `rule on dataset${index}`);
    }
    expectStatus(await call('PUT', `${dataset}/status`, { open: false }), 200, `close dataset${index}`);
  }
  expectStatus(
    await call('POST', `/dids/${SCOPE}/container/dids`, { dids: datasets.map(({ scope, name }) => ({ scope, name })) }),
    201,
    'attach datasets',
  );
};

/** Rows the writer connection has inserted, updated or deleted since it opened (SQLite's own count). */
const rowsWritten = (readStore: SqliteReadStore): number =>
  Number(readStore.writer.prepare<[], { n: number }>('SELECT total_changes() AS n').get()!.n);

/** Bytes this process has had written to storage so far (Linux; WAL and checkpoints included). */
const bytesWritten = (): number => {
  const match = /^write_bytes: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
  return match ? Number(match[1]) : Number.NaN;
};

export type RebuildFigures = Readonly<{ ms: number; cpuMs: number; rows: number; bytes: number }>;

/**
 * Rebuilds the projections into new generations from the start of the log, as `dms projections
 * rebuild` does when no projector runs, until reads have switched to the new generations. The
 * rebuilds are requested together, so they share one lane: the log is read once.
 */
export const rebuildProjections = async (
  dataDir: string,
  projections: readonly AnyProjection[] = allProjections,
): Promise<RebuildFigures> =>
  withProjectionRunner(dataDir, async (runner, { readStore }) => {
    const states = readStore.collection<ProjectionStateDocument>(projectionStateCollection);
    const now = new Date().toISOString();
    for (const projection of projections) {
      const serving = (await states.get(projection.name))?.servingGeneration ?? 1;
      await requestRebuild(readStore, newRebuild(projection, serving + 1, now));
    }
    const rowsBefore = rowsWritten(readStore);
    const bytesBefore = bytesWritten();
    const cpuBefore = process.cpuUsage();
    const ms = await timed(async () => {
      await runner.start();
      await runner.rebuildsFinished(5);
    });
    const cpu = process.cpuUsage(cpuBefore);
    const figures = {
      ms,
      cpuMs: (cpu.user + cpu.system) / 1000,
      rows: rowsWritten(readStore) - rowsBefore,
      bytes: bytesWritten() - bytesBefore,
    };
    await runner.dropReplacedGenerations();
    return figures;
  });

/** Raw SQLite's rate inserting `count` rows, 1000 per commit (the baseline of the same run). */
const rawRate = (count: number): number => {
  const dir = tempDir();
  try {
    const raw = rawEventTable(join(dir.path, 'raw.sqlite'));
    const rate = rawBatchRate(raw, 0, Math.max(1000, Math.ceil(count / 1000) * 1000));
    raw.db.close();
    return rate;
  } finally {
    dir.dispose();
  }
};

/**
 * `npm run bench rebuild`: the time to rebuild every projection from a log of a realistic mix
 * (registration, metadata, rules with their locks and requests), and one projection alone, each
 * beside raw SQLite inserts of as many rows as it wrote, 1000 per commit, in the same run; with
 * the rows and bytes written per event and the CPU time (the machine may be shared: CPU time and
 * the ratio to the raw inserts move less than wall time).
 */
export const runRebuildBenchmark = async (): Promise<void> => {
  const rows: Row[] = [];
  const dir = tempDir();
  try {
    const server = await startDms(dir.path);
    try {
      await writeLog(client(server, await login(server)));
    } finally {
      await server.stop();
    }
    const eventStore = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const events = Number(await eventStore.headPosition());
    await eventStore.close();

    const report = (name: string, figures: RebuildFigures) => {
      const raw = { name: 'raw SQLite inserting as many rows, 1000 per commit', value: rawRate(figures.rows) };
      rows.push({ name, value: perSecond(events, figures.ms), unit: 'events/s' });
      rows.push({ name: '  CPU time per event', value: (figures.cpuMs * 1000) / events, unit: 'µs' });
      rows.push({ name: '  rows written per event', value: figures.rows / events, unit: 'rows' });
      rows.push({
        name: '  rows written per second',
        value: perSecond(figures.rows, figures.ms),
        unit: 'rows/s',
        baseline: raw,
      });
      rows.push({ name: '  bytes written per event (WAL and checkpoints)', value: figures.bytes / events, unit: 'B' });
    };
    report(
      `rebuild every projection (${allProjections.length}) from ${events} events`,
      await rebuildProjections(dir.path),
    );
    const dids = allProjections.filter((projection) => projection.name === 'dids');
    report('rebuild the dids projection alone', await rebuildProjections(dir.path, dids));
  } finally {
    if (process.env.BENCH_KEEP_DIR) console.log(`kept ${dir.path}`);
    else dir.dispose();
  }
  printTable(
    `Rebuild: ${DATASETS} datasets of ${FILES_PER_DATASET} files with replicas, metadata, rules on half of them`,
    rows,
  );
};
