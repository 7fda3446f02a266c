import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { deterministicPath } from '../domain/rse/lfn2pfn.ts';
import { client, expectStatus, login, type Call } from './lib/httpClient.ts';
import { perSecond, printTable, timed, type Row } from './lib/report.ts';
import { startProcess, type ServerProcess } from './lib/serverProcess.ts';
import { tempDir } from './lib/tempDir.ts';
import { processCpuMs, waitFor } from './lib/waiting.ts';

/**
 * The reaper at scale, through one `dms serve` with its workers: BENCH_DELETIONS (default 100 000)
 * obsolete replicas of small files (100 bytes) on one `posix` RSE, in closed datasets of 1 000,
 * deleted from disk and catalogue (with the cleanup: each file and then each dataset deleted), in
 * chunks of BENCH_DELETION_CHUNK (default 1 000). The clock starts when deletion is allowed on
 * the RSE and stops when its catalogue counter is at zero; then nothing may be left on disk.
 *
 * Beside it, in the same run: the same number of replicas on an RSE with Rucio's mock protocol
 * (the catalogue alone, nothing on disk), and `rm -r` of the same number of files laid out the
 * same way, alone and with `sync` after it (the reaper flushes each directory it deleted in, so
 * its deletions survive a power cut before the catalogue forgets the replicas).
 */

const DELETIONS = Number(process.env.BENCH_DELETIONS ?? 100_000);
const CHUNK = Number(process.env.BENCH_DELETION_CHUNK ?? 1_000);
const DATASET_SIZE = 1_000;
const SCOPE = 'bench';
const CONTENT = 'x'.repeat(100);

const countFiles = (directory: string): number => {
  let count = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) if (entry.isFile()) count += 1;
  return count;
};

/** Writes the files at their deterministic paths under `prefix` (when given) and returns their names. */
const layOut = (prefix: string | null, label: string, from: number, count: number): string[] => {
  const names = Array.from({ length: count }, (_, index) => `${label}.${from + index}`);
  if (prefix !== null) {
    for (const name of names) {
      const path = join(prefix, deterministicPath(SCOPE, name));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, CONTENT);
    }
  }
  return names;
};

/** An RSE whose new replicas get an obsolete tombstone (Rucio's negative `tombstone_delay`), deletion blocked until the clock starts. */
const addRse = async (call: Call, rse: string, protocol: Record<string, unknown>) => {
  expectStatus(await call('POST', `/rses/${rse}`, { availability_delete: false }), 201, `RSE ${rse}`);
  expectStatus(
    await call('POST', `/rses/${rse}/protocols/${protocol.scheme as string}`, protocol),
    201,
    `protocol of ${rse}`,
  );
  expectStatus(
    await call('POST', `/rses/${rse}/attr/tombstone_delay`, { value: '-1' }),
    201,
    `tombstone_delay of ${rse}`,
  );
};

const DOMAINS = {
  lan: { read: 1, write: 1, delete: 1 },
  wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
};

const catalogueFiles = async (call: Call, rse: string): Promise<number> => {
  const response = await call('GET', `/rses/${rse}/usage?source=rucio`);
  expectStatus(response, 200, 'usage');
  const [line] = response.text.split('\n').filter(Boolean);
  return line ? (JSON.parse(line) as { files: number }).files : 0;
};

/** Registers the files in closed datasets on the RSE, writing them on disk under `prefix` first. */
const register = async (
  call: Call,
  rse: string,
  label: string,
  prefix: string | null,
  count: number,
): Promise<void> => {
  for (let start = 0; start < count; start += DATASET_SIZE) {
    const names = layOut(prefix, label, start, Math.min(DATASET_SIZE, count - start));
    const dataset = `${label}.ds.${start / DATASET_SIZE}`;
    expectStatus(await call('POST', '/dids', [{ scope: SCOPE, name: dataset, type: 'DATASET' }]), 201, 'dataset');
    const dids = names.map((name) => ({ scope: SCOPE, name, bytes: CONTENT.length, adler32: '0cc737eb' }));
    expectStatus(await call('POST', `/dids/${SCOPE}/${dataset}/dids`, { rse, dids }), 201, 'attach with replicas');
    expectStatus(await call('PUT', `/dids/${SCOPE}/${dataset}/status`, { open: false }), 200, 'close');
  }
};

/** Allows deletion on the RSE and times the reaper until the catalogue counter reaches zero. */
const reap = async (server: ServerProcess, call: Call, rse: string): Promise<{ ms: number; cpu: number }> => {
  const cpuBefore = processCpuMs(server.pid);
  const ms = await timed(async () => {
    expectStatus(await call('PUT', `/rses/${rse}`, { availability_delete: true }), 201, 'allow deletion');
    await waitFor(`${rse} emptied`, async () => (await catalogueFiles(call, rse)) === 0, 100, 3_600_000);
  });
  return { ms, cpu: processCpuMs(server.pid) - cpuBefore };
};

type Rate = Readonly<{ name: string; value: number }>;

export type DeletionFigures = Readonly<{
  /** `rm -r` of as many files laid out the same way, files/s; and with `sync` after it. */
  rm: Rate;
  rmSynced: Rate;
  /** The catalogue alone (mock protocol), when asked for. */
  mock?: Readonly<{ ms: number; cpuMs: number }>;
  /** Files from disk, then the catalogue (posix protocol). */
  posix: Readonly<{ ms: number; cpuMs: number }>;
}>;

/**
 * Times `rm -r` of `count` files, then starts its own `dms serve` with every worker and times its
 * reaper deleting `count` obsolete replicas on a posix RSE (and first on a mock RSE, when `mock`).
 */
export const measureDeletion = async (count: number, options: { mock: boolean }): Promise<DeletionFigures> => {
  const dir = tempDir();
  let server: ServerProcess | undefined;
  try {
    // rm of the same files, the same layout, then sync: what deleting them costs the file system.
    const baselineTree = join(dir.path, 'rm-baseline');
    for (let start = 0; start < count; start += DATASET_SIZE)
      layOut(baselineTree, 'rm', start, Math.min(DATASET_SIZE, count - start));
    execFileSync('sync');
    const rmMs = await timed(() => execFileSync('rm', ['-r', baselineTree]));
    const syncMs = await timed(() => execFileSync('sync'));
    const rm = { name: 'rm -r', value: perSecond(count, rmMs) };
    const rmSynced = { name: 'rm -r and sync', value: perSecond(count, rmMs + syncMs) };

    const storage = join(dir.path, 'storage');
    server = await startProcess(
      'bin/dms.ts',
      ['serve'],
      { DMS_DATA_DIR: join(dir.path, 'data'), PORT: '0', DMS_LOG_LEVEL: 'info' },
      'API listening',
    );
    const call = client(server, await login(server));
    expectStatus(await call('POST', '/config', { reaper: { interval: 1, chunk_size: CHUNK } }), 201, 'config');
    expectStatus(await call('POST', `/scopes/root/${SCOPE}`), 201, 'scope');
    await addRse(call, 'BENCH_POSIX', {
      scheme: 'file',
      hostname: 'localhost',
      port: 0,
      prefix: storage,
      impl: 'rucio.rse.protocols.posix.Default',
      domains: DOMAINS,
    });
    let mock: DeletionFigures['mock'];
    if (options.mock) {
      await addRse(call, 'BENCH_MOCK', {
        scheme: 'mock',
        hostname: 'mock.example.org',
        port: 0,
        prefix: '/data',
        impl: 'rucio.rse.protocols.mock.Default',
        domains: DOMAINS,
      });
      await register(call, 'BENCH_MOCK', 'mock', null, count);
      const reaped = await reap(server, call, 'BENCH_MOCK');
      mock = { ms: reaped.ms, cpuMs: reaped.cpu };
    }

    // Rucio's posix layout is scope/md5[0:2]/md5[2:4]/name; the files below are written there.
    await register(call, 'BENCH_POSIX', 'posix', storage, count);
    const onDiskBefore = countFiles(storage);
    const files = await reap(server, call, 'BENCH_POSIX');
    const left = countFiles(storage);
    if (left !== 0) throw new Error(`${left} of ${onDiskBefore} files left on disk`);
    return { rm, rmSynced, ...(mock ? { mock } : {}), posix: { ms: files.ms, cpuMs: files.cpu } };
  } finally {
    await server?.stop();
    dir.dispose();
  }
};

export const runDeletionBenchmark = async (): Promise<void> => {
  const rows: Row[] = [];
  const { rm, rmSynced, mock, posix } = await measureDeletion(DELETIONS, { mock: true });
  rows.push({
    name: `${DELETIONS} replicas, mock protocol: the catalogue alone (replica, file, and datasets deleted)`,
    value: perSecond(DELETIONS, mock!.ms),
    unit: 'replicas/s',
  });
  rows.push({ name: '  server CPU time per replica (every thread)', value: mock!.cpuMs / DELETIONS, unit: 'ms' });
  rows.push({
    name: `${DELETIONS} replicas on posix: files from disk, then the catalogue`,
    value: perSecond(DELETIONS, posix.ms),
    unit: 'replicas/s',
    baseline: rm,
  });
  rows.push({ name: '  the same in time', value: posix.ms, unit: 'ms' });
  rows.push({ name: '  server CPU time per replica (every thread)', value: posix.cpuMs / DELETIONS, unit: 'ms' });
  rows.push({
    name: '  the same beside rm -r and sync',
    value: perSecond(DELETIONS, posix.ms),
    unit: 'replicas/s',
    baseline: rmSynced,
  });
  rows.push({ ...rm, unit: 'files/s' });
  rows.push({ ...rmSynced, unit: 'files/s' });
  printTable(`Deletion: the reaper, ${DELETIONS} obsolete replicas, chunks of ${CHUNK}`, rows);
};
