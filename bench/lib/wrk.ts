import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type WrkResult = Readonly<{
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  failures: number;
}>;

export type WrkOptions = Readonly<{
  url: string;
  path: string;
  connections: number;
  durationSeconds: number;
  headers?: Readonly<Record<string, string>>;
  /** A POST to `path` + a name unique per request (wrk's Lua: thread number and counter), with this body. */
  postUnique?: { body: string; prefix: string };
}>;

/**
 * wrk, the HTTP load generator written in C (Debian's `wrk`): it costs the measured server far
 * less CPU than a Node client would, so on two cores it lets a server reach its own limit. As
 * root on Debian it is installed when missing (as bin/ensure-redis.sh does redis-server);
 * otherwise `available` is false and the benchmarks fall back to the house client (lib/load.ts).
 */
export const wrkAvailable = (): boolean => {
  if (spawnSync('wrk', ['--version']).error === undefined) return true;
  if (process.getuid?.() !== 0 || spawnSync('apt-get', ['--version']).error !== undefined) return false;
  console.log('  (installing wrk with apt-get)');
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'wrk'], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: 'ignore',
    }).status === 0;
  if (!install()) {
    spawnSync('apt-get', ['update'], { stdio: 'ignore' });
    if (!install()) return false;
  }
  return spawnSync('wrk', ['--version']).error === undefined;
};

/**
 * Runs wrk with two threads (one per core of the development machine) and reads its summary
 * from a Lua `done` hook: requests, latency percentiles, non-2xx answers and socket errors.
 */
export const runWrk = async (options: WrkOptions): Promise<WrkResult> => {
  const dir = mkdtempSync(join(tmpdir(), 'dms-wrk-'));
  const script = join(dir, 'bench.lua');
  const headers = Object.entries(options.headers ?? {})
    .map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
    .join('\n');
  const post = options.postUnique
    ? `
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format("POST", ${JSON.stringify(options.path)} .. ${JSON.stringify(options.postUnique.prefix)} .. tid .. "x" .. counter, nil, ${JSON.stringify(options.postUnique.body)})
end`
    : '';
  writeFileSync(
    script,
    `${headers}
${post}
done = function(summary, latency, requests)
  local failures = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout
  io.write(string.format("RESULT %d %f %f %f %d\\n", summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), failures))
end
`,
  );
  try {
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        'wrk',
        [
          '-t2',
          `-c${options.connections}`,
          `-d${options.durationSeconds}s`,
          '-s',
          script,
          new URL(options.postUnique ? '/' : options.path, options.url).href,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}`))));
    });
    const match = /RESULT (\d+) ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(output);
    if (!match) throw new Error(`wrk printed no summary:\n${output}`);
    const [, requests, durationUs, p50Us, p99Us, failures] = match.map(Number);
    return {
      requests: requests!,
      perSecond: requests! / (durationUs! / 1e6),
      p50Ms: p50Us! / 1000,
      p99Ms: p99Us! / 1000,
      failures: failures!,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** CPU seconds (user + system) a process and its children used so far, from /proc. */
export const cpuSeconds = (pid: number): number => {
  const pids = [pid, ...childrenOf(pid)];
  const ticks = pids.reduce((sum, one) => {
    try {
      const fields = readFileSync(`/proc/${one}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return sum + Number(fields[11]) + Number(fields[12]);
    } catch {
      return sum;
    }
  }, 0);
  return ticks / 100;
};

const childrenOf = (pid: number): number[] => {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((child) => child > 0);
  } catch {
    // ps exits with 1 when there are none.
    return [];
  }
};
