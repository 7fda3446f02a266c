import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { protocol, rseWithProtocols } from '../api/replicaSupport.ts';
import { FakeFts3Server } from '../infra/fakeFts3Server.ts';
import { ManualClock } from '../support/clock.ts';
import { newScope } from '../support/dids.ts';
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidcProvider.ts';
import { linkRses, setRseAttributes } from '../support/posixRses.ts';
import { ruleReaches, ruleOverHttp } from '../support/rules.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Transfers with tokens as a WLCG site runs them: two storages with `oidc_support` over WebDAV, the
 * conveyor asking the trusted provider (the real oidc-provider, as this service's own client) for
 * a token per storage with its audience and scope, and handing them to FTS (the look-alike) as
 * `source_tokens` and `destination_tokens`, each kept for the next transfers while it lives.
 */

type FtsFile = {
  source_tokens?: string[];
  destination_tokens?: string[];
  metadata: { request_id: string; scope: string; name: string };
};

describe('Roles: token transfers (oidc_support, the trusted provider, FTS)', function () {
  this.timeout(90_000);
  let provider: TestOidcProvider;
  let fts: FakeFts3Server;
  let server: TestServer;
  let work: { path: string; dispose(): void };
  // Running at the real pace; a test moves it to bring a kept token near its end.
  const clock = new ManualClock({ running: true });

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
    fts = await FakeFts3Server.start();
    work = makeTempDir('tokens-');
    const providers = join(work.path, 'idpsecrets.json');
    writeFileSync(
      providers,
      JSON.stringify({
        iam: {
          issuer: provider.issuer,
          client_id: 'dms-conveyor',
          client_secret: 'conveyor-secret',
          redirect_uris: ['http://127.0.0.1/auth/oidc_code'],
        },
      }),
    );
    server = await startTestServer({
      roles: { workers: true },
      clock,
      environment: { DMS_OIDC_PROVIDERS: providers },
    });
  });
  after(async () => {
    await server.stop();
    await fts.stop();
    await provider.stop();
    work.dispose();
  });

  const tokenRse = async (host: string) => {
    const rse = await rseWithProtocols(server, [{ davs: protocol('davs', host) }]);
    await setRseAttributes(server, rse.rse, { oidc_support: 'true', fts: fts.url, transfertool: 'fts3' });
    return rse;
  };

  const copyOneFile = async (source: string, dest: string, scope: string, name: string): Promise<FtsFile> => {
    expectStatus(
      await server.root('POST', '/replicas', {
        body: { rse: source, files: [{ scope, name, bytes: 100, adler32: '0cc737eb' }] },
      }),
      201,
    );
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name }], copies: 1, rse_expression: dest });
    await ruleReaches(server, ruleId, 'OK', 30_000);
    const files = fts
      .requestsTo('POST', '/jobs')
      .flatMap((request) => (request.body as { files: FtsFile[] }).files)
      .filter((file) => file.metadata.scope === scope && file.metadata.name === name);
    expect(files).to.have.length(1);
    return files[0]!;
  };

  it('hands FTS a token per storage from the trusted provider, with the audience and scope of each', async () => {
    const scope = await newScope(server);
    const source = await tokenRse('src.example.org');
    const dest = await tokenRse('dst.example.org');
    await linkRses(server, source.rse, dest.rse);
    const file = await copyOneFile(source.rse, dest.rse, scope, 'f1');
    const keys = createRemoteJWKSet(new URL(`${provider.issuer}/jwks`));
    const sourceToken = await jwtVerify(file.source_tokens![0]!, keys, {
      issuer: provider.issuer,
      audience: 'src.example.org',
    });
    expect(sourceToken.payload.scope).to.equal('offline_access storage.read:/data');
    const destToken = await jwtVerify(file.destination_tokens![0]!, keys, {
      issuer: provider.issuer,
      audience: 'dst.example.org',
    });
    expect(destToken.payload.scope).to.equal('offline_access storage.modify:/data storage.read:/data');
    expect(destToken.payload.client_id).to.equal('dms-conveyor');
  });

  it('keeps the tokens for the next transfers while they have more than oidc.token_min_lifetime left', async () => {
    const scope = await newScope(server);
    const source = await tokenRse('src2.example.org');
    const dest = await tokenRse('dst2.example.org');
    await linkRses(server, source.rse, dest.rse);
    const first = await copyOneFile(source.rse, dest.rse, scope, 'f1');
    const asked = provider.requestCounts.get('/token');
    const second = await copyOneFile(source.rse, dest.rse, scope, 'f2');
    expect(second.source_tokens).to.deep.equal(first.source_tokens);
    expect(second.destination_tokens).to.deep.equal(first.destination_tokens);
    expect(provider.requestCounts.get('/token')).to.equal(asked);
  });

  it('asks for new tokens before the kept ones expire: once less than oidc.token_min_lifetime is left', async () => {
    const scope = await newScope(server);
    const source = await tokenRse('src3.example.org');
    const dest = await tokenRse('dst3.example.org');
    await linkRses(server, source.rse, dest.rse);
    const first = await copyOneFile(source.rse, dest.rse, scope, 'f1');
    const expiresAt = decodeJwt(first.destination_tokens![0]!).exp! * 1000;
    // The server's clock moves to a minute before the kept tokens have token_min_lifetime (300 s) left.
    clock.set(expiresAt - 360_000);
    const kept = await copyOneFile(source.rse, dest.rse, scope, 'f2');
    expect(kept.destination_tokens).to.deep.equal(first.destination_tokens);
    // Two minutes later they have less than that left, yet are valid: the next transfer gets new ones.
    clock.advance(120_000);
    expect(clock.now()).to.be.below(expiresAt);
    const asked = provider.requestCounts.get('/token') ?? 0;
    const renewed = await copyOneFile(source.rse, dest.rse, scope, 'f3');
    expect(renewed.destination_tokens).to.not.deep.equal(first.destination_tokens);
    expect(renewed.source_tokens).to.not.deep.equal(first.source_tokens);
    expect(provider.requestCounts.get('/token')).to.equal(asked + 2);
    const keys = createRemoteJWKSet(new URL(`${provider.issuer}/jwks`));
    const { payload } = await jwtVerify(renewed.destination_tokens![0]!, keys, {
      issuer: provider.issuer,
      audience: 'dst3.example.org',
    });
    expect(payload.scope).to.equal('offline_access storage.modify:/data storage.read:/data');
  });

  it('leaves a transfer between RSEs without oidc_support to the certificate', async () => {
    const scope = await newScope(server);
    const source = await rseWithProtocols(server, [{ davs: protocol('davs', 'plain-src.example.org') }]);
    await setRseAttributes(server, source.rse, { fts: fts.url });
    const dest = await tokenRse('plain-dst.example.org');
    await linkRses(server, source.rse, dest.rse);
    const file = await copyOneFile(source.rse, dest.rse, scope, 'f1');
    expect(file).to.not.have.any.keys('source_tokens', 'destination_tokens');
  });
});
