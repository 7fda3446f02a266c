import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { expectStatus, ROOT_PASSWORD, ROOT_USERNAME, startTestServer } from '../support/server.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { waitUntil } from '../infra/eventStore.contract.ts';

const DMS = join(import.meta.dirname, '..', '..', 'bin', 'dms');

describe('Service lifecycle', () => {
  it('keeps accounts, scopes, config and tokens across a restart', async () => {
    let server = await startTestServer();
    const { account, token } = await server.createUser();
    expectStatus(await server.root('POST', `/scopes/${account}/user.${account}`), 201);
    expectStatus(await server.root('PUT', `/config/lifecycle/${account}/kept`), 201);
    server = await server.restart();
    try {
      expect(expectStatus(await server.call('GET', `/accounts/${account}`, { token }), 200).json()).to.include({
        account,
        status: 'ACTIVE',
      });
      expect(expectStatus(await server.root('GET', `/scopes/${account}/scopes`), 200).json()).to.deep.equal([
        `user.${account}`,
      ]);
      expect(expectStatus(await server.root('GET', `/config/lifecycle/${account}`), 200).json()).to.equal('kept');
      expect(await server.login(ROOT_USERNAME, ROOT_PASSWORD)).to.be.a('string');
    } finally {
      await server.stop();
    }
  });

  for (const [mode, thread] of [
    ['on a thread of their own (the default)', 'true'],
    ['on the API thread', 'false'],
  ] as const) {
    it(`reads its writes with the projections ${mode}`, async () => {
      const server = await startTestServer({ environment: { DMS_PROJECTION_THREAD: thread } });
      try {
        await Promise.all(
          Array.from({ length: 20 }, async (_, index) => {
            const account = uniqueName(`ryw${index}`);
            expectStatus(
              await server.root('POST', `/accounts/${account}`, { body: { type: 'USER', email: 'r@example.org' } }),
              201,
            );
            expect(expectStatus(await server.root('GET', `/accounts/${account}`), 200).json()).to.include({ account });
          }),
        );
      } finally {
        await server.stop();
      }
    });
  }

  it('shows zero lag in `dms projections status` right after a burst of writes', async () => {
    const server = await startTestServer();
    try {
      const writes = Array.from({ length: 30 }, (_, index) =>
        server.root('POST', `/accounts/${uniqueName(`burst${index}`)}`, {
          body: { type: 'USER', email: 'b@example.org' },
        }),
      );
      for (const response of await Promise.all(writes)) expectStatus(response, 201);
      const status = spawnSync(DMS, ['projections', 'status'], {
        env: { ...process.env, DMS_DATA_DIR: server.dataDir },
        encoding: 'utf8',
      });
      expect(status.status, status.stderr).to.equal(0);
      const rows = status.stdout.trim().split('\n');
      expect(rows[0]).to.match(/^projection\s+version\s+generation\s+checkpoint\s+head\s+lag\s+status$/);
      expect(rows.at(-1)).to.match(/^projectors: \S+:\d+$/);
      for (const row of rows.slice(1, -1)) {
        const [, , , checkpoint, head, lag, state] = row.split(/\s+/);
        expect(lag, row).to.equal('0');
        expect(checkpoint).to.equal(head);
        expect(state).to.equal('running');
      }
      expect(rows.slice(1, -1).map((row) => row.split(/\s+/)[0])).to.include.members([
        'accounts',
        'identities',
        'scopes',
        'config',
      ]);
    } finally {
      await server.stop();
    }
  });

  it('rebuilds a projection on request, by the running projector or by the command itself', async function () {
    this.timeout(60_000);
    const server = await startTestServer();
    const environment = { ...process.env, DMS_DATA_DIR: server.dataDir };
    const dms = (...args: string[]) => spawnSync(DMS, args, { env: environment, encoding: 'utf8' });
    try {
      const { account } = await server.createUser();
      const requested = dms('projections', 'rebuild', 'accounts');
      expect(requested.status, requested.stderr).to.equal(0);
      expect(requested.stdout).to.match(/requested a rebuild of accounts into generation 2/);
      expect(requested.stdout).to.match(/is running and will do it/);
      // The projector looks for requests every second.
      await waitUntil(() => server.runtime.services.readModels.servingGeneration('accounts') === 2, 10_000);
      expect(expectStatus(await server.root('GET', `/accounts/${account}`), 200).json()).to.include({ account });

      // The runtime stops once; server.stop() below only removes the data directory.
      await server.runtime.stop();
      const offline = dms('projections', 'rebuild', 'accounts');
      expect(offline.status, offline.stderr).to.equal(0);
      expect(offline.stdout).to.match(/no projector is running: rebuilding here/);
      const status = dms('projections', 'status');
      expect(status.stdout).to.match(/^accounts\s+\d+\s+3\s/m);
      expect(status.stdout).to.match(/projectors: none running/);
      expect(dms('projections', 'rebuild', 'nonsense').status).to.equal(2);
    } finally {
      await server.stop();
    }
  });

  it('replays the history of a stream for auditors', async () => {
    const server = await startTestServer();
    try {
      const { account } = await server.createUser();
      expectStatus(await server.root('PUT', `/accounts/${account}`, { body: { email: 'audit@example.org' } }), 200);
      const replay = spawnSync(DMS, ['replay', `account-${account}`], {
        env: { ...process.env, DMS_DATA_DIR: server.dataDir },
        encoding: 'utf8',
      });
      expect(replay.status, replay.stderr).to.equal(0);
      const events = replay.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; account: string; revision: number });
      expect(events.map((event) => event.type)).to.deep.equal(['AccountCreated', 'AccountEmailChanged']);
      expect(events.map((event) => event.revision)).to.deep.equal([0, 1]);
      expect(events[1]!.account).to.equal('root');
    } finally {
      await server.stop();
    }
  });

  it('refuses to start with a bad configuration and names the variable', () => {
    const result = spawnSync(DMS, ['serve'], { env: { ...process.env, PORT: 'eighty' }, encoding: 'utf8' });
    expect(result.status).to.equal(2);
    expect(result.stderr).to.match(/PORT="eighty"/);
  });

  it('finishes an in-flight request on SIGTERM, then stops its private redis-server and exits', async function () {
    this.timeout(60_000);
    const dir = makeTempDir();
    const environment: NodeJS.ProcessEnv = {
      ...process.env,
      DMS_DATA_DIR: dir.path,
      PORT: '0',
      DMS_LOG_LEVEL: 'info',
      DMS_ROOT_PASSWORD: ROOT_PASSWORD,
    };
    delete environment.REDIS_URL;
    const child = spawn(DMS, ['serve'], { env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
    const logLines: Record<string, unknown>[] = [];
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) if (line.startsWith('{')) logLines.push(JSON.parse(line) as Record<string, unknown>);
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 30_000;
      // The daemons, and with them the private redis-server, start once the API listens.
      const started = (message: string) => logLines.some((line) => line.msg === message);
      while (!started('API listening') || !started('daemon roles running')) {
        if (Date.now() > deadline) throw new Error('the server did not start');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const baseUrl = String(logLines.find((line) => line.msg === 'API listening')!.url);
      const redisUrl = String(logLines.find((line) => line.msg === 'started a private redis-server')!.url);
      const login = await fetch(`${baseUrl}/auth/userpass`, {
        headers: { 'X-Svc-Username': 'ddmlab', 'X-Svc-Password': ROOT_PASSWORD },
      });
      const token = login.headers.get('x-svc-auth-token')!;

      // Send half a request body, stop the server, then send the rest: the request must complete.
      const account = uniqueName('late');
      const body = JSON.stringify({ type: 'USER', email: 'late@example.org' });
      const url = new URL(`/accounts/${account}`, baseUrl);
      // `Expect: 100-continue`: the server's "continue" says it has the request in hand.
      let taken: () => void = () => undefined;
      const inHand = new Promise<void>((resolve) => (taken = resolve));
      const req = httpRequest(url, {
        method: 'POST',
        headers: { 'X-Svc-Auth-Token': token, 'Content-Length': String(body.length), Expect: '100-continue' },
      });
      const response = new Promise<number>((resolve, reject) => {
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
      });
      req.on('continue', () => {
        req.write(body.slice(0, 10));
        taken();
      });
      req.flushHeaders();
      await inHand;
      child.kill('SIGTERM');
      await eventually(
        () => logLines.some((line) => line.msg === 'shutting down: finishing in-flight requests'),
        10_000,
        'the server shutting down',
      );
      req.end(body.slice(10));
      expect(await response).to.equal(201);
      expect(await exited).to.equal(0);
      const redisPort = Number(new URL(redisUrl).port);
      const stillListening = await new Promise<boolean>((resolve) => {
        const socket = createConnection({ host: '127.0.0.1', port: redisPort });
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
      expect(stillListening, 'the private redis-server should be gone').to.equal(false);
    } finally {
      child.kill('SIGKILL');
      dir.dispose();
    }
  });
});
