import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newScope } from '../support/dids.ts';
import { request } from '../support/http.ts';
import { mmdbFile } from '../support/mmdbFile.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { addReplicas, fileItem, listReplicas, protocol, rseWithProtocols } from './replicaSupport.ts';

/**
 * Download redirects and their metalink, with a GeoIP database the test writes: the tests' own
 * address (127.0.0.1) is in Sydney, 10.1.0.0/16 in Geneva, 192.0.2.0/24 in Chicago, so from
 * here Chicago is the nearer of the two storages. Behind a trusted proxy, X-Forwarded-For names
 * the client.
 */
describe('API: download redirects and metalinks', () => {
  let server: TestServer;
  const temp = makeTempDir();
  let scope: string;
  let geneva: string;
  let chicago: string;

  before(async () => {
    const database = join(temp.path, 'GeoLite2-City.mmdb');
    writeFileSync(
      database,
      mmdbFile([
        { network: '127.0.0.1/32', latitude: -33.87, longitude: 151.21 },
        { network: '10.1.0.0/16', latitude: 46.23, longitude: 6.05 },
        { network: '192.0.2.0/24', latitude: 41.84, longitude: -88.26 },
      ]),
    );
    server = await startTestServer({ environment: { DMS_GEOIP_DB: database, DMS_TRUST_PROXY: 'true' } });
    scope = await newScope(server);
    const https = { port: 443, prefix: '/eos', impl: 'rucio.rse.protocols.webdav.Default' };
    ({ rse: geneva } = await rseWithProtocols(server, [
      { https: protocol('https', '10.1.0.5', { wan: 1, lan: 1 }, https) },
    ]));
    ({ rse: chicago } = await rseWithProtocols(server, [
      { davs: protocol('davs', '192.0.2.10', { wan: 1, lan: 1 }, https) },
    ]));
    expectStatus(await server.root('POST', `/rses/${geneva}/attr/site`, { body: { value: 'CERN' } }), 201);
    expectStatus(await server.root('POST', `/rses/${chicago}/attr/site`, { body: { value: 'FNAL' } }), 201);
    await addReplicas(server, geneva, [fileItem(scope, 'f')]);
    await addReplicas(server, chicago, [fileItem(scope, 'f')]);
  });
  after(async () => {
    await server.stop();
    temp.dispose();
  });

  /** No token: redirects are for any HTTP client. */
  const get = (path: string, headers: Record<string, string> = {}) => request(server.url, 'GET', path, { headers });
  const location = async (path: string, headers: Record<string, string> = {}): Promise<string> => {
    const response = expectStatus(await get(path, headers), 303);
    return String(response.headers.location);
  };
  const genevaUrl = () => `https://10.1.0.5:443/eos/${scope}/`;
  const chicagoUrl = () => `https://192.0.2.10:443/eos/${scope}/`;

  it('answers 303 to the named RSE’s replica, with a Link to the metalink', async () => {
    const response = expectStatus(await get(`/redirect/${scope}/f?rse=${geneva}`), 303);
    expect(response.headers.location).to.match(new RegExp(`^${genevaUrl()}`));
    expect(response.headers.link).to.equal(
      `</redirect/${scope}/f/metalink?schemes=davs,https,s3&select=random>; rel=describedby; type="application/metalink+xml"`,
    );
    // The RSE's own URL, not made https: only a choice among replicas is.
    expect(await location(`/redirect/${scope}/f?rse=${chicago}`)).to.match(/^davs:\/\/192\.0\.2\.10:443\//);
  });

  it('chooses a replica on the client’s site, made https', async () => {
    expect(await location(`/redirect/${scope}/f/?site=FNAL`)).to.match(new RegExp(`^${chicagoUrl()}`));
    const elsewhere = await get(`/redirect/${scope}/f?site=DESY`);
    expect([elsewhere.status, elsewhere.text]).to.deep.equal([
      404,
      'no redirection possible - no valid RSE for HTTP redirection found',
    ]);
  });

  it('chooses the nearest replica by the GeoIP database: of the caller, the forwarded client, or the ip asked', async () => {
    expect(await location(`/redirect/${scope}/f?select=geoip`)).to.match(new RegExp(`^${chicagoUrl()}`));
    expect(await location(`/redirect/${scope}/f?sort=geoip`, { 'X-Forwarded-For': '10.1.77.1' })).to.match(
      new RegExp(`^${genevaUrl()}`),
    );
    expect(await location(`/redirect/${scope}/f?select=geoip&ip=10.1.0.9`)).to.match(new RegExp(`^${genevaUrl()}`));
  });

  it('chooses at random by default, among every replica', async () => {
    const seen = new Set<string>();
    for (let attempt = 0; attempt < 60 && seen.size < 2; attempt += 1)
      seen.add((await location(`/redirect/${scope}/f`)).split('/')[2]!);
    expect([...seen].sort()).to.deep.equal(['10.1.0.5:443', '192.0.2.10:443']);
  });

  it('answers 404 for what it cannot redirect to, and 400 for a path that names no DID', async () => {
    const missing = await get(`/redirect/${scope}/nothing`);
    expect([missing.status, missing.text]).to.deep.equal([404, 'no redirection possible - file does not exist']);
    expectError(await get(`/redirect/${scope}/f?select=closest`), 404, 'SortingAlgorithmNotSupported');
    expectError(await get(`/redirect/justascope`), 400, 'ValueError');
  });

  it('answers a Metalink 4 document of every replica, ordered by distance', async () => {
    const response = expectStatus(await get(`/redirect/${scope}/f/metalink?select=geoip`), 200);
    expect(response.headers['content-type']).to.equal('application/metalink4+xml');
    const urls = [...response.text.matchAll(/<url location="([^"]+)" priority="(\d)">([^<]+)<\/url>/g)].map(
      ([, rse, priority, url]) => [rse, priority, url!.split('/')[2]],
    );
    expect(urls).to.deep.equal([
      [chicago, '1', '192.0.2.10:443'],
      [geneva, '2', '10.1.0.5:443'],
    ]);
    expect(response.text).to.include(`<identity>${scope}:f</identity>`);
    expect(response.text).to.include(`<glfn name="/atlas/rucio/${scope}:f"></glfn>`);
    const missing = await get(`/redirect/${scope}/nothing/metalink`);
    expect([missing.status, missing.text]).to.deep.equal([404, 'no redirection possible - cannot find the DID']);
    expectError(
      await get(`/redirect/${scope}/f/metalink`, { Accept: 'application/json' }),
      406,
      'UnsupportedRequestedContentType',
    );
  });

  it('sorts the PFNs of list_replicas by the forwarded client’s place', async () => {
    const body = { dids: [{ scope, name: 'f' }], schemes: ['https', 'davs'], sort: 'geoip' };
    const hosts = async (headers: Record<string, string>) => {
      const response = await server.root('POST', '/replicas/list', { body, headers });
      const [line] = expectStatus(response, 200).lines<{ pfns: Record<string, unknown> }>();
      return Object.keys(line!.pfns).map((pfn) => pfn.split('/')[2]);
    };
    expect(await hosts({})).to.deep.equal(['192.0.2.10:443', '10.1.0.5:443']);
    expect(await hosts({ 'X-Forwarded-For': '10.1.3.4' })).to.deep.equal(['10.1.0.5:443', '192.0.2.10:443']);
    expect(await listReplicas(server, body)).to.have.length(1);
  });
});
