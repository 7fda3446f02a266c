import { expect } from 'chai';
import {
  expectError,
  expectStatus,
  ROOT_PASSWORD,
  ROOT_USERNAME,
  startTestServer,
  type TestServer,
} from '../support/server.ts';
import { uniqueName } from '../support/events.ts';
import { ManualClock } from '../support/clock.ts';

describe('API: authentication', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const userpass = (headers: Record<string, string>) => server.call('GET', '/auth/userpass', { headers });

  it('logs in with userpass and answers the token, its expiry and the account in headers', async () => {
    const response = expectStatus(
      await userpass({ 'X-Svc-Username': ROOT_USERNAME, 'X-Svc-Password': ROOT_PASSWORD }),
      200,
    );
    expect(response.headers['content-type']).to.equal('application/octet-stream');
    expect(response.text).to.equal('');
    expect(response.headers['x-svc-auth-account']).to.equal('root');
    expect(response.headers['x-svc-auth-token']).to.match(/^root-ddmlab-unknown-[0-9a-f]{32}$/);
    expect(response.headers['x-svc-auth-token-expires']).to.match(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} UTC$/);
    const expires = Date.parse(String(response.headers['x-svc-auth-token-expires']).replace(' UTC', ' GMT'));
    expect(expires - Date.now()).to.be.within(3590_000, 3601_000);
  });

  it('refuses a login without username or password, or with a wrong password', async () => {
    expectError(
      await userpass({ 'X-Svc-Username': ROOT_USERNAME }),
      401,
      'CannotAuthenticate',
      /without passing all required arguments/,
    );
    expectError(
      await userpass({ 'X-Svc-Username': ROOT_USERNAME, 'X-Svc-Password': 'wrong' }),
      401,
      'IdentityNotFound',
    );
    expectError(
      await userpass({ 'X-Svc-Username': ROOT_USERNAME, 'X-Svc-Password': 'wrong', 'X-Svc-Account': 'root' }),
      401,
      'CannotAuthenticate',
      /Cannot authenticate to account root with given credentials/,
    );
    expectError(
      await userpass({ 'X-Svc-Username': uniqueName('nobody'), 'X-Svc-Password': 'x' }),
      401,
      'IdentityNotFound',
      /Username\/Password pair does not exist/,
    );
  });

  it('answers 206 with the account names when an identity maps to several accounts without a default', async () => {
    const login = uniqueName('shared');
    const accounts = [uniqueName('team'), uniqueName('team')].sort();
    for (const account of accounts) {
      expectStatus(
        await server.root('POST', `/accounts/${account}`, { body: { type: 'GROUP', email: 'team@example.org' } }),
        201,
      );
      expectStatus(
        await server.root('POST', `/accounts/${account}/identities`, {
          body: { identity: login, authtype: 'userpass', email: 'team@example.org', password: 'pw' },
        }),
        201,
      );
    }
    const response = expectStatus(await userpass({ 'X-Svc-Username': login, 'X-Svc-Password': 'pw' }), 206);
    expect(response.json()).to.deep.equal(accounts);
    expect(response.headers['x-svc-auth-accounts']).to.equal(accounts.join(','));
    const chosen = expectStatus(
      await userpass({ 'X-Svc-Username': login, 'X-Svc-Password': 'pw', 'X-Svc-Account': accounts[1]! }),
      200,
    );
    expect(chosen.headers['x-svc-auth-account']).to.equal(accounts[1]);
  });

  it('checks the token on every authenticated route', async () => {
    expectError(
      await server.call('GET', '/accounts/root'),
      400,
      'ValueError',
      /^Token must be set: send the X-Svc-Auth-Token header\.$/,
    );
    expectError(
      await server.call('GET', '/accounts/root', { token: 'root-ddmlab-unknown-0000' }),
      401,
      'CannotAuthenticate',
    );
    expectStatus(await server.root('GET', '/accounts/root'), 200);
  });

  it('validates a token with a Python repr of its owner and lifetime', async () => {
    const response = expectStatus(await server.call('GET', '/auth/validate', { token: server.rootToken }), 200);
    expect(response.text).to.match(
      /^\{'account': 'root', 'identity': 'ddmlab', 'lifetime': datetime\.datetime\(\d{4}, \d+, \d+, \d+, \d+(, \d+)*\), 'audience': None, 'authz_scope': None, 'vo': 'def'\}$/,
    );
    expectError(await server.call('GET', '/auth/validate'), 400, 'ValueError');
    expectError(await server.call('GET', '/auth/validate', { token: 'nope' }), 401, 'CannotAuthenticate');
  });

  it('refuses logins to suspended accounts', async () => {
    const { account } = await server.createUser();
    expectStatus(await server.root('PUT', `/accounts/${account}`, { body: { status: 'SUSPENDED' } }), 200);
    expectError(
      await userpass({ 'X-Svc-Username': account, 'X-Svc-Password': `pw-${account}` }),
      401,
      'CannotAuthenticate',
    );
    expectStatus(await server.root('PUT', `/accounts/${account}`, { body: { status: 'ACTIVE' } }), 200);
    expectStatus(await userpass({ 'X-Svc-Username': account, 'X-Svc-Password': `pw-${account}` }), 200);
  });

  it('answers the login methods it does not offer with a clear refusal', async () => {
    expectError(await server.call('GET', '/auth/x509'), 401, 'CannotAuthenticate', /Cannot get DN/);
    expectError(
      await server.call('GET', '/auth/oidc'),
      401,
      'CannotAuthenticate',
      /OIDC authentication is not supported/,
    );
    expectError(await server.call('GET', '/auth/saml'), 400, 'ConfigurationError');
    expectError(await server.call('GET', '/auth/gss'), 400, 'ValueError', /Account and REMOTE_USER must be set/);
  });
});

describe('API: token expiry', () => {
  let server: TestServer;
  const clock = new ManualClock();
  before(async () => (server = await startTestServer({ clock })));
  after(async () => server.stop());

  it('answers 401 once a token has expired, which makes the Python client log in again', async () => {
    const token = await server.login(ROOT_USERNAME, ROOT_PASSWORD);
    const lifetimeMs = server.runtime.services.config.tokenLifetimeSeconds * 1000;
    clock.advance(lifetimeMs - 1000);
    expectStatus(await server.call('GET', '/accounts/root', { token }), 200);
    clock.advance(1000);
    expectError(await server.call('GET', '/accounts/root', { token }), 401, 'CannotAuthenticate');
  });
});

describe('API: x509 and gss logins behind a trusted proxy', () => {
  let server: TestServer;
  before(
    async () =>
      (server = await startTestServer({
        environment: { DMS_X509_DN_HEADER: 'X-SSL-Client-DN', DMS_GSS_REMOTE_USER_HEADER: 'X-Remote-User' },
      })),
  );
  after(async () => server.stop());

  it('maps a DN and a Kerberos principal to an account and logs them in', async () => {
    const { account } = await server.createUser();
    const dn = `/DC=org/DC=example/CN=${account}`;
    expectStatus(
      await server.root('PUT', `/identities/${account}/x509`, {
        headers: { 'X-SSL-Client-DN': dn, 'X-Svc-Email': 'x@example.org' },
      }),
      201,
    );
    const x509 = expectStatus(
      await server.call('GET', '/auth/x509', { headers: { 'X-SSL-Client-DN': `${dn}/CN=proxy` } }),
      200,
    );
    expect(x509.headers['x-svc-auth-account']).to.equal(account);

    const principal = `${account}@EXAMPLE.ORG`;
    expectStatus(
      await server.root('PUT', `/identities/${account}/gss`, {
        headers: { 'X-Remote-User': principal, 'X-Svc-Email': 'x@example.org' },
      }),
      201,
    );
    const gss = expectStatus(
      await server.call('GET', '/auth/gss', { headers: { 'X-Remote-User': principal, 'X-Svc-Account': account } }),
      200,
    );
    expect(gss.headers['x-svc-auth-token']).to.be.a('string');
  });
});
