import { expect } from 'chai';
import { deterministicPath } from '../../domain/rse/lfn2pfn.ts';
import { newScope, path } from '../support/dids.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { addReplicas, fileItem, listReplicas, protocol, rseWithProtocols } from './replicaSupport.ts';
import { rseName } from './rseSupport.ts';

describe('API: registering replicas (behaviour rule 8)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const usage = async (rse: string) =>
    expectStatus(await server.root('GET', `/rses/${rse}/usage`), 200)
      .lines<{ source: string; used: number; files: number }>()
      .find((line) => line.source === 'rucio')!;

  it('creates missing files with their metadata, adds the replicas and counts them on the RSE', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server);
    await addReplicas(server, rse, [
      fileItem(scope, 'f1', {
        bytes: 10,
        md5: 'a'.repeat(32),
        meta: { guid: '8afc4f3e-2e4d-4c4b-9f16-7d3d2a1b0c9e', colour: 'red' },
      }),
      fileItem(scope, 'f2', { bytes: 20, state: 'C' }),
    ]);
    expect(expectStatus(await server.root('GET', path(scope, 'f1')), 200).json()).to.deep.include({
      type: 'FILE',
      bytes: 10,
      account: 'root',
    });
    expect(expectStatus(await server.root('GET', path(scope, 'f1', '/meta?plugin=JSON')), 200).json()).to.deep.equal({
      colour: 'red',
    });
    const [f1, f2] = await listReplicas(server, {
      dids: [
        { scope, name: 'f1' },
        { scope, name: 'f2' },
      ],
      all_states: true,
    });
    expect(f1).to.deep.include({ scope, name: 'f1', bytes: 10, md5: 'a'.repeat(32), states: { [rse]: 'AVAILABLE' } });
    expect(f2!.states).to.deep.equal({ [rse]: 'COPYING' });
    expect(await usage(rse)).to.deep.include({ used: 30, files: 2 });
  });

  it('adds nothing when the replica already exists on the RSE, silently', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server);
    await addReplicas(server, rse, [fileItem(scope, 'f1')]);
    await addReplicas(server, rse, [fileItem(scope, 'f1', { bytes: 999 }), fileItem(scope, 'f1')]);
    expect(await usage(rse)).to.deep.include({ used: 100, files: 1 });
    const [line] = await listReplicas(server, { dids: [{ scope, name: 'f1' }] });
    expect(line!.bytes).to.equal(100);
  });

  it('lets anyone register on a SCRATCHDISK-like RSE, but only admins elsewhere or on RSEs not writable', async () => {
    const scope = await newScope(server);
    const user = await server.createUser();
    const scratch = await rseWithProtocols(server, [], {}, `${rseName('USER')}_SCRATCHDISK`);
    const site = await rseWithProtocols(server);
    await addReplicas(server, scratch.rse, [fileItem(scope, 'mine')], user.token);
    expectError(
      await server.call('POST', '/replicas', {
        token: user.token,
        body: { rse: site.rse, files: [fileItem(scope, 'f')] },
      }),
      401,
      'AccessDenied',
      /can not add file replicas on/,
    );
    expectStatus(await server.root('PUT', `/rses/${scratch.rse}`, { body: { availability_write: false } }), 201);
    const refused = { rse: scratch.rse, files: [fileItem(scope, 'later')], ignore_availability: true };
    expectError(
      await server.call('POST', '/replicas', { token: user.token, body: refused }),
      503,
      'ResourceTemporaryUnavailable',
      /temporary unavailable for writing/,
    );
    expectError(
      await server.root('POST', '/replicas', { body: { ...refused, ignore_availability: false } }),
      503,
      'ResourceTemporaryUnavailable',
    );
    expectStatus(await server.root('POST', '/replicas', { body: refused }), 201);
    expectStatus(await server.root('GET', path(scope, 'later')), 200);
  });

  it('checks PFNs against what a deterministic RSE generates, and stores paths on non-deterministic ones', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server, [{ root: protocol('root', 'xrd.example.org') }]);
    const expected = `root://xrd.example.org:1094/data/${deterministicPath(scope, 'f2')}`;
    await addReplicas(server, rse, [fileItem(scope, 'f2', { pfn: expected })]);
    expect(Object.keys((await listReplicas(server, { dids: [{ scope, name: 'f2' }] }))[0]!.pfns)).to.deep.equal([
      expected,
    ]);
    expectError(
      await server.root('POST', '/replicas', {
        body: { rse, files: [fileItem(scope, 'f3', { pfn: 'root://xrd.example.org:1094/data/elsewhere/f3' })] },
      }),
      400,
      'InvalidPath',
      /does not match the Rucio expected PFNs/,
    );
    expectError(await server.root('GET', path(scope, 'f3')), 404, 'DataIdentifierNotFound');
    const tape = await rseWithProtocols(
      server,
      [{ root: protocol('root', 'tape.example.org') }],
      { deterministic: false },
      rseName('TAPE'),
    );
    expectError(
      await server.root('POST', '/replicas', { body: { rse: tape.rse, files: [fileItem(scope, 'raw')] } }),
      409,
      'UnsupportedOperation',
      /PFN needed/,
    );
    await addReplicas(server, tape.rse, [
      fileItem(scope, 'raw', { pfn: 'root://tape.example.org:1094/data/2026/run7/raw' }),
    ]);
    const [raw] = await listReplicas(server, { dids: [{ scope, name: 'raw' }] });
    expect(Object.keys(raw!.pfns)).to.deep.equal(['root://tape.example.org:1094/data/2026/run7/raw']);
    const lfns = expectStatus(
      await server.root('GET', `/rses/${tape.rse}/lfns2pfns?lfn=${scope}:raw&operation=read`),
      200,
    );
    expect(lfns.json()).to.deep.equal({ [`${scope}:raw`]: 'root://tape.example.org:1094/data/2026/run7/raw' });
    const dids = expectStatus(
      await server.root('POST', '/replicas/dids', {
        body: { rse: tape.rse, pfns: ['root://tape.example.org:1094/data/2026/run7/raw'] },
      }),
      200,
    );
    expect(dids.lines()).to.deep.equal([{ 'root://tape.example.org:1094/data/2026/run7/raw': { scope, name: 'raw' } }]);
  });

  it('refuses bad input with Rucio errors and writes nothing', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server);
    expectError(
      await server.root('POST', '/replicas', { body: { files: [fileItem(scope, 'x')] } }),
      400,
      'KeyError',
      /'rse' not defined/,
    );
    expectError(
      await server.root('POST', '/replicas', { body: { rse, files: [fileItem(scope, 'x', { guid: 'g' })] } }),
      400,
      'InvalidObject',
      /Additional properties/,
    );
    expectError(
      await server.root('POST', '/replicas', { body: { rse, files: [{ scope, name: 'x' }] } }),
      400,
      'InvalidObject',
      /'bytes' is a required property/,
    );
    expectError(
      await server.root('POST', '/replicas', { body: { rse, files: [fileItem(scope, 'bad name!')] } }),
      400,
      'InvalidObject',
      /Problem validating dids/,
    );
    expectError(
      await server.root('POST', '/replicas', { body: { rse, files: [fileItem(scope, 'x', { state: 'SOURCE' })] } }),
      400,
      'InvalidObject',
      /not a replica state/,
    );
    expectError(
      await server.root('POST', '/replicas', { body: { rse: 'NO_SUCH_RSE', files: [fileItem(scope, 'x')] } }),
      404,
      'RSENotFound',
    );
    expectError(
      await server.root('POST', '/replicas', {
        body: { rse, files: [fileItem('no.such.scope', 'x'), fileItem(scope, 'x')] },
      }),
      404,
      'ScopeNotFound',
    );
    expectError(
      await server.root('POST', '/replicas', {
        body: { rse, files: [fileItem(scope, 'x'), fileItem(scope, 'y', { pfn: 'root://other:1/x' })] },
      }),
      400,
      'InvalidPath',
    );
    expectError(await server.root('GET', path(scope, 'x')), 404, 'DataIdentifierNotFound');
    expect(await usage(rse)).to.deep.include({ used: 0, files: 0 });
  });

  it('keeps an RSE holding replicas from being deleted', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server);
    await addReplicas(server, rse, [fileItem(scope, 'f1')]);
    expectError(await server.root('DELETE', `/rses/${rse}`), 404, 'RSEOperationNotSupported', /is not empty/);
  });

  it('registers replicas while attaching with an RSE, creating the files, in one step', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server);
    await addReplicas(server, rse, [fileItem(scope, 'old')]);
    expectStatus(await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET' } }), 201);
    const attach = (dids: object[], parent = 'ds') =>
      server.root('POST', path(scope, parent, '/dids'), { body: { rse, dids } });
    expectStatus(await attach([fileItem(scope, 'new1'), fileItem(scope, 'old')]), 201);
    expect(expectStatus(await server.root('GET', path(scope, 'ds')), 200).json()).to.include({ length: 2, bytes: 200 });
    expectError(
      await attach([fileItem(scope, 'new2'), fileItem(scope, 'old', { bytes: 5 })]),
      412,
      'FileConsistencyMismatch',
      /bytes mismatch/,
    );
    expectError(await server.root('GET', path(scope, 'new2')), 404, 'DataIdentifierNotFound');
    expectStatus(
      await server.root('POST', '/dids/attachments', {
        body: { attachments: [{ scope, name: 'ds', rse, dids: [fileItem(scope, 'new3')] }] },
      }),
      201,
    );
    expectStatus(
      await server.root('POST', '/dids', {
        body: [{ scope, name: 'ds2', type: 'DATASET', rse, dids: [fileItem(scope, 'new4')] }],
      }),
      201,
    );
    const listed = await listReplicas(server, {
      dids: [
        { scope, name: 'ds' },
        { scope, name: 'ds2' },
      ],
    });
    expect(listed.map((line) => line.name)).to.deep.equal(['new1', 'new3', 'old', 'new4']);
    expect(await usage(rse)).to.deep.include({ files: 4 });
  });
});
