import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { uniqueName } from '../support/events.ts';

/**
 * Sessions end when access ends (issue 14): a token stops working at the next request once its
 * account is deleted or suspended, the identity it was issued for is unmapped, or an admin
 * revokes the account's tokens. Each write answers only once the read models show it, so no
 * request after its 200 gets through.
 */
describe('API: sessions end when access ends', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const whoami = (token: string) => server.call('GET', '/accounts/whoami', { token });
  const works = async (token: string) => expect((await whoami(token)).status, 'the token still works').to.equal(303);
  const refused = async (token: string) => expectError(await whoami(token), 401, 'CannotAuthenticate');

  it("refuses a deleted account's token at once, also for what it could do as an admin", async () => {
    const admin = await server.createUser({ admin: true });
    await works(admin.token);
    expectStatus(await server.root('DELETE', `/accounts/${admin.account}`), 200);
    await refused(admin.token);
    expectError(
      await server.call('POST', `/rses/${uniqueName('GONE').toUpperCase().replaceAll('-', '_')}`, {
        token: admin.token,
        body: {},
      }),
      401,
      'CannotAuthenticate',
    );
    expectError(await server.call('GET', '/auth/validate', { token: admin.token }), 401, 'CannotAuthenticate');
  });

  it("refuses a suspended account's token, and reactivation does not bring it back", async () => {
    const user = await server.createUser();
    expectStatus(await server.root('PUT', `/accounts/${user.account}`, { body: { status: 'SUSPENDED' } }), 200);
    await refused(user.token);
    expectStatus(await server.root('PUT', `/accounts/${user.account}`, { body: { status: 'ACTIVE' } }), 200);
    await refused(user.token);
    await works(await server.login(user.account, `pw-${user.account}`));
  });

  it('refuses a token once the identity it was issued for is unmapped, even when mapped again', async () => {
    const user = await server.createUser();
    const second = uniqueName('login');
    expectStatus(
      await server.root('POST', `/accounts/${user.account}/identities`, {
        body: { identity: second, authtype: 'USERPASS', email: 'x@example.org', password: 'pw2' },
      }),
      201,
    );
    const viaSecond = await server.login(second, 'pw2', user.account);
    expectStatus(
      await server.root('DELETE', `/accounts/${user.account}/identities`, {
        body: { identity: second, authtype: 'USERPASS' },
      }),
      200,
    );
    await refused(viaSecond);
    // The account's other identity keeps its session.
    await works(user.token);
    expectStatus(
      await server.root('POST', `/accounts/${user.account}/identities`, {
        body: { identity: second, authtype: 'USERPASS', email: 'x@example.org' },
      }),
      201,
    );
    await refused(viaSecond);
    await works(await server.login(second, 'pw2', user.account));
  });

  it("lets admins revoke an account's tokens: every token issued so far, and only that account's", async () => {
    const user = await server.createUser();
    const other = await server.createUser();
    const secondToken = await server.login(user.account, `pw-${user.account}`);
    expectStatus(await server.root('DELETE', `/admin/accounts/${user.account}/tokens`), 200);
    await refused(user.token);
    await refused(secondToken);
    await works(other.token);
    await works(await server.login(user.account, `pw-${user.account}`));
  });

  it('lets only root and admins revoke tokens, and answers unknown accounts with 404', async () => {
    const user = await server.createUser();
    const admin = await server.createUser({ admin: true });
    const victim = await server.createUser();
    expectError(
      await server.call('DELETE', `/admin/accounts/${victim.account}/tokens`, { token: user.token }),
      401,
      'AccessDenied',
    );
    expectError(
      await server.call('DELETE', `/admin/accounts/${victim.account}/tokens`),
      400,
      'ValueError',
      /Token must be set/,
    );
    await works(victim.token);
    expectStatus(await server.call('DELETE', `/admin/accounts/${victim.account}/tokens`, { token: admin.token }), 200);
    await refused(victim.token);
    expectError(await server.root('DELETE', `/admin/accounts/${uniqueName('nobody')}/tokens`), 404, 'AccountNotFound');
    expectError(await server.root('DELETE', '/admin/accounts/NOT%20VALID/tokens'), 400, 'InvalidObject');
  });

  it("logs out an admin who revokes their own tokens, and no other account's sessions", async () => {
    const admin = await server.createUser({ admin: true });
    expectStatus(await server.call('DELETE', `/admin/accounts/${admin.account}/tokens`, { token: admin.token }), 200);
    await refused(admin.token);
    await works(server.rootToken);
  });

  it('revokes tokens from the command line: dms admin revoke-tokens <account>', async function () {
    this.timeout(30_000);
    const user = await server.createUser();
    const run = (account: string) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [
            '--import',
            'tsx',
            join(import.meta.dirname, '..', '..', 'bin', 'dms.ts'),
            'admin',
            'revoke-tokens',
            account,
          ],
          {
            env: { ...process.env, DMS_DATA_DIR: server.dataDir, DMS_LOG_LEVEL: 'silent' },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.on('exit', (code) => resolve({ code, output }));
      });
    const revoked = await run(user.account);
    expect(revoked.code, revoked.output).to.equal(0);
    expect(revoked.output).to.contain(`revoked every token of ${user.account}`);
    await refused(user.token);
    const missing = await run(uniqueName('nobody'));
    expect(missing.code).to.equal(1);
    expect(missing.output).to.match(/AccountNotFound/);
  });
});
