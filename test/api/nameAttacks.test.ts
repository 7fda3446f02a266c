import { expect } from 'chai';
import { join, posix } from 'node:path';
import { assertCanariesUntouched, plantCanary, type Canary } from '../support/canaries.ts';
import { newScope } from '../support/dids.ts';
import { uniqueName } from '../support/events.ts';
import { hashedPath, plantFile } from '../support/planted.ts';
import type { RequestOptions } from '../support/http.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { rseWithProtocols } from './replicaSupport.ts';

/**
 * Attacks on storage through names, at every route that takes a scope, a name or a path (issue
 * 33): a name that climbs with `..` (`x/../../../../../outside/t1`), a scope made of dots, `.` and
 * empty segments, a PFN or quarantined path that climbs. Each is refused with Rucio's error
 * (400 InvalidObject for names, InvalidPath for paths) and writes nothing; canaries where the
 * escapes would land stay untouched. Names with dots inside segments and a leading `/` still work.
 */
describe('Attacks: names that climb, at every route (issue 33)', function () {
  this.timeout(60_000);
  const dirs = makeTempDir('name-attacks-');
  let server: TestServer;
  let scope: string;
  let a: { rse: string; id: string; prefix: string };
  let nd: { rse: string; id: string; prefix: string };
  const canaries: Canary[] = [];
  const CLIMBING = ['x/../../../../../outside/t1', '../outside/t2', 'a/./b', 'a//b', 'a/', '/'];

  const posixRse = async (label: string, properties: object = {}) => {
    const prefix = join(dirs.path, 'rses', label);
    const domains = {
      lan: { read: 1, write: 1, delete: 1 },
      wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
    };
    const rse = await rseWithProtocols(
      server,
      [{ file: { hostname: 'localhost', port: 0, prefix, impl: 'rucio.rse.protocols.posix.Default', domains } }],
      properties,
    );
    return { ...rse, prefix };
  };

  before(async () => {
    server = await startTestServer();
    scope = await newScope(server);
    a = await posixRse('A');
    nd = await posixRse('ND', { deterministic: false });
    for (const name of CLIMBING) {
      const landing = posix.resolve(a.prefix, hashedPath(scope, name));
      if (!landing.startsWith(`${a.prefix}/`)) canaries.push(plantCanary(landing));
    }
    for (const landing of [join(dirs.path, 'rses', 'outside', 't3'), join(dirs.path, 'rses', 'a4', 'dotdot.txt')])
      canaries.push(plantCanary(landing));
  });
  after(async () => {
    await server.stop();
    dirs.dispose();
  });

  const head = () => server.runtime.eventStore.headPosition();
  /** The request is refused with `exceptionClass` and nothing is written; no canary moves. */
  const refused = async (
    method: string,
    path: string,
    options: Omit<RequestOptions, 'token'>,
    exceptionClass: string,
    message?: RegExp,
    status = 400,
  ): Promise<void> => {
    const before = await head();
    expectError(await server.root(method, path, options), status, exceptionClass, message);
    expect(await head(), `${method} ${path} wrote nothing`).to.equal(before);
    assertCanariesUntouched(canaries);
  };
  const climbing = /Problem validating (name|scope|did|dids|attachments?|replicas): .*(path segment|does not match)/;
  const file = (name: string, extra: object = {}) => ({ scope, name, bytes: 6, adler32: '084b021f', ...extra });

  it('POST /scopes/{account}/{scope}: refuses `..`, `.` and dotted scopes that split into empty directories', async () => {
    for (const bad of ['..', '.', 'user..jdoe', 'user.'])
      await refused('POST', `/scopes/root/${bad}`, { rawPath: true }, 'InvalidObject', /Problem validating scope/);
  });

  it('POST /dids/{scope}/{name} (add_did): refuses a climbing name, sent as raw path segments', async () => {
    for (const name of CLIMBING.filter((name) => name !== '/'))
      await refused(
        'POST',
        `/dids/${scope}/${name}`,
        { rawPath: true, body: { type: 'DATASET' } },
        'InvalidObject',
        climbing,
      );
  });

  it('POST /dids (add_dids): refuses a climbing name or scope in the body', async () => {
    for (const did of [...CLIMBING.map((name) => ({ scope, name })), { scope: '..', name: 'dotdot.txt' }])
      await refused('POST', '/dids', { body: [{ ...did, type: 'DATASET' }] }, 'InvalidObject', climbing);
  });

  it('POST /replicas (add_replicas): refuses a climbing file on a deterministic RSE', async () => {
    for (const name of CLIMBING)
      await refused('POST', '/replicas', { body: { rse: a.rse, files: [file(name)] } }, 'InvalidObject', climbing);
    await refused(
      'POST',
      '/replicas',
      { body: { rse: a.rse, files: [file('dotdot.txt', { scope: '..' })] } },
      'InvalidObject',
    );
  });

  it('POST /replicas: refuses a PFN that climbs out of a non-deterministic RSE’s prefix', async () => {
    for (const relative of ['../outside/t3', 'd/../../outside/t3', './f'])
      await refused(
        'POST',
        '/replicas',
        { body: { rse: nd.rse, files: [file(uniqueName('f'), { pfn: `file://localhost${nd.prefix}/${relative}` })] } },
        'InvalidPath',
        /would not stay below the RSE's prefix/,
      );
  });

  it('POST /dids/{scope}/{name}/dids and /dids/attachments with an RSE: refuse climbing files to register', async () => {
    const dataset = uniqueName('ds');
    expectStatus(await server.root('POST', `/dids/${scope}/${dataset}`, { body: { type: 'DATASET' } }), 201);
    for (const name of CLIMBING) {
      await refused(
        'POST',
        `/dids/${scope}/${dataset}/dids`,
        { body: { rse: a.rse, dids: [file(name)] } },
        'InvalidObject',
        climbing,
      );
      await refused(
        'POST',
        '/dids/attachments',
        { body: { attachments: [{ scope, name: dataset, rse: a.rse, dids: [file(name)] }] } },
        'InvalidObject',
        climbing,
      );
    }
  });

  it('POST /dids/sample: refuses a climbing output name', async () => {
    const dataset = uniqueName('ds');
    expectStatus(await server.root('POST', `/dids/${scope}/${dataset}`, { body: { type: 'DATASET' } }), 201);
    const body = {
      input_scope: scope,
      input_name: dataset,
      output_scope: scope,
      output_name: '../outside/t2',
      nbfiles: 0,
    };
    await refused('POST', '/dids/sample', { body }, 'InvalidObject', climbing);
  });

  it('POST /dirac/addfiles: refuses an LFN with a `..` or `.` element (InvalidPath)', async () => {
    expectStatus(await server.root('PUT', '/config/common/extract_scope/dirac'), 201);
    try {
      for (const lfn of [`/${scope}/ds/../../../outside/t1`, `/${scope}/./ds/f`, `/${scope}/ds/..`])
        await refused('POST', '/dirac/addfiles', { body: { lfns: [{ lfn, rse: a.rse, bytes: 6 }] } }, 'InvalidPath');
    } finally {
      expectStatus(await server.root('DELETE', '/config/common/extract_scope'), 200);
    }
  });

  it('POST /rules, /replicas/tombstone, PUT and DELETE /replicas, /replicas/bad/dids, /lifetime_exceptions/: refuse climbing DIDs', async () => {
    const did = { scope, name: 'x/../../../../../outside/t1' };
    // The rule routes answer InvalidObject with 409, as Rucio's do.
    const rule = { dids: [did], copies: 1, rse_expression: a.rse };
    await refused('POST', '/rules/', { body: rule }, 'InvalidObject', /path segment/, 409);
    await refused('POST', '/replicas/tombstone', { body: { replicas: [{ ...did, rse: a.rse }] } }, 'InvalidObject');
    await refused('PUT', '/replicas', { body: { rse: a.rse, files: [{ ...did, state: 'U' }] } }, 'InvalidObject');
    // Deleting replicas through the API is refused to everyone, as in Rucio, whatever the names.
    await refused('DELETE', '/replicas', { body: { rse: a.rse, files: [did] } }, 'AccessDenied', undefined, 401);
    await refused('POST', '/replicas/bad/dids', { body: { dids: [did], rse: a.rse, reason: 'x' } }, 'InvalidObject');
    await refused(
      'POST',
      '/lifetime_exceptions/',
      { body: { dids: [did], pattern: 'p', comments: 'c', expires_at: '2099-01-01T00:00:00' } },
      'InvalidObject',
    );
  });

  it('POST /replicas/quarantine: refuses a path that climbs out of the prefix (InvalidPath)', async () => {
    for (const path of ['../outside/t3', 'a/../../outside/t3', './a', 'a//b'])
      await refused('POST', '/replicas/quarantine', { body: { rse: a.rse, replicas: [{ path }] } }, 'InvalidPath');
  });

  it('GET /rses/{rse}/lfns2pfns (what an upload writes to): refuses a climbing name instead of giving its PFN', async () => {
    for (const name of ['x/../../../../../outside/t1', 'a/./b']) {
      const response = await server.root('GET', `/rses/${a.rse}/lfns2pfns?lfn=${scope}:${encodeURIComponent(name)}`);
      expectError(response, 400, 'InvalidObject', /path segment/);
    }
    expectError(await server.root('GET', `/rses/${a.rse}/lfns2pfns?lfn=..:dotdot.txt`), 400, 'InvalidObject', /scope/);
  });

  it('POST /import and the file protocol routes: refuse a prefix that climbs', async () => {
    const protocol = {
      scheme: 'file',
      hostname: 'localhost',
      port: 0,
      prefix: `${a.prefix}/../outside`,
      impl: 'rucio.rse.protocols.posix.Default',
    };
    await refused(
      'POST',
      `/rses/${a.rse}/protocols/file`,
      { body: protocol },
      'InvalidObject',
      /absolute normalised path/,
    );
    const rse = `IMPORT_${uniqueName('X')
      .toUpperCase()
      .replaceAll(/[^A-Z0-9]/g, '')}`;
    await refused('POST', '/import', { body: { rses: { [rse]: { protocols: [protocol] } } } }, 'InvalidObject');
  });

  it('GET /replicas/{scope}/{name} (what a download reads): lists a climbing file stored before the fix without a PFN', async () => {
    const name = 'x/../../../../../outside/t3';
    await plantFile(server, { scope, name, bytes: 6, adler32: '084b021f' }, [{ rse: a.rse, rseId: a.id }]);
    const [listed] = expectStatus(
      await server.root('GET', `/replicas/${scope}/${name}`, { rawPath: true }),
      200,
    ).lines<{
      name: string;
      pfns: Record<string, unknown>;
      rses: Record<string, string[]>;
    }>();
    expect(listed).to.deep.include({ name, pfns: {} });
    assertCanariesUntouched(canaries);
  });

  it('still takes names with dots inside their segments and a leading slash', async () => {
    for (const name of ['a..hidden', 'f...1', 'dir/.x', 'dir/..x', '/belle/mc/f..1'])
      expectStatus(await server.root('POST', '/replicas', { body: { rse: a.rse, files: [file(name)] } }), 201);
    expectStatus(await server.root('POST', '/scopes/root/...'), 201);
  });
});
