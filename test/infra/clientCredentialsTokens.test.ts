import { expect } from 'chai';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { ClientCredentialsTokens, ServiceTokens } from '../../infra/security/clientCredentialsTokens.ts';
import type { OidcProviderConfig } from '../../infra/oidcProviders.ts';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidcProvider.ts';

/**
 * The tokens this service asks a trusted provider for on its own behalf (Rucio's `request_token`:
 * the client credentials grant), against the real oidc-provider: with the audience and scope asked
 * for, kept while they have the minimum lifetime left, and asked for anew before they expire.
 */
describe('Service tokens from a trusted OpenID provider (client credentials)', function () {
  this.timeout(30_000);
  let provider: TestOidcProvider;
  let config: OidcProviderConfig;
  const tokenRequests = () => provider.requestCounts.get('/token') ?? 0;

  before(async () => {
    provider = await startTestOidcProvider();
    await provider.addClient({
      client_id: 'dms-conveyor',
      client_secret: 'conveyor-secret',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    config = {
      nickname: 'iam',
      issuer: provider.issuer,
      clientId: 'dms-conveyor',
      clientSecret: 'conveyor-secret',
      redirectUris: ['http://127.0.0.1/unused'],
    };
  });
  after(async () => provider.stop());

  it('gets a token signed by the provider, for the audience and scope asked', async () => {
    const tokens = new ClientCredentialsTokens(config);
    const token = await tokens.token('storage.example.org', 'offline_access storage.read:/data', 300);
    const { payload } = await jwtVerify(token!, createRemoteJWKSet(new URL(`${provider.issuer}/jwks`)), {
      issuer: provider.issuer,
      audience: 'storage.example.org',
    });
    expect(payload).to.include({ scope: 'offline_access storage.read:/data', client_id: 'dms-conveyor' });
  });

  it('hands a kept token out again while it has more than the minimum lifetime left, without asking the provider', async () => {
    let now = Date.now();
    const tokens = new ClientCredentialsTokens(config, { now: () => now });
    const first = await tokens.token('a.example.org', 'storage.read:/data', 300);
    const asked = tokenRequests();
    now += 60_000;
    expect(await tokens.token('a.example.org', 'storage.read:/data', 300)).to.equal(first);
    expect(tokenRequests()).to.equal(asked);
  });

  it('asks for a new token before the kept one expires: once less than the minimum lifetime is left', async () => {
    provider.setClientCredentialsTtl(600);
    try {
      let now = Date.now();
      const tokens = new ClientCredentialsTokens(config, { now: () => now });
      const first = await tokens.token('b.example.org', 'storage.read:/data', 300);
      // 301 s later the token has 299 s left: less than asked for, so a new one comes.
      now += 301_000;
      const second = await tokens.token('b.example.org', 'storage.read:/data', 300);
      expect(second).to.be.a('string').and.not.equal(first);
      expect(tokens.requested).to.equal(2);
    } finally {
      provider.setClientCredentialsTtl(3600);
    }
  });

  it('asks once for a token several transfers want at the same moment', async () => {
    const tokens = new ClientCredentialsTokens(config);
    const answers = await Promise.all([1, 2, 3].map(() => tokens.token('c.example.org', 'storage.read:/data', 300)));
    expect(new Set(answers).size).to.equal(1);
    expect(tokens.requested).to.equal(1);
  });

  it('gives no token when the provider refuses the client, and says why', async () => {
    const tokens = new ClientCredentialsTokens({ ...config, clientSecret: 'wrong' });
    expect(await tokens.token('d.example.org', 'storage.read:/data', 300)).to.equal(null);
    expect(tokens.lastError).to.match(/the provider answered 401 \(invalid_client\)/);
  });

  it('picks the admin issuer by nickname, or the first provider of the file', () => {
    const service = new ServiceTokens([config, { ...config, nickname: 'other' }]);
    expect(service.forIssuer(null)?.provider.nickname).to.equal('iam');
    expect(service.forIssuer('other')?.provider.nickname).to.equal('other');
    expect(service.forIssuer('unknown')).to.equal(undefined);
  });
});
