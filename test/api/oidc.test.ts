import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { decodeJwt, importJWK, SignJWT, type JWK } from 'jose';
import { authIssuersCommand } from '../../bin/commands/authIssuers.ts';
import { loadServiceConfig } from '../../infra/serviceConfig.ts';
import { newScope, path } from '../support/dids.ts';
import { uniqueName } from '../support/events.ts';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidcProvider.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { ManualClock } from '../support/clock.ts';
import { freeLoopbackPort } from '../../infra/freePort.ts';

/**
 * OpenID Connect against a real provider (oidc-provider, started here on a loopback port; see
 * test/support/oidcProvider.ts): its JWTs as tokens, and the login flows that end in a service
 * token, all over real HTTP.
 */
describe('API: OIDC login and JWT tokens, against a real OpenID provider', function () {
  this.timeout(20_000);
  let provider: TestOidcProvider;
  let server: TestServer;
  let deadIssuer: string;
  let providersFile: string;
  const temp = makeTempDir();
  // Running, as the provider's clock does; a test moves it past a token's expiry.
  const clock = new ManualClock({ running: true });

  before(async () => {
    provider = await startTestOidcProvider();
    const port = await freeLoopbackPort();
    deadIssuer = `http://127.0.0.1:${await freeLoopbackPort()}`;
    const service = `http://127.0.0.1:${port}`;
    const redirectUris = [`${service}/auth/oidc_code`, `${service}/auth/oidc_token`];
    await provider.addClient({
      client_id: 'dms',
      client_secret: 'dms-secret',
      redirect_uris: redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    const file = (providersFile = join(temp.path, 'idpsecrets.json'));
    writeFileSync(
      file,
      JSON.stringify({
        testidp: {
          issuer: provider.issuer,
          client_id: 'dms',
          client_secret: 'dms-secret',
          redirect_uris: redirectUris,
        },
        down: { issuer: deadIssuer, client_id: 'dms', client_secret: 'x', redirect_uris: redirectUris },
      }),
    );
    server = await startTestServer({ environment: { PORT: String(port), DMS_OIDC_PROVIDERS: file }, clock });
  });
  after(async () => {
    await server?.stop();
    await provider?.stop();
    temp.dispose();
  });

  /** A new account, and a provider user whose identity is mapped to it (as its default). */
  const mappedUser = async (): Promise<{ account: string; user: string; identity: string }> => {
    const { account } = await server.createUser();
    const user = uniqueName('sub');
    const identity = `SUB=${user}, ISS=${provider.issuer}`;
    expectStatus(
      await server.root('POST', `/accounts/${account}/identities`, {
        body: { identity, authtype: 'OIDC', email: `${account}@example.org`, default: true },
      }),
      201,
    );
    return { account, user, identity };
  };

  const whoami = (token: string) => server.call('GET', '/accounts/whoami', { token });

  const expectWhoami = async (token: string, account: string) => {
    const response = await whoami(token);
    expect(response.status, response.text).to.be.oneOf([200, 303]);
    const followed = response.status === 303 ? await server.call('GET', `/accounts/${account}`, { token }) : response;
    expect(followed.json<{ account: string }>().account).to.equal(account);
  };

  const setConfig = async (option: string, value: string) =>
    expectStatus(await server.root('POST', '/config', { body: { oidc: { [option]: value } } }), 201);

  /** A JWT with the claims of a real one, signed with a key the provider never published (each time under a new key id). */
  const forgingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const forge = async (claims: Record<string, unknown>): Promise<string> => {
    const kid = randomUUID();
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
      .sign(await importJWK({ ...forgingKey, kid } satisfies JWK, 'RS256'));
  };

  describe('a JWT in X-Svc-Auth-Token', () => {
    it('authenticates the account its identity is mapped to', async () => {
      const { account, user } = await mappedUser();
      await expectWhoami(await provider.accessToken(user), account);
    });

    it("records what its holder does under the provider's subject and issuer, and the audit finds it by them", async () => {
      const { account, user, identity } = await mappedUser();
      const scope = await newScope(server, account);
      const token = await provider.accessToken(user);
      expectStatus(await server.call('POST', path(scope, 'by-jwt'), { token, body: { type: 'DATASET' } }), 201);
      type Line = { type: string; account: string; identity?: { kind: string; value: string } };
      const history = expectStatus(await server.root('GET', `/audit/dids/${scope}/by-jwt/events`), 200).lines<Line>();
      expect(history.find((line) => line.type === 'DidCreated')).to.deep.include({
        account,
        identity: { kind: 'OIDC', value: identity },
      });
      const byIdentity = expectStatus(
        await server.root('GET', `/audit/events?identity_type=OIDC&identity=${encodeURIComponent(identity)}`),
        200,
      ).lines<Line>();
      expect(byIdentity.map((line) => line.type)).to.deep.equal(['DidCreated']);
    });

    it('is described by /auth/validate with its audience and scope', async () => {
      const { account, user, identity } = await mappedUser();
      const token = await provider.accessToken(user);
      const answer = expectStatus(await server.call('GET', '/auth/validate', { token }), 200).text;
      expect(answer).to.include(`'account': '${account}'`).and.include(`'identity': '${identity}'`);
      expect(answer).to.include(`'audience': 'rucio'`).and.include(`'authz_scope': 'openid profile'`);
    });

    it('is refused once expired', async () => {
      const { user } = await mappedUser();
      const token = await provider.accessToken(user, { ttlSeconds: 1 });
      const { exp } = decodeJwt(token);
      // The server's clock moves past the expiry (a second at most: the provider's tokens of later tests stay young).
      clock.set(Math.max(clock.now(), exp! * 1000 + 50));
      expectError(await whoami(token), 401, 'CannotAuthenticate', /expired/);
    });

    it('is refused for another audience', async () => {
      const { user } = await mappedUser();
      const token = await provider.accessToken(user, { audience: 'fts' });
      expectError(await whoami(token), 401, 'CannotAuthenticate', /audience "fts" does not include "rucio"/);
    });

    it('is refused without the scope /config requires', async () => {
      const { user } = await mappedUser();
      const token = await provider.accessToken(user, { scope: 'openid' });
      expectError(await whoami(token), 401, 'CannotAuthenticate', /scope "openid" does not include "openid profile"/);
    });

    it('is refused when signed with a key the issuer does not publish', async () => {
      const { user } = await mappedUser();
      const genuine = decodeJwt(await provider.accessToken(user));
      const forged = await forge(genuine);
      expectError(
        await whoami(forged),
        401,
        'CannotAuthenticate',
        /signed with a key \(kid [\w-]+\) that .* does not publish/,
      );
    });

    it('is refused when its identity is mapped to no account', async () => {
      const user = uniqueName('stranger');
      const token = await provider.accessToken(user);
      expectError(
        await whoami(token),
        401,
        'CannotAuthenticate',
        new RegExp(`identity SUB=${user}, ISS=.* is mapped to no account`),
      );
    });

    it('is refused from an issuer that is not trusted', async () => {
      const now = Math.floor(Date.now() / 1000);
      const token = await forge({ iss: 'https://idp.example.org', sub: 'x', aud: 'rucio', iat: now, exp: now + 60 });
      expectError(await whoami(token), 401, 'CannotAuthenticate', /issuer https:\/\/idp.example.org is not trusted/);
    });

    it('is refused, saying so, when its issuer cannot be reached', async () => {
      const now = Math.floor(Date.now() / 1000);
      const token = await forge({
        iss: deadIssuer,
        sub: 'x',
        aud: 'rucio',
        scope: 'openid profile',
        iat: now,
        exp: now + 60,
      });
      expectError(
        await whoami(token),
        401,
        'CannotAuthenticate',
        /issuer http:\/\/127\.0\.0\.1:\d+ could not be reached/,
      );
    });

    it('of a suspended account, or of an identity removed from it, is refused', async () => {
      const first = await mappedUser();
      const firstToken = await provider.accessToken(first.user);
      await expectWhoami(firstToken, first.account);
      expectStatus(await server.root('PUT', `/accounts/${first.account}`, { body: { status: 'SUSPENDED' } }), 200);
      expectError(await whoami(firstToken), 401, 'CannotAuthenticate', /access .* has ended/);

      const second = await mappedUser();
      const secondToken = await provider.accessToken(second.user);
      await expectWhoami(secondToken, second.account);
      expectStatus(
        await server.root('DELETE', `/accounts/${second.account}/identities`, {
          body: { identity: second.identity, authtype: 'OIDC' },
        }),
        200,
      );
      expectError(await whoami(secondToken), 401, 'CannotAuthenticate');
    });

    it('follows a rotation of the signing key', async () => {
      const { account, user } = await mappedUser();
      await expectWhoami(await provider.accessToken(user), account);
      await setConfig('jwks_refresh_interval', '0');
      try {
        await provider.rotateKeys();
        await expectWhoami(await provider.accessToken(user), account);
      } finally {
        await setConfig('jwks_refresh_interval', '30');
      }
    });

    it('with unknown key ids makes the service fetch the keys at most once per interval', async () => {
      const { account, user } = await mappedUser();
      await expectWhoami(await provider.accessToken(user), account);
      await setConfig('jwks_refresh_interval', '3600');
      try {
        const genuine = decodeJwt(await provider.accessToken(user));
        const forged = await Promise.all(Array.from({ length: 5 }, () => forge(genuine)));
        const before = provider.requestCounts.get('/jwks') ?? 0;
        for (const token of forged) expectError(await whoami(token), 401, 'CannotAuthenticate', /does not publish/);
        expect((provider.requestCounts.get('/jwks') ?? 0) - before).to.be.at.most(1);
      } finally {
        await setConfig('jwks_refresh_interval', '30');
      }
    });
  });

  it('is shown to operators by dms auth issuers: each provider, and whether its keys were fetched', async () => {
    const { account, user } = await mappedUser();
    await expectWhoami(await provider.accessToken(user), account);
    const printed: string[] = [];
    const log = console.log;
    console.log = (text: string) => printed.push(text);
    let status: number;
    try {
      status = await authIssuersCommand(
        loadServiceConfig({ DMS_DATA_DIR: server.dataDir, DMS_OIDC_PROVIDERS: providersFile }),
        {
          json: true,
        },
      );
    } finally {
      console.log = log;
    }
    const run = { status, stdout: printed.join('\n') };
    expect(run.status).to.equal(0);
    const [trusted, down] = JSON.parse(run.stdout) as {
      nickname: string;
      keys_fetched_at: string | null;
      key_ids: string[];
      last_error: string | null;
    }[];
    expect(trusted).to.include({ nickname: 'testidp', last_error: null });
    expect(trusted!.keys_fetched_at).to.be.a('string');
    expect(trusted!.key_ids).to.include(provider.signingKey().kid);
    expect(down).to.include({ nickname: 'down', keys_fetched_at: null });
  });

  describe('the authorization-code flow', () => {
    const startLogin = async (headers: Record<string, string>): Promise<URL> => {
      const response = expectStatus(await server.call('GET', '/auth/oidc', { headers }), 200);
      return new URL(String(response.headers['x-svc-oidc-auth-url']));
    };
    const onService = (url: URL, headers: Record<string, string> = {}) =>
      server.call('GET', `${url.pathname}${url.search}`, { headers });
    const fetchToken = (code: string) =>
      server.call('GET', `/auth/oidc_redirect?${code}`, { headers: { 'X-Svc-Client-Fetch-Token': 'True' } });

    it('logs in automatically (X-Svc-Client-Authorize-Auto): the provider sends the client to /auth/oidc_token, which answers the token', async () => {
      const { account, user } = await mappedUser();
      const authUrl = await startLogin({ 'X-Svc-Account': account, 'X-Svc-Client-Authorize-Auto': 'True' });
      expect(authUrl.origin).to.equal(provider.issuer);
      expect(authUrl.searchParams.get('code_challenge_method')).to.equal('S256');
      const callback = await provider.authorize(authUrl.href, user);
      expect(callback.pathname).to.equal('/auth/oidc_token');
      const answer = expectStatus(await onService(callback), 200);
      const token = String(answer.headers['x-svc-auth-token']);
      expect(token).to.match(new RegExp(`^${account}-oidc-unknown-[0-9a-f]{32}$`));
      expect(answer.headers['x-svc-auth-token-expires']).to.match(/ UTC$/);
      await expectWhoami(token, account);
      // The provider's answer is used once: a replay finds the login request taken.
      expectError(await onService(callback), 401, 'CannotAuthorize', /Cannot authorize token request/);
    });

    it('lets a polling client fetch its token once the user has logged in through /auth/oidc_redirect', async () => {
      const { account, user } = await mappedUser();
      const url = await startLogin({ 'X-Svc-Account': account, 'X-Svc-Client-Authorize-Polling': 'True' });
      expect(url.pathname).to.equal('/auth/oidc_redirect');
      const code = url.search.slice(1);
      expectError(await fetchToken(code), 401, 'CannotAuthenticate', /Cannot finalize your token request/);
      const callback = await provider.authorize(url.href, user);
      expect(callback.pathname).to.equal('/auth/oidc_code');
      const page = expectStatus(await onService(callback), 200);
      expect(page.headers['content-type']).to.match(/^text\/html/);
      const token = String(expectStatus(await fetchToken(code), 200).headers['x-svc-auth-token']);
      await expectWhoami(token, account);
      expectError(await fetchToken(code), 401, 'CannotAuthenticate');
    });

    it('shows a browser user the code to paste, which fetches the token of the default account', async () => {
      const { account, user } = await mappedUser();
      const url = await startLogin({});
      const callback = await provider.authorize(url.href, user);
      const page = expectStatus(await onService(callback), 200).text;
      const code = /<code>([\w-]+)<\/code>/.exec(page)?.[1];
      expect(code, page).to.be.a('string');
      const token = String(expectStatus(await fetchToken(code!), 200).headers['x-svc-auth-token']);
      await expectWhoami(token, account);
    });

    it('refuses a provider user whose identity is mapped to no account', async () => {
      const { account } = await mappedUser();
      const authUrl = await startLogin({ 'X-Svc-Account': account, 'X-Svc-Client-Authorize-Auto': 'True' });
      const callback = await provider.authorize(authUrl.href, uniqueName('stranger'));
      expectError(await onService(callback), 401, 'CannotAuthorize', /is unknown to Rucio/);
    });

    it('refuses to start without the scope and audience the server requires, or with an unknown provider', async () => {
      expectError(
        await server.call('GET', '/auth/oidc', { headers: { 'X-Svc-Client-Authorize-Scope': 'openid' } }),
        401,
        'CannotAuthenticate',
        /Requirements of scope and audience/,
      );
      expectError(
        await server.call('GET', '/auth/oidc', { headers: { 'X-Svc-Client-Authorize-Issuer': 'nowhere' } }),
        401,
        'CannotAuthenticate',
        /nowhere is not configured/,
      );
    });

    it('refreshes a token whose login kept a refresh token (offline_access)', async () => {
      const { account, user } = await mappedUser();
      const authUrl = await startLogin({
        'X-Svc-Account': account,
        'X-Svc-Client-Authorize-Auto': 'True',
        'X-Svc-Client-Authorize-Scope': 'openid profile offline_access',
      });
      const token = String(
        expectStatus(await onService(await provider.authorize(authUrl.href, user)), 200).headers['x-svc-auth-token'],
      );
      const refresh = (presented: string) =>
        server.call('GET', '/auth/oidc_refresh', {
          headers: { 'X-Svc-Account': account, 'X-Svc-Auth-Token': presented },
        });
      // Within five minutes of its issue the same token comes back, as Rucio answers.
      const same = expectStatus(await refresh(token), 200);
      expect(same.headers['x-svc-auth-token']).to.equal(token);
      expect(Number(same.headers['x-svc-auth-token-expires'])).to.be.greaterThan(Date.now() / 1000);
      // Later, the provider is asked with the refresh token (the clock of the call moved on six minutes).
      const later = new Date(Date.now() + 6 * 60_000);
      const refreshed = await server.runtime.services.oidc.login.refresh(token, account, later);
      expect(refreshed?.token).to.be.a('string').and.not.equal(token);
      await expectWhoami(refreshed!.token, account);
      // The refresh token went with it: the old token refreshes no more.
      expect(await server.runtime.services.oidc.login.refresh(token, account, later)).to.equal(undefined);
      const none = expectStatus(await refresh(uniqueName('nothing')), 401);
      expect(none.headers['exceptionclass']).to.equal('CannotAuthorize');
    });
  });
});
