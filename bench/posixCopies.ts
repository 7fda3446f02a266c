import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Adler32 } from '../infra/transfer/checksums.ts';
import { PosixTransferTool } from '../infra/transfer/posixTransferTool.ts';
import type { TransferJob } from '../infra/transfer/transferTool.ts';
import { printTable, timed, type Row } from './lib/report.ts';
import { tempDir } from './lib/tempDir.ts';

const MIB = 1024 * 1024;
/** BENCH_COPY_TOTAL_MIB: the bytes copied by each contender (default 1024, 1 GiB). */
const TOTAL_MIB = Number(process.env.BENCH_COPY_TOTAL_MIB ?? 1024);
/** BENCH_COPY_FILE_MIB: the size of each file (default 10). */
const FILE_MIB = Number(process.env.BENCH_COPY_FILE_MIB ?? 10);
/** BENCH_COPY_CONCURRENCY: the posix tool's concurrent copies (default 4, the tool's default). */
const CONCURRENCY = Number(process.env.BENCH_COPY_CONCURRENCY ?? 4);

/** BENCH_COPY_CHUNK_KIB: the tool's read and write size (default the tool's own). */
const CHUNK_BYTES = process.env.BENCH_COPY_CHUNK_KIB ? Number(process.env.BENCH_COPY_CHUNK_KIB) * 1024 : undefined;
/** BENCH_COPY_ROUNDS: rounds of cp then the tool; the disk's rate varies, so each figure is a median (default 5). */
const ROUNDS = Math.max(1, Number(process.env.BENCH_COPY_ROUNDS ?? 5));

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const emptied = async (directory: string): Promise<void> => {
  await rm(directory, { recursive: true, force: true });
  await mkdir(directory);
};

/** Submits every job to a fresh posix tool and polls until all are DONE. */
const copyWithTool = async (jobs: readonly TransferJob[]): Promise<void> => {
  const tool = new PosixTransferTool({ concurrency: CONCURRENCY, ...(CHUNK_BYTES ? { chunkBytes: CHUNK_BYTES } : {}) });
  try {
    const submitted = await tool.submit(jobs);
    const ids = submitted.map((job) => job.externalId);
    for (;;) {
      const reports = [...(await tool.poll(ids)).values()];
      const failed = reports.find((report) => report.state === 'FAILED' || report.state === 'LOST');
      if (failed) throw new Error(`a copy failed: ${failed.reason}`);
      if (reports.every((report) => report.state === 'DONE')) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    await tool.close();
  }
};

const run = (command: string, args: readonly string[]): Promise<void> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`))));
  });

/**
 * `posix` tool copies against `cp` of the same files on the same disk, in the same run: random
 * files are written first (their adler32 computed as for the catalogue), then in each round `cp`
 * copies them all (one process) and the tool copies them (submit all, poll until done). The tool verifies
 * adler32 while it streams and fsyncs every file and directory before renaming; `cp` does neither,
 * so it is measured both alone and followed by `sync` of the copies (the same durability; the
 * fair baseline). Sources are read from the page cache by both.
 */
export const runPosixCopies = async (): Promise<void> => {
  const files = Math.max(1, Math.round(TOTAL_MIB / FILE_MIB));
  const fileBytes = FILE_MIB * MIB;
  const totalMb = (files * fileBytes) / 1e6;
  const dir = tempDir();
  try {
    const sourceDir = join(dir.path, 'source_rse');
    const cpDir = join(dir.path, 'cp_rse');
    const toolDir = join(dir.path, 'posix_rse');
    for (const directory of [sourceDir, cpDir, toolDir]) mkdirSync(directory);

    const jobs: TransferJob[] = [];
    for (let index = 0; index < files; index += 1) {
      const name = `file.${index}`;
      const content = randomBytes(fileBytes);
      writeFileSync(join(sourceDir, name), content);
      jobs.push({
        requestId: `bench-${index}`,
        file: { scope: 'bench', name, bytes: fileBytes, adler32: new Adler32().update(content).digest(), md5: null },
        sources: [{ rse: 'SOURCE_RSE', rseId: 'source', pfn: `file://localhost${sourceDir}/${name}`, root: sourceDir }],
        destination: {
          rse: 'POSIX_RSE',
          rseId: 'posix',
          pfn: `file://localhost${toolDir}/bench/${name}`,
          root: toolDir,
        },
        activity: 'Benchmark',
        priority: 3,
        attributes: {},
      });
    }
    const sourcePaths = jobs.map((job) => join(sourceDir, job.file.name));

    const cpAlone: number[] = [];
    const cpDurable: number[] = [];
    const tool: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      // Each contender starts with no dirty pages of the other's and an empty destination.
      await emptied(cpDir);
      await run('sync', []);
      const cpMs = await timed(() => run('cp', [...sourcePaths, cpDir]));
      const syncMs = await timed(() =>
        run(
          'sync',
          jobs.map((job) => join(cpDir, job.file.name)),
        ),
      );
      cpAlone.push(totalMb / (cpMs / 1000));
      cpDurable.push(totalMb / ((cpMs + syncMs) / 1000));

      await emptied(toolDir);
      await run('sync', []);
      tool.push(totalMb / ((await timed(() => copyWithTool(jobs))) / 1000));
    }

    const cpBaseline = { name: 'cp (no fsync)', value: median(cpAlone) };
    const durableBaseline = { name: 'cp + sync', value: median(cpDurable) };
    const rows: Row[] = [
      { ...cpBaseline, unit: 'MB/s' },
      { name: 'cp + sync of the copies', value: durableBaseline.value, unit: 'MB/s', baseline: cpBaseline },
      {
        name: `posix tool, ${CONCURRENCY} copies at once, adler32 + fsync`,
        value: median(tool),
        unit: 'MB/s',
        baseline: durableBaseline,
      },
      { name: '  the same, against cp without fsync', value: median(tool), unit: 'MB/s', baseline: cpBaseline },
      // Rounds are paired (the tool runs right after cp), so a disk that slows down for a while moves both.
      {
        name: 'posix tool / (cp + sync) within a round, median',
        value: median(tool.map((rate, round) => (100 * rate) / cpDurable[round]!)),
        unit: '%',
      },
    ];
    printTable(
      `Posix copies: ${files} files of ${FILE_MIB} MiB (${(totalMb / 1000).toFixed(2)} GB) on one disk, median of ${ROUNDS} rounds`,
      rows,
    );
    console.log(
      `  rounds, MB/s: cp ${cpAlone.map(Math.round).join(' ')}; cp + sync ${cpDurable.map(Math.round).join(' ')}; posix tool ${tool.map(Math.round).join(' ')}`,
    );
  } finally {
    dir.dispose();
  }
};
