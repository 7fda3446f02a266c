import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createConnection } from 'node:net';
import { errorMessage } from '../typeGuards.ts';
import { EnvironmentError } from '../environmentError.ts';
import { freeLoopbackPort } from '../freePort.ts';

export type PrivateRedisServer = Readonly<{
  url: string;
  port: number;
  stop(): Promise<void>;
}>;

/** What a supervised server says when it died and when it is back (or could not come back). */
export type RedisSupervision = Readonly<{
  onExit(exit: Readonly<{ code: number | null; signal: NodeJS.Signals | null; restartInMs: number }>): void;
  onRestart(): void;
  onRestartFailed(error: unknown): void;
}>;

export type PrivateRedisOptions = Readonly<{
  /** Keep an append-only file here so queued jobs survive a restart; omit for a throw-away server. */
  persistenceDir?: string;
  /** Give up waiting for the server to answer PING after this long; default 10 s. */
  startTimeoutMs?: number;
  /**
   * Start it again, on the same port and files, whenever it dies (killed, crashed), after a pause
   * that grows while it keeps dying young; default: a server that dies stays dead.
   */
  supervise?: RedisSupervision;
}>;

export class RedisServerMissingError extends EnvironmentError {
  constructor() {
    super(
      'redis-server was not found on the PATH. Install it (Debian/Ubuntu: `sudo apt-get install -y redis-server`), ' +
        'or set REDIS_URL to a Redis server you already run.',
    );
    this.name = 'RedisServerMissingError';
  }
}

/** Pauses before a supervised server that died is started again. */
const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 10_000;
const STABLE_AFTER_MS = 60_000;

/**
 * Starts a private redis-server on a free loopback port, in the foreground, as a child of this
 * process. A small shell watchdog sits between us and redis-server: it reads our stdin pipe and
 * stops redis-server when the pipe closes, so the server also goes away when this process is
 * killed without a chance to clean up; and it exits when redis-server does, so that a supervised
 * server that died (`supervise`) is seen and started again on the same port, from its files.
 */
export const startPrivateRedisServer = async (options: PrivateRedisOptions = {}): Promise<PrivateRedisServer> => {
  if (spawnSync('redis-server', ['--version']).error) throw new RedisServerMissingError();

  const port = await freeLoopbackPort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--protected-mode', 'yes'];
  if (options.persistenceDir) {
    mkdirSync(options.persistenceDir, { recursive: true });
    args.push('--dir', options.persistenceDir, '--appendonly', 'yes', '--appendfsync', 'everysec');
  } else {
    args.push('--appendonly', 'no');
  }
  let child = await spawnWatched(args, port, options.startTimeoutMs ?? 10_000);
  let stopping = false;
  let restartDelayMs = FIRST_RESTART_DELAY_MS;
  let startedAt = Date.now();
  const supervise = options.supervise;
  const watch = (watched: ChildProcess) =>
    watched.once('exit', (code, signal) => {
      if (stopping || !supervise) return;
      if (Date.now() - startedAt >= STABLE_AFTER_MS) restartDelayMs = FIRST_RESTART_DELAY_MS;
      const delay = restartDelayMs;
      restartDelayMs = Math.min(restartDelayMs * 2, MAX_RESTART_DELAY_MS);
      supervise.onExit({ code, signal, restartInMs: delay });
      const restart = () => {
        if (stopping) return;
        spawnWatched(args, port, options.startTimeoutMs ?? 10_000).then(
          (started) => {
            if (stopping) {
              void stopChild(started);
              return;
            }
            child = started;
            startedAt = Date.now();
            watch(started);
            supervise.onRestart();
          },
          (error: unknown) => {
            supervise.onRestartFailed(error);
            const next = restartDelayMs;
            restartDelayMs = Math.min(restartDelayMs * 2, MAX_RESTART_DELAY_MS);
            setTimeout(restart, next).unref();
          },
        );
      };
      setTimeout(restart, delay).unref();
    });
  watch(child);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => {
      stopping = true;
      return stopChild(child);
    },
  };
};

/** Starts the watchdog and its redis-server, and waits until the server answers PING. */
const spawnWatched = async (args: readonly string[], port: number, timeoutMs: number): Promise<ChildProcess> => {
  // redis-server in the background; a reader of our pipe stops it when the pipe closes; the shell
  // itself waits for redis-server and exits with it.
  // (A background job's stdin is /dev/null unless redirected: the reader reads our pipe as fd 3.)
  const watchdog = [
    'exec 3<&0',
    'redis-server "$@" 3<&- </dev/null & child=$!',
    '(read _line <&3; kill "$child" 2>/dev/null) & reader=$!',
    'wait "$child"; status=$?',
    'kill "$reader" 2>/dev/null',
    'exit $status',
  ].join('; ');
  const child = spawn('sh', ['-c', watchdog, 'redis-watchdog', ...args], {
    stdio: ['pipe', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    await waitForPong(port, timeoutMs, child);
  } catch (error) {
    await stopChild(child);
    throw new Error(`redis-server did not start on port ${port}: ${errorMessage(error)} ${stderr}`.trim(), {
      cause: error,
    });
  }
  return child;
};

const stopChild = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin?.end();
  const timer = setTimeout(() => {
    // The watchdog did not stop redis in time: kill the whole process group.
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 5000);
  await exited;
  clearTimeout(timer);
};

const waitForPong = async (port: number, timeoutMs: number, child: ChildProcess): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}`);
    if (await ping(port)) return;
    if (Date.now() > deadline) throw new Error('no answer to PING');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

const ping = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => finish(data.toString().startsWith('+PONG')));
  });
