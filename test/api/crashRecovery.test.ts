import { expect } from 'chai';
import { startDms, type ServerProcess } from '../../bench/lib/serverProcess.ts';
import { eventually } from '../support/eventually.ts';
import { request } from '../support/http.ts';
import { expectReadModelsEqualRebuild, waitForCaughtUp } from '../support/readModelRebuild.ts';
import { makeTempDir } from '../support/tempDir.ts';

const PASSWORD = 'crash-test-secret';
const WRITERS = 8;

const login = async (url: string): Promise<string> => {
  const response = await request(url, 'GET', '/auth/userpass', {
    headers: { 'X-Svc-Username': 'ddmlab', 'X-Svc-Password': PASSWORD },
  });
  expect(response.status, response.text).to.equal(200);
  return String(response.headers['x-svc-auth-token']);
};

/**
 * Issue 14: `kill -9` of a real server process (`dms serve`) in the middle of concurrent writes.
 * After a restart every write that was acknowledged is readable, the projections catch up to
 * zero lag, and the read models equal the ones a fresh rebuild from the same events makes.
 */
describe('crash recovery: kill -9 under concurrent writes', function () {
  this.timeout(120_000);
  const dir = makeTempDir('dms-crash-');
  let server: ServerProcess | undefined;
  after(async () => {
    await server?.stop();
    dir.dispose();
  });

  it('keeps every acknowledged write and projects all of them again, equal to a rebuild', async () => {
    const environment = { DMS_ROOT_PASSWORD: PASSWORD, DMS_LOG_LEVEL: 'warn' };
    server = await startDms(dir.path, { ...environment, DMS_LOG_LEVEL: 'info' });
    let token = await login(server.url);
    const scope = 'crash.test';
    expect((await request(server.url, 'POST', `/scopes/root/${scope}`, { token })).status).to.equal(201);

    // Writers: accounts and datasets, each acknowledged one remembered.
    const acknowledged = { accounts: [] as string[], datasets: [] as string[] };
    let stop = false;
    let sent = 0;
    const url = server.url;
    const writers = Array.from({ length: WRITERS }, async (_, writer) => {
      for (let index = 0; !stop; index += 1) {
        const name = `w${writer}n${index}`;
        sent += 1;
        try {
          if (index % 2 === 0) {
            const response = await request(url, 'POST', `/accounts/${name}`, {
              token,
              body: { type: 'USER', email: `${name}@example.org` },
            });
            if (response.status === 201) acknowledged.accounts.push(name);
          } else {
            const response = await request(url, 'POST', `/dids/${scope}/${name}`, {
              token,
              body: { type: 'DATASET', meta: { writer } },
            });
            if (response.status === 201) acknowledged.datasets.push(name);
          }
        } catch {
          // The connection died with the server: not acknowledged.
          return;
        }
      }
    });
    // Killed in the middle of the writes: once a few hundred of both kinds were acknowledged, with more under way.
    await eventually(
      () => acknowledged.accounts.length >= 200 && acknowledged.datasets.length >= 200,
      60_000,
      'writes acknowledged before the kill',
    );
    process.kill(server.pid, 'SIGKILL');
    stop = true;
    await Promise.all(writers);
    server = undefined;
    const written = acknowledged.accounts.length + acknowledged.datasets.length;
    expect(written, `of ${sent} writes sent`).to.be.greaterThan(20);
    console.log(`      killed with ${sent - written} of ${sent} writes unanswered; ${written} acknowledged`);

    // Restart on the same files: everything acknowledged is there.
    server = await startDms(dir.path, { ...environment, DMS_LOG_LEVEL: 'info' });
    token = await login(server.url);
    const missing: string[] = [];
    for (const account of acknowledged.accounts) {
      if ((await request(server.url, 'GET', `/accounts/${account}`, { token })).status !== 200)
        missing.push(`account ${account}`);
    }
    for (const dataset of acknowledged.datasets) {
      if ((await request(server.url, 'GET', `/dids/${scope}/${dataset}`, { token })).status !== 200)
        missing.push(`dataset ${dataset}`);
    }
    expect(missing, 'acknowledged writes lost').to.deep.equal([]);

    // Zero lag, seen from outside the server while it runs; then a clean stop.
    await waitForCaughtUp(dir.path, 30_000);
    await server.stop();
    server = undefined;

    // A fresh rebuild from a copy of the events only, compared collection by collection.
    const readModels = await expectReadModelsEqualRebuild(dir.path);
    expect(readModels.accounts!.length).to.be.greaterThan(acknowledged.accounts.length);
  });
});
