import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dmsCommand } from './dmsCommand.ts';

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
 * Starts an entry point in its own process (so the load generator does not share its
 * event loop) and waits for the log line `{"msg": readyMessage}`; its `url`, if any, is the
 * process's address. `root` is the tree the entry point is taken from (by default this one; a
 * benchmark may run an older tree's server as its baseline).
 */
export const startProcess = async (
  entry: string,
  args: string[],
  environment: NodeJS.ProcessEnv,
  readyMessage: string,
  root: string = ROOT,
): Promise<ServerProcess> => {
  // `dms` itself runs compiled when the build is current (lib/dmsCommand.ts); other entry points from sources.
  const dms = entry === 'bin/dms.ts' ? dmsCommand(root, extraNodeArgs) : undefined;
  const child: ChildProcess = spawn(
    process.execPath,
    [...(dms ? dms.args : [...extraNodeArgs, '--import', 'tsx', join(root, entry)]), ...args],
    {
      cwd: root,
      env: { ...process.env, ...environment },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let buffer = '';
  let onData: ((chunk: Buffer) => void) | undefined;
  const url = await new Promise<string>((resolve, reject) => {
    onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const end = buffer.lastIndexOf('\n');
      // Only whole lines: a line may arrive in pieces, and the workers of a cluster share the pipe.
      for (const line of buffer.slice(0, end + 1).split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const parsed = JSON.parse(line) as { msg?: string; url?: string };
          if (parsed.msg === readyMessage) resolve(parsed.url ?? '');
        } catch {
          // Not a log line of ours.
        }
      }
      buffer = buffer.slice(end + 1);
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before it was ready`)));
  });
  // Once ready, the server's log is drained unread: parsing it would load the measuring process.
  // BENCH_SERVER_LOG names a file it is appended to instead, to find why a server answered 500.
  child.stdout!.off('data', onData!);
  if (process.env.BENCH_SERVER_LOG) child.stdout!.pipe(createWriteStream(process.env.BENCH_SERVER_LOG, { flags: 'a' }));
  else child.stdout!.resume();
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
