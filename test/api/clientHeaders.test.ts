import { expect } from 'chai';
import {
  expectError,
  expectStatus,
  ROOT_PASSWORD,
  ROOT_USERNAME,
  startTestServer,
  type TestServer,
} from '../support/server.ts';

/** DMS_CLIENT_HEADERS: X-Svc-* only by default; X-Rucio-* too in the `rucio` mode (api/clientHeaders.ts). */
describe('API: client header names (DMS_CLIENT_HEADERS)', () => {
  const rucioLogin = { 'X-Rucio-Username': ROOT_USERNAME, 'X-Rucio-Password': ROOT_PASSWORD };

  describe('by default, X-Svc-* only', () => {
    let server: TestServer;
    before(async () => (server = await startTestServer()));
    after(async () => server.stop());

    it('refuses a login sent with X-Rucio-* headers, saying within the header copy of the message what to change', async () => {
      const response = await server.call('GET', '/auth/userpass', { headers: rucioLogin });
      expectError(response, 401, 'CannotAuthenticate', /X-Svc-Username and X-Svc-Password/);
      // The Python client shows the header copy, cut at 125 characters: the hint must be in it.
      expect(response.headers['exceptionmessage']).to.match(
        /^X-Rucio-Username, X-Rucio-Password sent, but this server reads X-Svc-\* headers unless started with DMS_CLIENT_HEADERS=rucio\./,
      );
      expect(Object.keys(response.headers).filter((name) => name.startsWith('x-rucio-'))).to.deep.equal([]);
    });

    it('names the token header when none is sent, and says when X-Rucio-Auth-Token came instead', async () => {
      expectError(
        await server.call('GET', '/accounts/root'),
        400,
        'ValueError',
        /^Token must be set: send the X-Svc-Auth-Token header\.$/,
      );
      expectError(
        await server.call('GET', '/accounts/root', { headers: { 'X-Rucio-Auth-Token': server.rootToken } }),
        400,
        'ValueError',
        /^X-Rucio-Auth-Token sent, but .* DMS_CLIENT_HEADERS=rucio\. Token must be set: send the X-Svc-Auth-Token header\.$/,
      );
    });

    it('answers X-Svc-* headers only', async () => {
      const response = expectStatus(
        await server.call('GET', '/auth/userpass', {
          headers: { 'X-Svc-Username': ROOT_USERNAME, 'X-Svc-Password': ROOT_PASSWORD },
        }),
        200,
      );
      expect(response.headers['x-svc-auth-token']).to.be.a('string');
      expect(response.headers['x-rucio-auth-token']).to.equal(undefined);
      expect(response.headers['access-control-expose-headers']).to.equal(
        'X-Svc-Auth-Token, X-Svc-Auth-Token-Expires, X-Svc-Auth-Account, X-Svc-Auth-Accounts',
      );
    });
  });

  describe('DMS_CLIENT_HEADERS=rucio', () => {
    let server: TestServer;
    before(
      async () =>
        (server = await startTestServer({
          environment: { DMS_CLIENT_HEADERS: 'rucio', DMS_X509_DN_HEADER: 'X-Svc-Client-DN' },
        })),
    );
    after(async () => server.stop());

    it('logs in with X-Rucio-* headers and answers every X-Svc-* header under both names, exposed to browsers under both', async () => {
      const response = expectStatus(await server.call('GET', '/auth/userpass', { headers: rucioLogin }), 200);
      for (const name of ['auth-token', 'auth-token-expires', 'auth-account']) {
        expect(response.headers[`x-rucio-${name}`], name).to.be.a('string');
        expect(response.headers[`x-rucio-${name}`], name).to.equal(response.headers[`x-svc-${name}`]);
      }
      expect(response.headers['access-control-expose-headers']).to.equal(
        'X-Svc-Auth-Token, X-Svc-Auth-Token-Expires, X-Svc-Auth-Account, X-Svc-Auth-Accounts, ' +
          'X-Rucio-Auth-Token, X-Rucio-Auth-Token-Expires, X-Rucio-Auth-Account, X-Rucio-Auth-Accounts',
      );
      const token = String(response.headers['x-rucio-auth-token']);
      const root = expectStatus(
        await server.call('GET', '/accounts/root', { headers: { 'X-Rucio-Auth-Token': token } }),
        200,
      );
      expect(root.json<{ account: string }>().account).to.equal('root');
    });

    it('reads every X-Rucio-* request header, not only the login ones: X-Rucio-Account chooses the account', async () => {
      const { account } = await server.createUser();
      const denied = await server.call('GET', '/auth/userpass', {
        headers: { ...rucioLogin, 'X-Rucio-Account': account },
      });
      expectError(denied, 401, 'CannotAuthenticate', new RegExp(`account ${account}`));
    });

    it('still reads X-Svc-* headers, and an X-Svc-* header sent beside its X-Rucio-* twin wins', async () => {
      expectStatus(await server.call('GET', '/accounts/root', { token: server.rootToken }), 200);
      const both = await server.call('GET', '/accounts/root', {
        headers: { 'X-Svc-Auth-Token': server.rootToken, 'X-Rucio-Auth-Token': 'root-ddmlab-unknown-0000' },
      });
      expectStatus(both, 200);
    });

    it('never makes a trusted proxy header from its X-Rucio-* twin: a client cannot name its own DN', async () => {
      const dn = '/DC=org/CN=proxied';
      expectStatus(
        await server.root('POST', '/accounts/root/identities', {
          body: { identity: dn, authtype: 'X509', email: 'x@example.org', default: true },
        }),
        201,
      );
      expectStatus(await server.call('GET', '/auth/x509', { headers: { 'X-Svc-Client-DN': dn } }), 200);
      expectError(
        await server.call('GET', '/auth/x509', { headers: { 'X-Rucio-Client-DN': dn } }),
        401,
        'CannotAuthenticate',
        /Cannot get DN/,
      );
    });

    it('names both token headers when neither is sent', async () => {
      expectError(
        await server.call('GET', '/accounts/root'),
        400,
        'ValueError',
        /^Token must be set: send the X-Rucio-Auth-Token \(or X-Svc-Auth-Token\) header\.$/,
      );
    });
  });
});
