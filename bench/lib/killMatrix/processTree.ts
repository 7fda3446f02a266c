import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../waiting.ts';

/**
 * The processes of a deployment as /proc shows them, for the kill matrix: a `dms serve`'s API
 * workers are its children, its private redis-server a grandchild (behind a shell watchdog).
 */

/** Whether a process with this id exists (and is not a zombie). */
export const isAlive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command's closing parenthesis: Z is a zombie, X dead.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
};

type ProcessEntry = Readonly<{ pid: number; ppid: number; commandLine: readonly string[] }>;

const processes = (): ProcessEntry[] =>
  readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (fields[0] === 'Z') return [];
      return [{ pid: Number(entry), ppid: Number(fields[1]), commandLine }];
    } catch {
      return [];
    }
  });

/** The live children of a process. */
export const childrenOf = (pid: number): ProcessEntry[] => processes().filter((entry) => entry.ppid === pid);

/**
 * The live redis-server listening on `port` on the loopback, if any. redis-server rewrites its
 * command line to its title (`redis-server 127.0.0.1:<port>`), so the port is what finds it.
 */
export const redisServerOnPort = (port: number): number | undefined =>
  processes().find((entry) => {
    const line = entry.commandLine.join(' ');
    return line.startsWith('redis-server') && new RegExp(`:${port}(\\s|$)`).test(line);
  })?.pid;

/** The port of the private redis-server of a `dms serve` on `dataDir` (from the address it records), if any. */
export const privateRedisPort = (dataDir: string): number | undefined => {
  try {
    const url = readFileSync(join(dataDir, 'redis', 'url'), 'utf8').trim();
    return Number(new URL(url).port) || undefined;
  } catch {
    return undefined;
  }
};

/** The API workers of a `dms serve` cluster: its node children. */
export const apiWorkersOf = (primary: number): number[] =>
  childrenOf(primary)
    .filter((entry) => entry.commandLine[0]?.endsWith('node') === true || entry.commandLine[0] === process.execPath)
    .map((entry) => entry.pid);

/** SIGKILL, then waits (bounded) until the process is gone. */
export const killHard = async (pid: number, timeoutMs = 30_000): Promise<void> => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  await until(() => !isAlive(pid), timeoutMs, `process ${pid} gone after SIGKILL`);
};

/** Waits until `condition` holds, looking every 50 ms; throws naming `what` after `timeoutMs`. */
export const until = (condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> =>
  waitFor(what, condition, 50, timeoutMs);
