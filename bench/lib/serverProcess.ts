import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export type ServerProcess = Readonly<{
  url: string;
  pid: number;
  /** Peak resident memory of the process so far (VmHWM), in MiB. */
  peakRssMiB(): number;
  /** Current resident memory (VmRSS), in MiB; includes the pages of memory-mapped database files. */
  rssMiB(): number;
  /** Current anonymous resident memory (RssAnon: heaps and buffers, no mapped files), in MiB. */
  anonymousRssMiB(): number;
  stop(): Promise<void>;
}>;

const statusField = (pid: number, field: string): number => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
};

/**
 * Extra Node options for the measured process, space-separated, e.g.
 * `BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/profiles"` to profile it (Node refuses
 * --cpu-prof in NODE_OPTIONS). Default none.
 */
const extraNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * Starts a TypeScript entry point in its own process (so the load generator does not share its
 * event loop) and waits for the log line `{"msg": readyMessage}`; its `url`, if any, is the
 * process's address.
 */
export const startProcess = async (
  entry: string,
  args: string[],
  environment: NodeJS.ProcessEnv,
  readyMessage: string,
): Promise<ServerProcess> => {
  const child: ChildProcess = spawn(
    process.execPath,
    [...extraNodeArgs, '--import', 'tsx', join(ROOT, entry), ...args],
    {
      cwd: ROOT,
      env: { ...process.env, ...environment },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (const line of buffer.split('\n')) {
        if (!line.startsWith('{')) continue;
        const parsed = JSON.parse(line) as { msg?: string; url?: string };
        if (parsed.msg === readyMessage) resolve(parsed.url ?? '');
      }
      buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before it was ready`)));
  });
  // The server's own errors (an answer 500 names only its request id) go to the bench's stderr.
  child.stdout!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (/^\{"level":(50|60),/.test(line)) console.error(line);
  });
  const pid = child.pid!;
  return {
    url,
    pid,
    peakRssMiB: () => statusField(pid, 'VmHWM'),
    rssMiB: () => statusField(pid, 'VmRSS'),
    anonymousRssMiB: () => statusField(pid, 'RssAnon'),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
};

/** `dms serve` without workers (no Redis needed) on a fresh data directory and a free port. */
export const startDms = (dataDir: string, environment: NodeJS.ProcessEnv = {}): Promise<ServerProcess> =>
  startProcess(
    'bin/dms.ts',
    ['serve'],
    { DMS_DATA_DIR: dataDir, PORT: '0', DMS_WORKERS: 'false', DMS_LOG_LEVEL: 'info', ...environment },
    'API listening',
  );
