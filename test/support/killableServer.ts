import { expect } from 'chai';
import { startProcess, type ServerProcess } from '../../bench/lib/serverProcess.ts';
import { uniqueName } from './events.ts';
import { eventually } from './eventually.ts';
import { request, type HttpResponse, type RequestOptions } from './http.ts';

const ROOT_USERNAME = 'crashroot';
const ROOT_PASSWORD = 'crash-secret';

/** Calls the server as root with the token of the last start. */
export type RootCall = (method: string, path: string, options?: Omit<RequestOptions, 'token'>) => Promise<HttpResponse>;

/**
 * A `dms serve` in a process of its own, on `dataDir`, for crash tests: started (again) on the
 * same data by `start`, killed with SIGKILL by `crash` (no shutdown, no finished jobs: whatever
 * was in memory is gone), stopped for good by `stop` (call it in `after`). Each instance gets its
 * own queue prefix, so it shares a Redis with other tests safely. `roles` limits the daemon
 * roles it runs (default: all).
 */
export const killableServer = (dataDir: string, options: Readonly<{ roles?: readonly string[] }> = {}) => {
  const environment = {
    DMS_DATA_DIR: dataDir,
    PORT: '0',
    DMS_LOG_LEVEL: 'info',
    DMS_ROOT_USERNAME: ROOT_USERNAME,
    DMS_ROOT_PASSWORD: ROOT_PASSWORD,
    DMS_QUEUE_PREFIX: uniqueName('crash'),
    // A killed process's job is taken over after this, not BullMQ's 30 s.
    DMS_JOB_LOCK_SECONDS: '3',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  };
  let server: ServerProcess | undefined;

  return {
    /** Starts the server and logs in as root. */
    async start(): Promise<RootCall> {
      const roles = options.roles ? ['--roles', options.roles.join(',')] : [];
      const started = await startProcess('bin/dms.ts', ['serve', ...roles], environment, 'API listening');
      server = started;
      const login = await request(started.url, 'GET', '/auth/userpass', {
        headers: { 'X-Svc-Username': ROOT_USERNAME, 'X-Svc-Password': ROOT_PASSWORD },
      });
      expect(login.status, login.text).to.equal(200);
      const token = String(login.headers['x-svc-auth-token']);
      return (method, path, options = {}) => request(started.url, method, path, { ...options, token });
    },

    /** SIGKILL, then waits until the process is gone. */
    async crash(): Promise<void> {
      const pid = server!.pid;
      process.kill(pid, 'SIGKILL');
      await eventually(
        () => {
          try {
            process.kill(pid, 0);
            return false;
          } catch {
            return true;
          }
        },
        10_000,
        'the server gone',
      );
      server = undefined;
    },

    async stop(): Promise<void> {
      await server?.stop();
      server = undefined;
    },
  };
};

/** Expects the answer's status, and gives the answer back. */
export const answered = (response: HttpResponse, status: number): HttpResponse => {
  expect(response.status, response.text).to.equal(status);
  return response;
};
