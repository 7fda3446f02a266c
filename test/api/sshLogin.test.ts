import { expect } from 'chai';
import { loginCounts, type LoginOutcome } from '../../api/auth/loginStats.ts';
import { uniqueName } from '../support/events.ts';
import { request, type HttpResponse } from '../support/http.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { sshKeyPair, type RsaSignatureAlgorithm, type SshKeyPair, type SshKeyType } from '../support/sshKeys.ts';

/**
 * SSH login over HTTP (rest-api-reference §1.2, Rucio's auth.py and core/authentication.py): a
 * challenge for the account, signed with the private key of one of its SSH identities, gives a
 * token. Keys and signatures are made by test/support/sshKeys.ts with node:crypto alone.
 */
describe('API: SSH login', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
    expectStatus(await server.root('POST', '/config', { body: { auth: { login_free_failures: 1000 } } }), 201);
  });
  after(async () => server.stop());

  /** A new account with the key as its SSH identity. */
  const accountWithKey = async (key: SshKeyPair) => {
    const account = uniqueName('ssh');
    expectStatus(
      await server.root('POST', `/accounts/${account}`, { body: { type: 'USER', email: `${account}@example.org` } }),
      201,
    );
    expectStatus(
      await server.root('POST', `/accounts/${account}/identities`, {
        body: { identity: key.publicLine, authtype: 'SSH', email: `${account}@example.org` },
      }),
      201,
    );
    return account;
  };
  const challengeFor = async (account: string): Promise<string> => {
    const response = expectStatus(
      await request(server.url, 'GET', '/auth/ssh_challenge_token', { headers: { 'X-Svc-Account': account } }),
      200,
    );
    expect(response.headers['x-svc-ssh-challenge-token-expires']).to.match(/ UTC$/);
    return String(response.headers['x-svc-ssh-challenge-token']);
  };
  const login = (account: string, signature: string): Promise<HttpResponse> =>
    request(server.url, 'GET', '/auth/ssh', {
      headers: { 'X-Svc-Account': account, 'X-Svc-SSH-Signature': signature },
    });
  const count = (outcome: LoginOutcome) =>
    loginCounts().find((entry) => entry.method === 'ssh' && entry.outcome === outcome)?.count ?? 0;

  const keys: readonly [SshKeyType, RsaSignatureAlgorithm?][] = [
    ['rsa', 'ssh-rsa'],
    ['rsa', 'rsa-sha2-256'],
    ['rsa', 'rsa-sha2-512'],
    ['ecdsa'],
    ['ed25519'],
  ];
  for (const [type, algorithm] of keys) {
    it(`logs in with an ${type} key signing the challenge${algorithm ? ` (${algorithm})` : ''}, and the token works`, async () => {
      const key = sshKeyPair(type);
      const account = await accountWithKey(key);
      const challenge = await challengeFor(account);
      expect(challenge).to.match(new RegExp(`^challenge-\\d+-${account}-\\d+$`));
      const answer = expectStatus(await login(account, key.sign(challenge, algorithm)), 200);
      expect(answer.headers['content-type']).to.equal('application/octet-stream');
      const token = String(answer.headers['x-svc-auth-token']);
      expect(token).to.match(new RegExp(`^${account}-ssh:pubkey-unknown-[0-9a-f]{32}$`));
      const whoami = await server.call('GET', `/accounts/${account}`, { token });
      expect(whoami.json<{ account: string }>().account).to.equal(account);
    });
  }

  it('takes a signature without its base64 padding, as Rucio does', async () => {
    const key = sshKeyPair('ed25519');
    const account = await accountWithKey(key);
    const signature = key.sign(await challengeFor(account)).replace(/=+$/, '');
    expectStatus(await login(account, signature), 200);
  });

  it('refuses a signature by a key that is not one of the account’s identities', async () => {
    const account = await accountWithKey(sshKeyPair('rsa'));
    const challenge = await challengeFor(account);
    expectError(
      await login(account, sshKeyPair('rsa').sign(challenge)),
      401,
      'CannotAuthenticate',
      new RegExp(`Cannot authenticate to account ${account} with given credentials`),
    );
  });

  it("refuses a key of another account's identity", async () => {
    const key = sshKeyPair('ecdsa');
    await accountWithKey(key);
    const other = await accountWithKey(sshKeyPair('ecdsa'));
    expectError(await login(other, key.sign(await challengeFor(other))), 401, 'CannotAuthenticate');
  });

  it('refuses a signature of anything but an open challenge of the account', async () => {
    const key = sshKeyPair('ed25519');
    const account = await accountWithKey(key);
    await challengeFor(account);
    expectError(await login(account, key.sign(`challenge-1-${account}-9999999999`)), 401, 'CannotAuthenticate');
  });

  it('lets a challenge serve one login only: the same signature again is refused', async () => {
    const key = sshKeyPair('rsa');
    const account = await accountWithKey(key);
    const signature = key.sign(await challengeFor(account));
    expectStatus(await login(account, signature), 200);
    expectError(await login(account, signature), 401, 'CannotAuthenticate');
  });

  it('refuses a signature that is not base64, and one that is no SSH signature', async () => {
    const account = await accountWithKey(sshKeyPair('rsa'));
    await challengeFor(account);
    expectError(await login(account, 'not base64!'), 401, 'CannotAuthenticate', /malformed signature/);
    expectError(await login(account, Buffer.from('garbage').toString('base64')), 401, 'CannotAuthenticate');
  });

  it('asks for the account and the signature with 400 ValueError', async () => {
    const missingAccount = await request(server.url, 'GET', '/auth/ssh_challenge_token');
    expectError(missingAccount, 400, 'ValueError', /Account must be set/);
    expectError(
      await request(server.url, 'GET', '/auth/ssh', { headers: { 'X-Svc-Account': 'root' } }),
      400,
      'ValueError',
      /Account and SSH signature must be set/,
    );
  });

  it('gives no challenge for an account that does not exist', async () =>
    expectError(
      await request(server.url, 'GET', '/auth/ssh_challenge_token', { headers: { 'X-Svc-Account': 'nobody-ssh' } }),
      401,
      'CannotAuthenticate',
      /Cannot generate challenge for account nobody-ssh/,
    ));

  it('puts failed SSH logins under the throttle of every login', async () => {
    const key = sshKeyPair('ed25519');
    const account = await accountWithKey(key);
    const throttled = () => count('delayed') + count('refused');
    const before = throttled();
    expectStatus(
      await server.root('POST', '/config', {
        body: { auth: { login_free_failures: 1, login_delay_base: 0.05, login_delay_max: 0.2 } },
      }),
      201,
    );
    try {
      for (let attempt = 0; attempt < 3; attempt += 1)
        expectError(
          await login(account, sshKeyPair('ed25519').sign(await challengeFor(account))),
          401,
          'CannotAuthenticate',
        );
      expect(throttled()).to.be.greaterThan(before);
    } finally {
      expectStatus(await server.root('POST', '/config', { body: { auth: { login_free_failures: 1000 } } }), 201);
    }
  });
});
