import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { startDmsProcess, type DmsProcess } from './dmsProcess.ts';
import { apiWorkersOf, isAlive, killHard, privateRedisPort, redisServerOnPort, until } from './processTree.ts';
import { ROOT_PASSWORD, ROOT_USERNAME } from './rootClient.ts';
import { freeLoopbackPort } from '../../../infra/freePort.ts';

/** The kinds of process the matrix kills: a `dms serve` cluster's, and a split deployment's. */
export type KillKind = 'primary' | 'api-worker' | 'redis-server' | 'api' | 'projector' | 'worker';

/** What came back after a kill, and how: by the service itself, or started again by the operator. */
export type Recovery = Readonly<{ how: string; ms: number }>;

export type Deployment = Readonly<{
  name: string;
  kinds: readonly KillKind[];
  /** The API's address now (it moves when the process serving it starts again). */
  url(): string;
  start(): Promise<void>;
  /** SIGKILL of one process of that kind. */
  kill(kind: KillKind): Promise<void>;
  /** Brings the killed process back as an operator would (or waits for the service to). */
  recover(kind: KillKind): Promise<Recovery>;
  stop(): Promise<void>;
}>;

/** Generous bounds for a busy machine: they bound a hang, never measure. */
const START_MS = 180_000;
const RESPAWN_MS = 60_000;

const baseEnvironment = (dataDir: string, extra: Record<string, string>): Record<string, string> => ({
  DMS_DATA_DIR: dataDir,
  PORT: '0',
  DMS_LOG_LEVEL: 'info',
  DMS_ROOT_USERNAME: ROOT_USERNAME,
  DMS_ROOT_PASSWORD: ROOT_PASSWORD,
  // A killed process's job is taken over after this, not BullMQ's 30 s.
  DMS_JOB_LOCK_SECONDS: '5',
  ...extra,
});

/**
 * `dms serve` as `npm start` runs it on a machine of two cores or more: a primary (event log,
 * projections on their thread, the daemons, a private redis-server) and `apiWorkers` API worker
 * processes sharing its port.
 */
export const serveDeployment = (
  runDir: string,
  options: Readonly<{ apiWorkers?: number; environment?: Record<string, string>; root?: string }> = {},
): Deployment => {
  const dataDir = join(runDir, 'data');
  const redis = (): number | undefined => {
    const port = privateRedisPort(dataDir);
    return port === undefined ? undefined : redisServerOnPort(port);
  };
  const workers = options.apiWorkers ?? 2;
  const environment = baseEnvironment(dataDir, { DMS_API_WORKERS: String(workers), ...options.environment });
  const logFile = join(runDir, 'serve.log');
  let primary: DmsProcess | undefined;
  const start = async () => {
    primary = await startDmsProcess(['serve'], environment, 'API listening', logFile, {
      timeoutMs: START_MS,
      ...(options.root ? { root: options.root } : {}),
    });
    await primary.logged('started', START_MS);
  };
  const restartAll = async (): Promise<void> => {
    if (primary) await primary.kill();
    await until(() => redis() === undefined, RESPAWN_MS, 'the private redis-server gone');
    await start();
  };
  return {
    name: 'serve',
    kinds: ['primary', 'api-worker', 'redis-server'],
    url: () => primary?.url ?? 'http://127.0.0.1:1',
    start,
    async kill(kind) {
      const pid = primary!.pid;
      if (kind === 'primary') {
        await killHard(pid);
        // Its API workers end with it, and its redis-server's watchdog stops the server.
        await until(() => apiWorkersOf(pid).length === 0, RESPAWN_MS, 'the API workers gone');
        await until(() => redis() === undefined, RESPAWN_MS, 'the private redis-server gone');
      } else if (kind === 'api-worker') {
        const [worker] = apiWorkersOf(pid);
        if (worker === undefined) throw new Error('no API worker to kill');
        await killHard(worker);
      } else if (kind === 'redis-server') {
        const pid = redis();
        if (pid === undefined) throw new Error('no private redis-server to kill');
        await killHard(pid);
      } else throw new Error(`a serve deployment has no ${kind}`);
    },
    async recover(kind) {
      const began = Date.now();
      if (kind === 'primary') {
        await start();
        return { how: 'dms serve started again', ms: Date.now() - began };
      }
      if (kind === 'api-worker') {
        const listened = primary!.count('API worker listening');
        await until(
          () => apiWorkersOf(primary!.pid).length === workers && primary!.count('API worker listening') > listened,
          RESPAWN_MS,
          'the API worker started again by the primary',
        );
        return { how: 'the primary forked another', ms: Date.now() - began };
      }
      try {
        await until(() => redis() !== undefined, RESPAWN_MS, 'the private redis-server again');
        return { how: 'dms serve started its redis-server again', ms: Date.now() - began };
      } catch {
        await restartAll();
        return { how: 'NOT restarted by the service: dms serve killed and started again', ms: Date.now() - began };
      }
    },
    stop: async () => {
      await primary?.stop();
      await until(() => redis() === undefined, RESPAWN_MS, 'the private redis-server gone').catch(() => undefined);
    },
  };
};

const answersPing = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => finish(data.toString().startsWith('+PONG')));
  });

/**
 * The scaled-out deployment: a redis-server of the operator's (append-only file, fsync every
 * second, as docs/operations.md advises), `dms projector`, `dms api` and `dms worker` on one data
 * directory, each a process the matrix kills and starts again.
 */
export const splitDeployment = (
  runDir: string,
  options: Readonly<{ environment?: Record<string, string>; root?: string }> = {},
): Deployment => {
  const dataDir = join(runDir, 'data');
  const redisDir = join(runDir, 'redis');
  mkdirSync(redisDir, { recursive: true });
  let port = 0;
  let environment: Record<string, string> = {};
  const processes: Partial<Record<'api' | 'projector' | 'worker', DmsProcess>> = {};
  const ready = { api: 'API listening', projector: 'projections running', worker: 'daemon roles running' } as const;
  const startRedis = async () => {
    const child = spawn(
      'redis-server',
      [
        ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', redisDir],
        ...['--appendonly', 'yes', '--appendfsync', 'everysec'],
      ],
      { stdio: 'ignore', detached: true },
    );
    child.unref();
    await until(() => answersPing(port), START_MS, 'the redis-server answering');
  };
  const startRole = async (role: 'api' | 'projector' | 'worker') => {
    processes[role] = await startDmsProcess([role], environment, ready[role], join(runDir, `${role}.log`), {
      timeoutMs: START_MS,
      ...(options.root ? { root: options.root } : {}),
    });
  };
  const deployment: Deployment = {
    name: 'split',
    kinds: ['worker', 'projector', 'redis-server', 'api'],
    url: () => processes.api?.url ?? 'http://127.0.0.1:1',
    async start() {
      port = await freeLoopbackPort();
      environment = baseEnvironment(dataDir, {
        REDIS_URL: `redis://127.0.0.1:${port}`,
        DMS_QUEUE_PREFIX: 'killmatrix',
        ...options.environment,
      });
      await startRedis();
      await startRole('projector');
      await startRole('api');
      await startRole('worker');
    },
    async kill(kind) {
      if (kind === 'redis-server') {
        const pid = redisServerOnPort(port);
        if (pid === undefined) throw new Error('no redis-server to kill');
        await killHard(pid);
      } else if (kind === 'api' || kind === 'projector' || kind === 'worker') await processes[kind]!.kill();
      else throw new Error(`a split deployment has no ${kind}`);
    },
    async recover(kind) {
      const began = Date.now();
      if (kind === 'redis-server') await startRedis();
      else if (kind === 'api' || kind === 'projector' || kind === 'worker') await startRole(kind);
      return { how: `${kind} started again`, ms: Date.now() - began };
    },
    async stop() {
      for (const role of ['api', 'worker', 'projector'] as const) await processes[role]?.stop();
      const pid = redisServerOnPort(port);
      if (pid !== undefined) await killHard(pid);
      await until(() => pid === undefined || !isAlive(pid), RESPAWN_MS, 'the redis-server gone').catch(() => undefined);
    },
  };
  return deployment;
};
