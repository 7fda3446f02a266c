import { expect } from 'chai';
import type { Upcasters } from '../../domain/shared/upcasting.ts';
import type { Clock } from '../../infra/clock.ts';
import { loadServiceConfig, type ServiceConfig } from '../../infra/serviceConfig.ts';
import { silentLogger, type Logger } from '../../infra/logger.ts';
import { startRuntime, type Roles, type Runtime } from '../../bin/runtime.ts';
import { request, type HttpResponse, type RequestOptions } from './http.ts';
import { uniqueName } from './events.ts';
import { makeTempDir } from './tempDir.ts';

export const ROOT_USERNAME = 'ddmlab';
export const ROOT_PASSWORD = 'secret-for-tests';

export type TestServer = {
  url: string;
  dataDir: string;
  runtime: Runtime;
  rootToken: string;
  call(method: string, path: string, options?: RequestOptions): Promise<HttpResponse>;
  /** As root: the most common case in tests. */
  root(method: string, path: string, options?: Omit<RequestOptions, 'token'>): Promise<HttpResponse>;
  login(username: string, password: string, account?: string): Promise<string>;
  /** A new USER account with a userpass identity, logged in; returns its name and token. */
  createUser(options?: { admin?: boolean }): Promise<{ account: string; token: string }>;
  /**
   * Waits until every projection group shows every event written so far. A test that waited for
   * one read model (a rule OK) and then reads another group's (its requests, its replicas) calls
   * this between: the groups apply the same log each at its own pace.
   */
  settled(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
  /** Stops the server, keeping its data directory, and starts a new one on the same data. */
  restart(): Promise<TestServer>;
};

export type TestServerOptions = {
  environment?: Record<string, string>;
  roles?: Partial<Roles>;
  /** Reuse a data directory (a restart); it is removed by `removeDataDir` when the server stops. */
  dataDir?: string;
  removeDataDir?: () => void;
  /** Upcasters instead of the domain's (with DMS_PROJECTION_THREAD=false to reach the projections). */
  upcasters?: Upcasters;
  /** Where the server logs; default nowhere. */
  logger?: Logger;
  /** What the server decides by time (a `ManualClock` the test moves, test/support/clock.ts); default the system's. A restart keeps it. */
  clock?: Clock;
};

/**
 * A real server (HTTP on a free loopback port, SQLite stores in a temp dir) for API tests. Workers
 * stay off unless asked for; REDIS_URL comes from the root hooks.
 */
export const startTestServer = async (options: TestServerOptions = {}): Promise<TestServer> => {
  const temp = options.dataDir ? undefined : makeTempDir();
  const dataDir = options.dataDir ?? temp!.path;
  const removeDataDir = options.removeDataDir ?? temp?.dispose;
  // Each server's queues get their own keys in the shared Redis; a restart keeps them.
  options = { ...options, environment: { DMS_QUEUE_PREFIX: uniqueName('dms'), ...(options.environment ?? {}) } };
  const config: ServiceConfig = loadServiceConfig({
    PORT: '0',
    DMS_DATA_DIR: dataDir,
    DMS_ROOT_USERNAME: ROOT_USERNAME,
    DMS_ROOT_PASSWORD: ROOT_PASSWORD,
    DMS_LOG_LEVEL: 'silent',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...(options.environment ?? {}),
  });
  const roles: Roles = { api: true, projector: true, workers: false, ...(options.roles ?? {}) };
  const runtime = await startRuntime(config, roles, options.logger ?? silentLogger(), {
    ...(options.upcasters ? { upcasters: options.upcasters } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  // Tests with workers expect them running once the server is.
  await runtime.daemonsReady;
  const url = runtime.url!;
  const login = async (username: string, password: string, account?: string) => {
    const response = await request(url, 'GET', '/auth/userpass', {
      headers: {
        'X-Svc-Username': username,
        'X-Svc-Password': password,
        ...(account ? { 'X-Svc-Account': account } : {}),
      },
    });
    expect(response.status, response.text).to.equal(200);
    return String(response.headers['x-svc-auth-token']);
  };
  const rootToken = await login(ROOT_USERNAME, ROOT_PASSWORD);
  const server: TestServer = {
    url,
    dataDir,
    runtime,
    rootToken,
    call: (method, path, requestOptions) => request(url, method, path, requestOptions),
    root: (method, path, requestOptions) => request(url, method, path, { ...requestOptions, token: rootToken }),
    login,
    async createUser(userOptions = {}) {
      const account = uniqueName('user');
      const password = `pw-${account}`;
      expectStatus(
        await server.root('POST', `/accounts/${account}`, { body: { type: 'USER', email: `${account}@example.org` } }),
        201,
      );
      expectStatus(
        await server.root('POST', `/accounts/${account}/identities`, {
          body: { identity: account, authtype: 'USERPASS', email: `${account}@example.org`, password, default: true },
        }),
        201,
      );
      if (userOptions.admin)
        expectStatus(await server.root('POST', `/accounts/${account}/attr/admin`, { body: { value: 'True' } }), 201);
      return { account, token: await login(account, password) };
    },
    async settled(timeoutMs = 10_000) {
      const head = await runtime.eventStore.headPosition();
      expect(await runtime.services.progress.waitFor(head, timeoutMs), `every projection group at ${head}`).to.equal(
        true,
      );
    },
    async stop() {
      await runtime.stop();
      removeDataDir?.();
    },
    async restart() {
      await runtime.stop();
      return startTestServer({ ...options, dataDir, ...(removeDataDir ? { removeDataDir } : {}) });
    },
  };
  return server;
};

export const expectStatus = (response: HttpResponse, status: number): HttpResponse => {
  expect(response.status, `${response.status} ${response.text}`).to.equal(status);
  return response;
};

/** Asserts Rucio's error format: status, both headers, the JSON body with the full message. */
export const expectError = (response: HttpResponse, status: number, exceptionClass: string, message?: RegExp): void => {
  expect(response.status, response.text).to.equal(status);
  expect(response.headers['exceptionclass']).to.equal(exceptionClass);
  expect(response.headers['content-type']).to.equal('application/octet-stream');
  const body = response.json<{ ExceptionClass: string; ExceptionMessage: string }>();
  expect(body.ExceptionClass).to.equal(exceptionClass);
  expect(response.headers['exceptionmessage']).to.be.a('string');
  if (message) expect(body.ExceptionMessage).to.match(message);
};
