import { expect } from 'chai';
import { pino } from 'pino';
import { startRuntime, type Roles, type Runtime } from '../../bin/runtime.ts';
import { loadServiceConfig } from '../../infra/serviceConfig.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { request, type HttpResponse } from '../support/http.ts';
import { ROOT_PASSWORD, ROOT_USERNAME } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * No stale read after a start (issue 34): an API process whose read models are behind the event
 * log when it starts answers nothing from them until they show the log as it stood then (waiting,
 * then 503 ResourceTemporaryUnavailable, which Rucio's clients retry), and says so in its log; a
 * write is acknowledged only once the read models show it. `dms api` beside `dms projector` here,
 * each a runtime of this process on one data directory.
 */
describe('API: no stale read after a start, no acknowledged write unread (issue 34)', function () {
  this.timeout(60_000);
  const dir = makeTempDir('dms-catch-up-');
  const prefix = uniqueName('catchup');
  const lines: Record<string, unknown>[] = [];
  const running: Runtime[] = [];
  const start = async (roles: Roles, timeoutMs: number): Promise<Runtime> => {
    const config = loadServiceConfig({
      PORT: '0',
      DMS_DATA_DIR: dir.path,
      DMS_ROOT_USERNAME: ROOT_USERNAME,
      DMS_ROOT_PASSWORD: ROOT_PASSWORD,
      DMS_QUEUE_PREFIX: prefix,
      DMS_READ_YOUR_WRITES_TIMEOUT_MS: String(timeoutMs),
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    });
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const runtime = await startRuntime(config, roles, logger);
    running.push(runtime);
    return runtime;
  };
  const stop = async (runtime: Runtime) => {
    await runtime.stop();
    running.splice(running.indexOf(runtime), 1);
  };
  const api: Roles = { api: true, projector: false, workers: false };
  const projector: Roles = { api: false, projector: true, workers: false };
  let token = '';
  const call = (runtime: Runtime, method: string, path: string, body?: unknown): Promise<HttpResponse> =>
    request(runtime.url!, method, path, { token, ...(body === undefined ? {} : { body }) });
  const newAccount = (runtime: Runtime, account: string) =>
    call(runtime, 'POST', `/accounts/${account}`, { type: 'USER', email: `${account}@example.org` });
  const logged = (message: string) => lines.some((line) => line.msg === message);
  after(async () => {
    for (const runtime of [...running].reverse()) await runtime.stop();
    dir.dispose();
  });

  it('waits for the read models at start instead of answering from them behind the log, and says so', async () => {
    // Root and its token, with the read models current.
    const projecting = await start(projector, 30_000);
    const first = await start(api, 30_000);
    const login = await request(first.url!, 'GET', '/auth/userpass', {
      headers: { 'X-Svc-Username': ROOT_USERNAME, 'X-Svc-Password': ROOT_PASSWORD },
    });
    expect(login.status, login.text).to.equal(200);
    token = String(login.headers['x-svc-auth-token']);
    await stop(first);
    await stop(projecting);
    // A write the read models have not seen: an API that does not wait for them (the bound 0).
    const writer = await start(api, 0);
    const account = uniqueName('behind');
    expect((await newAccount(writer, account)).status).to.equal(201);
    await stop(writer);

    const restarted = await start(api, 1000);
    expect(
      logged("the read models are behind the event log's head at start: requests wait until they show it"),
    ).to.equal(true);
    const early = await call(restarted, 'GET', `/accounts/${account}`);
    expect(early.status, 'never the 404 of a stale read').to.equal(503);
    expect(early.headers.exceptionclass).to.equal('ResourceTemporaryUnavailable');
    expect((await call(restarted, 'GET', '/ping')).status, 'liveness answers at once').to.equal(200);

    await start(projector, 30_000);
    await eventually(async () => (await call(restarted, 'GET', `/accounts/${account}`)).status === 200, 30_000);
    await eventually(() => logged("the read models reached the event log's head at start: answering requests"), 30_000);
  });

  it('answers a write whose read models do not show it in time 503, never 201; it is stored all the same', async () => {
    const writing = await start(api, 1000);
    await stop(running.find((runtime) => runtime.projections !== undefined)!);
    const account = uniqueName('unread');
    const answer = await newAccount(writing, account);
    expect(answer.status).to.equal(503);
    expect(answer.json<{ ExceptionMessage: string }>().ExceptionMessage).to.match(/^The write is stored/);
    await start(projector, 30_000);
    await eventually(async () => (await call(writing, 'GET', `/accounts/${account}`)).status === 200, 30_000);
  });
});
