import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { dmsCommand } from '../dmsCommand.ts';
import { isAlive, killHard, until } from './processTree.ts';

/**
 * One `dms` process of a deployment under the kill matrix: started with exactly the environment
 * given (no REDIS_URL inherited from the test run: a `dms serve` must start its own
 * redis-server), its log appended to `logFile` for the post-mortem, and its JSON log lines
 * watched for the messages a round waits on.
 */
export type DmsProcess = Readonly<{
  pid: number;
  /** The URL its `API listening` line gave, if any. */
  url: string;
  /** Resolves with the first log line whose `msg` is `message` from now on or already seen; bounded. */
  logged(message: string, timeoutMs: number): Promise<Record<string, unknown>>;
  /** How many log lines had `msg` equal to `message` so far. */
  count(message: string): number;
  kill(): Promise<void>;
  /** SIGTERM, then waits for the exit (SIGKILL after 30 s). */
  stop(): Promise<void>;
}>;

/** The environment of a child: this process's, without REDIS_URL, plus `environment`. */
export const childEnvironment = (environment: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const { REDIS_URL: _redis, ...inherited } = process.env;
  return { ...inherited, ...environment };
};

export const startDmsProcess = async (
  args: readonly string[],
  environment: Readonly<Record<string, string>>,
  readyMessage: string,
  logFile: string,
  options: Readonly<{ timeoutMs?: number; root?: string }> = {},
): Promise<DmsProcess> => {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const command = dmsCommand(options.root);
  const child: ChildProcess = spawn(command.command, [...command.args, ...args], {
    ...(options.root ? { cwd: options.root } : {}),
    env: childEnvironment({ DMS_LOG_FORMAT: 'json', ...environment }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: WriteStream = createWriteStream(logFile, { flags: 'a' });
  log.write(`--- ${new Date().toISOString()} dms ${args.join(' ')} (pid ${child.pid})\n`);
  const seen = new Map<string, Record<string, unknown>>();
  const counts = new Map<string, number>();
  const waiting = new Set<{ message: string; resolve: (line: Record<string, unknown>) => void }>();
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    log.write(chunk);
    buffer += chunk.toString();
    const end = buffer.lastIndexOf('\n');
    if (end === -1) return;
    for (const text of buffer.slice(0, end).split('\n')) {
      if (!text.startsWith('{')) continue;
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      const message = typeof line.msg === 'string' ? line.msg : undefined;
      if (!message) continue;
      if (!seen.has(message)) seen.set(message, line);
      counts.set(message, (counts.get(message) ?? 0) + 1);
      for (const waiter of [...waiting])
        if (waiter.message === message) {
          waiting.delete(waiter);
          waiter.resolve(line);
        }
    }
    buffer = buffer.slice(end + 1);
  });
  child.stderr!.on('data', (chunk: Buffer) => log.write(chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => log.end());

  const logged = (message: string, waitMs: number): Promise<Record<string, unknown>> => {
    const already = seen.get(message);
    if (already) return Promise.resolve(already);
    return new Promise((resolve, reject) => {
      const waiter = { message, resolve };
      const timer = setTimeout(() => {
        waiting.delete(waiter);
        reject(new Error(`dms ${args.join(' ')} did not log '${message}' within ${waitMs} ms (see ${logFile})`));
      }, waitMs);
      waiter.resolve = (line) => {
        clearTimeout(timer);
        resolve(line);
      };
      waiting.add(waiter);
      void exited.then((code) => {
        if (!waiting.has(waiter)) return;
        waiting.delete(waiter);
        clearTimeout(timer);
        reject(new Error(`dms ${args.join(' ')} exited (${code}) before logging '${message}' (see ${logFile})`));
      });
    });
  };

  const ready = await logged(readyMessage, timeoutMs);
  const pid = child.pid!;
  return {
    pid,
    url: typeof ready.url === 'string' ? ready.url : '',
    logged,
    count: (message) => counts.get(message) ?? 0,
    kill: () => killHard(pid),
    stop: async () => {
      if (!isAlive(pid)) return;
      child.kill('SIGTERM');
      try {
        await until(() => !isAlive(pid), 30_000, `dms ${args.join(' ')} stopped`);
      } catch {
        await killHard(pid);
      }
      await exited;
    },
  };
};
