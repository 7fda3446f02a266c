import { expect } from 'chai';
import { createHash, createHmac, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigurationInvalidError, loadServiceConfig } from '../../infra/serviceConfig.ts';
import { newScope } from '../support/dids.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { addReplicas, fileItem, listReplicas, protocol, rseWithProtocols } from './replicaSupport.ts';
import { rseName } from './rseSupport.ts';

/**
 * Signed URLs, each checked by an implementation of its own here, written from the providers'
 * documents: AWS Signature Version 4 for presigned S3 URLs (recomputed with HMAC-SHA256), GCS V4
 * signing (the RSA signature verified with the service account's public key), Swift temporary
 * URLs (the HMAC recomputed). Nothing is sent to any storage.
 */

const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');
const hmac = (key: string | Buffer, text: string): Buffer => createHmac('sha256', key).update(text).digest();

/** RFC 3986 percent-encoding, as both AWS and Google canonical requests want it. */
const uriEncode = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);

const canonicalPath = (url: URL): string =>
  url.pathname
    .split('/')
    .map((segment) => uriEncode(decodeURIComponent(segment)))
    .join('/');

/** The query without the signature, sorted and encoded: the canonical query string of both schemes. */
const canonicalQuery = (url: URL, signatureName: string): string =>
  [...url.searchParams]
    .filter(([name]) => name !== signatureName)
    .map(([name, value]) => `${uriEncode(name)}=${uriEncode(value)}`)
    .sort()
    .join('&');

/** Recomputes an S3 presigned URL's signature (docs.aws.amazon.com, "Authenticating Requests: Using Query Parameters"). */
const checkSigV4 = (signed: string, secretKey: string, method: string) => {
  const url = new URL(signed);
  const parameter = (name: string) => url.searchParams.get(name)!;
  expect(parameter('X-Amz-Algorithm')).to.equal('AWS4-HMAC-SHA256');
  expect(parameter('X-Amz-SignedHeaders')).to.equal('host');
  const [accessKey, date, region, service, terminator] = parameter('X-Amz-Credential').split('/');
  expect([service, terminator]).to.deep.equal(['s3', 'aws4_request']);
  const canonicalRequest = [
    method,
    canonicalPath(url),
    canonicalQuery(url, 'X-Amz-Signature'),
    `host:${url.host}\n`,
    'host',
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', parameter('X-Amz-Date'), scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secretKey}`, date!), region!), 's3'), 'aws4_request');
  expect(parameter('X-Amz-Signature')).to.equal(hmac(signingKey, stringToSign).toString('hex'));
  return { accessKey, region, expires: Number(parameter('X-Amz-Expires')), url };
};

/** Verifies a GCS V4 signed URL (cloud.google.com, "V4 signing process with your own program"). */
const checkGcsV4 = (signed: string, publicKey: KeyObject, method: string) => {
  const url = new URL(signed);
  const parameter = (name: string) => url.searchParams.get(name)!;
  expect(parameter('X-Goog-Algorithm')).to.equal('GOOG4-RSA-SHA256');
  const [email, date, location, service, terminator] = parameter('X-Goog-Credential').split('/');
  const canonicalRequest = [
    method,
    canonicalPath(url),
    canonicalQuery(url, 'X-Goog-Signature'),
    `host:${url.host}\n`,
    'host',
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const stringToSign = [
    'GOOG4-RSA-SHA256',
    parameter('X-Goog-Date'),
    `${date}/${location}/${service}/${terminator}`,
    sha256Hex(canonicalRequest),
  ].join('\n');
  const valid = verify(
    'sha256',
    Buffer.from(stringToSign),
    publicKey,
    Buffer.from(parameter('X-Goog-Signature'), 'hex'),
  );
  expect(valid, 'the RSA signature verifies with the public key').to.equal(true);
  return { email, expires: Number(parameter('X-Goog-Expires')), url };
};

describe('API: signed URLs for S3, GCS and Swift storage', () => {
  const temp = makeTempDir();
  const accountsFile = join(temp.path, 'rse-accounts.cfg');
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let server: TestServer;
  let scope: string;
  // Names chosen first: the accounts file the server starts with names them.
  const s3 = rseName('S3');
  const gcs = rseName('GCS');
  const swift = rseName('SWIFT');
  let swiftId = 'not yet';

  const writeAccounts = (secretKey: string) =>
    writeFileSync(
      accountsFile,
      JSON.stringify({
        // By name, by id, and a GCS service-account file beside this one, as deployments keep them.
        [s3]: { access_key: 'AKIDEXAMPLE', secret_key: secretKey, signature_version: 's3v4', region: 'eu-west-1' },
        [swiftId]: { tempurl_key: 'swift-secret' },
        [gcs]: { service_account_file: 'gcs-key.json' },
        UNRELATED: { user: 'someone', password: 'kept out of the way' },
      }),
    );

  let unsigned: string;
  let keyless: string;

  before(async () => {
    writeFileSync(
      join(temp.path, 'gcs-key.json'),
      JSON.stringify({
        type: 'service_account',
        client_email: 'rucio@project.iam.gserviceaccount.com',
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      }),
    );
    writeAccounts('s3-secret');
    server = await startTestServer({ environment: { DMS_RSE_ACCOUNTS: accountsFile } });
    const https = { port: 443, prefix: '/bucket', impl: 'rucio.rse.protocols.webdav.Default' };
    await rseWithProtocols(
      server,
      [
        { https: protocol('https', 's3.example.org', { wan: 1 }, https) },
        { root: protocol('root', 'xrd.example.org', { wan: 2 }) },
      ],
      {},
      s3,
    );
    await rseWithProtocols(
      server,
      [{ https: protocol('https', 'storage.googleapis.com', { wan: 1 }, https) }],
      {},
      gcs,
    );
    swiftId = (
      await rseWithProtocols(server, [{ https: protocol('https', 'swift.example.org', { wan: 1 }, https) }], {}, swift)
    ).id;
    unsigned = (await rseWithProtocols(server)).rse;
    keyless = (await rseWithProtocols(server)).rse;
    for (const [rse, service] of [
      [s3, 's3'],
      [gcs, 'gcs'],
      [swift, 'swift'],
      [keyless, 's3'],
    ] as const)
      expectStatus(await server.root('POST', `/rses/${rse}/attr/sign_url`, { body: { value: service } }), 201);
    scope = await newScope(server);
    await addReplicas(server, s3, [fileItem(scope, 'f')]);
    // Now that the Swift RSE has an id, the file names it: the server reads the file again.
    writeAccounts('s3-secret');
  });
  after(async () => {
    await server?.stop();
    temp.dispose();
  });

  const signUrl = (query: string, token = server.rootToken, account = 'root') =>
    server.call('GET', `/credentials/signurl?${query}`, { token, headers: { 'X-Svc-Account': account } });
  const signed = async (query: string): Promise<string> => expectStatus(await signUrl(query), 200).text;
  const encoded = (url: string) => encodeURIComponent(url);

  it('presigns S3 URLs with the AWS SDK for each operation and lifetime, path-style', async () => {
    const url = encoded('https://s3.example.org/bucket/data/a b.txt');
    for (const [operation, method] of [
      ['read', 'GET'],
      ['write', 'PUT'],
      ['delete', 'DELETE'],
    ] as const) {
      const result = checkSigV4(
        await signed(`rse=${s3}&svc=s3&op=${operation}&lifetime=900&url=${url}`),
        's3-secret',
        method,
      );
      expect(result).to.deep.include({ accessKey: 'AKIDEXAMPLE', region: 'eu-west-1', expires: 900 });
      expect(`${result.url.host}${result.url.pathname}`).to.equal('s3.example.org/bucket/data/a%20b.txt');
    }
  });

  it('signs GCS URLs with the service account’s key, V4', async () => {
    const response = expectStatus(
      await signUrl(
        `rse=${gcs}&svc=gcs&op=read&lifetime=3600&url=${encoded('https://storage.googleapis.com/bucket/f.txt')}`,
      ),
      200,
    );
    expect(response.headers['access-control-expose-headers']).to.equal('X-Svc-Auth-Token');
    const result = checkGcsV4(response.text, publicKey, 'GET');
    expect(result).to.deep.include({ email: 'rucio@project.iam.gserviceaccount.com', expires: 3600 });
    expect(result.url.pathname).to.equal('/bucket/f.txt');
    // The default service is gcs, as Rucio's.
    checkGcsV4(
      await signed(`rse=${gcs}&op=write&url=${encoded('https://storage.googleapis.com/bucket/g')}`),
      publicKey,
      'PUT',
    );
  });

  it('makes Swift temporary URLs, the key found by the RSE’s id', async () => {
    const before = Math.floor(Date.now() / 1000);
    const url = new URL(
      await signed(
        `rse=${swift}&svc=swift&op=delete&lifetime=60&url=${encoded('https://swift.example.org:8080/v1/AUTH_x/c/o')}`,
      ),
    );
    const after = Math.floor(Date.now() / 1000);
    expect(`${url.host}${url.pathname}`).to.equal('swift.example.org/v1/AUTH_x/c/o');
    const expires = Number(url.searchParams.get('temp_url_expires'));
    expect(expires).to.be.within(before + 60, after + 60);
    const expected = createHmac('sha1', 'swift-secret').update(`DELETE\n${expires}\n/v1/AUTH_x/c/o`).digest('hex');
    expect(url.searchParams.get('temp_url_sig')).to.equal(expected);
  });

  it('refuses what it may not or cannot sign, with Rucio’s errors', async () => {
    const url = encoded('https://s3.example.org/bucket/f');
    const user = await server.createUser();
    expectError(await signUrl(`rse=${s3}&svc=s3&url=${url}`, user.token, user.account), 401, 'AccessDenied');
    expectError(
      await server.call('GET', `/credentials/signurl?rse=${s3}&url=${url}`, { token: server.rootToken }),
      400,
      'ValueError',
      /Parameter "account" not found/,
    );
    expectError(await signUrl(`svc=s3&url=${url}`), 400, 'ValueError', /Parameter "rse" not found/);
    expectError(await signUrl(`rse=${s3}&svc=s3`), 400, 'ValueError', /Parameter "url" not found/);
    expectError(
      await signUrl(`rse=${s3}&svc=ftp&url=${url}`),
      400,
      'ValueError',
      /^Parameter "svc" must be either empty \(which defaults to "gcs"\), "gcs", "s3" or "swift"$/,
    );
    expectError(
      await signUrl(`rse=${s3}&svc=s3&op=copy&url=${url}`),
      400,
      'ValueError',
      /^Parameter "op" must be either empty \(which defaults to "read"\), "read", "write", or "delete"\.$/,
    );
    expectError(
      await signUrl(`rse=${s3}&svc=s3&lifetime=0&url=${url}`),
      400,
      'ValueError',
      /^'lifetime' must be a whole number of seconds from 1 to 604800, not 0$/,
    );
    expectError(
      await signUrl(`rse=${s3}&svc=s3&lifetime=x&url=${url}`),
      400,
      'ValueError',
      /^invalid literal for int\(\) with base 10: 'x' \(lifetime\)$/,
    );
    // Empty svc and op are the defaults: gcs (for which this RSE has no account) and read.
    expectError(
      await signUrl(`rse=${s3}&svc=&op=&url=${url}`),
      500,
      'ErrorLoadingCredentials',
      /no GCS service account/,
    );
    // The query's values are read in Rucio's order: rse, url, lifetime, svc, op.
    expectError(await signUrl(`svc=ftp&lifetime=x`), 400, 'ValueError', /^Parameter "rse" not found$/);
    expectError(await signUrl(`rse=${s3}&svc=ftp&lifetime=x`), 400, 'ValueError', /^Parameter "url" not found$/);
    expectError(await signUrl(`rse=${s3}&url=${url}&op=copy&svc=ftp&lifetime=x`), 400, 'ValueError', /\(lifetime\)$/);
    expectError(await signUrl(`rse=${s3}&url=${url}&op=copy&svc=ftp`), 400, 'ValueError', /"svc"/);
    expectError(await signUrl(`rse=NO_SUCH_RSE&svc=s3&url=${url}`), 404, 'RSENotFound');
    expectError(await signUrl(`rse=${unsigned}&svc=s3&url=${url}`), 409, 'UnsupportedOperation', /no sign_url/);
    expectError(await signUrl(`rse=${keyless}&svc=s3&url=${url}`), 500, 'ErrorLoadingCredentials', /no S3 keys/);
    expectError(
      await signUrl(`rse=${s3}&svc=s3&url=${encoded('https://s3.example.org/bucket/%E0%A4%A')}`),
      409,
      'UnsupportedOperation',
      /not percent-encoded UTF-8/,
    );
    expectError(
      await signUrl(`rse=${s3}&svc=s3&url=${encoded('https://s3.example.org/bucket')}`),
      409,
      'UnsupportedOperation',
      /Not a valid Path-Style S3 URL/,
    );
  });

  it('signs the https PFNs of sign_url RSEs in root’s listings for the lifetime asked, and no one else’s', async () => {
    const body = { dids: [{ scope, name: 'f' }], schemes: ['https', 'root'], signature_lifetime: 120 };
    const [line] = await listReplicas(server, body);
    const [https, root] = Object.keys(line!.pfns);
    expect(checkSigV4(https!, 's3-secret', 'GET').expires).to.equal(120);
    expect(root).to.match(/^root:\/\/xrd\.example\.org:1094\/data\//);
    const user = await server.createUser();
    const response = await server.call('POST', '/replicas/list', { body, token: user.token });
    const [plain] = expectStatus(response, 200).lines<{ pfns: Record<string, unknown> }>();
    expect(Object.keys(plain!.pfns)[0]).to.match(new RegExp(`^https://s3\\.example\\.org:443/bucket/${scope}/`));
  });

  it('reads the accounts file again when it changes', async () => {
    const url = encoded('https://s3.example.org/bucket/f');
    writeAccounts('a-new-and-longer-s3-secret');
    checkSigV4(await signed(`rse=${s3}&svc=s3&url=${url}`), 'a-new-and-longer-s3-secret', 'GET');
  });

  it('refuses to start with an accounts file it cannot use, naming the variable', () => {
    const broken = join(temp.path, 'broken.cfg');
    writeFileSync(broken, JSON.stringify({ SOME_RSE: { access_key: 'only half' } }));
    let failure: unknown;
    try {
      loadServiceConfig({ DMS_RSE_ACCOUNTS: broken });
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(ConfigurationInvalidError);
    expect(String(failure)).to.match(/DMS_RSE_ACCOUNTS=.*access_key and secret_key go together/);
  });
});
