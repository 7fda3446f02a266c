import { expect } from 'chai';
import {
  quarantinedReplicasCollection,
  type QuarantinedReplicaDocument,
} from '../../projections/replica/quarantinedReplicasProjection.ts';
import { replicaId, replicasCollection, type ReplicaDocument } from '../../projections/replica/replicaDocuments.ts';
import { newScope, path } from '../support/dids.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { addReplicas, fileItem, listReplicas, rseWithProtocols } from './replicaSupport.ts';

describe('API: replica states, tombstones, quarantine and dataset replicas', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const replica = (scope: string, name: string, rseId: string) =>
    server.runtime.services.readModels
      .collection<ReplicaDocument>(replicasCollection)
      .get(replicaId(scope, name, rseId));

  it('updates replica states as admins ask, all or nothing, with the guards Rucio forgets', async () => {
    const scope = await newScope(server);
    const { rse, id } = await rseWithProtocols(server);
    await addReplicas(server, rse, [fileItem(scope, 'f1'), fileItem(scope, 'f2')]);
    const update = (files: object[], token = server.rootToken) =>
      server.call('PUT', '/replicas/', { token, body: { rse, files } });
    expectStatus(
      await update([
        { scope, name: 'f1', state: 'TEMPORARY_UNAVAILABLE' },
        { scope, name: 'f2', state: 'C' },
      ]),
      200,
    );
    expectError(
      await update([
        { scope, name: 'f1', state: 'AVAILABLE' },
        { scope, name: 'f2', state: 'T' },
      ]),
      409,
      'UnsupportedOperation',
      /cannot be updated/,
    );
    expect((await replica(scope, 'f1', id))!.state).to.equal('TEMPORARY_UNAVAILABLE');
    expectError(await update([{ scope, name: 'f9', state: 'A' }]), 404, 'ReplicaNotFound', /No row found/);
    expectError(await update([{ scope, name: 'f1' }]), 400, 'KeyError', /'state' not defined/);
    expectStatus(await update([{ scope, name: 'f1', state: 'BEING_DELETED' }]), 200);
    expect(await replica(scope, 'f1', id)).to.deep.include({
      state: 'BEING_DELETED',
      tombstone: '1970-01-01T00:00:00.000Z',
    });
    const user = await server.createUser();
    expectError(
      await update([{ scope, name: 'f2', state: 'A' }], user.token),
      401,
      'AccessDenied',
      /can not update file replicas state/,
    );
  });

  it('sets obsolete tombstones (admins), all or nothing, and never deletes replicas through the API', async () => {
    const scope = await newScope(server);
    const { rse, id } = await rseWithProtocols(server);
    await addReplicas(server, rse, [fileItem(scope, 'f1')]);
    const tombstone = (replicas: object[]) => server.root('POST', '/replicas/tombstone', { body: { replicas } });
    expectError(
      await tombstone([
        { rse, scope, name: 'f1' },
        { rse, scope, name: 'f9' },
      ]),
      404,
      'ReplicaNotFound',
      /could not be found/,
    );
    expect((await replica(scope, 'f1', id))!.tombstone).to.equal(null);
    expectStatus(await tombstone([{ rse, scope, name: 'f1' }]), 201);
    expect((await replica(scope, 'f1', id))!.tombstone).to.equal('1970-01-01T00:00:00.000Z');
    expectError(await tombstone([{ scope, name: 'f1' }]), 400, 'ValueError');
    const user = await server.createUser();
    expectError(
      await server.call('POST', '/replicas/tombstone', {
        token: user.token,
        body: { replicas: [{ rse, scope, name: 'f1' }] },
      }),
      401,
      'AccessDenied',
    );
    expectError(
      await server.root('DELETE', '/replicas', { body: { rse, files: [{ scope, name: 'f1' }] } }),
      401,
      'AccessDenied',
      /can not delete file replicas/,
    );
  });

  it('quarantines dark files of an RSE (admins, 403 otherwise), skipping registered replicas', async () => {
    const scope = await newScope(server);
    const { rse, id } = await rseWithProtocols(server);
    await addReplicas(server, rse, [fileItem(scope, 'f1')]);
    const quarantine = (body: object, token = server.rootToken) =>
      server.call('POST', '/replicas/quarantine', { token, body });
    const dark = [{ path: '/data/dark/1' }, { path: '/data/known', scope, name: 'f1' }];
    expectError(await quarantine({ replicas: dark }), 400, 'InputValidationError', /Either RSE name or RSE id/);
    expectError(
      await quarantine({ rse, replicas: [{ scope, name: 'x' }] }),
      400,
      'InputValidationError',
      /must include path/,
    );
    const user = await server.createUser();
    expectError(
      await quarantine({ rse, replicas: dark }, user.token),
      403,
      'AccessDenied',
      /can not quarantine replicas/,
    );
    expectStatus(await quarantine({ rse_id: id, replicas: dark }), 200);
    expectStatus(await quarantine({ rse, replicas: [{ path: '/data/dark/1' }] }), 200);
    const held = await server.runtime.services.readModels
      .collection<QuarantinedReplicaDocument>(quarantinedReplicasCollection)
      .find({ rse_id: id })
      .toArray();
    expect(held.map((entry) => entry.path)).to.deep.equal(['/data/dark/1']);
  });

  it('lists dataset replicas stored per RSE, computed deep from the files, per RSE and in bulk', async () => {
    const scope = await newScope(server);
    const one = await rseWithProtocols(server);
    const two = await rseWithProtocols(server);
    expectStatus(await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET' } }), 201);
    expectStatus(
      await server.root('POST', path(scope, 'ds', '/dids'), {
        body: { rse: one.rse, dids: [fileItem(scope, 'f1', { bytes: 10 }), fileItem(scope, 'f2', { bytes: 20 })] },
      }),
      201,
    );
    await addReplicas(server, two.rse, [fileItem(scope, 'f1', { bytes: 10 })]);
    expectStatus(
      await server.root('PUT', '/replicas', { body: { rse: two.rse, files: [{ scope, name: 'f1', state: 'C' }] } }),
      200,
    );
    const rows = async (query = '') =>
      expectStatus(await server.root('GET', `/replicas/${scope}/ds/datasets${query}`), 200);
    const stored = (await rows()).lines<Record<string, unknown>>();
    expect(
      stored.map(({ rse, length, bytes, available_length, available_bytes, state }) => ({
        rse,
        length,
        bytes,
        available_length,
        available_bytes,
        state,
      })),
    ).to.have.deep.members([
      { rse: one.rse, length: 2, bytes: 30, available_length: 2, available_bytes: 30, state: 'AVAILABLE' },
      { rse: two.rse, length: 2, bytes: 30, available_length: 0, available_bytes: 0, state: 'UNAVAILABLE' },
    ]);
    const deep = (await rows('?deep=True')).lines<Record<string, unknown>>();
    expect(deep.map(({ rse, available_length, state }) => ({ rse, available_length, state }))).to.deep.equal([
      { rse: one.rse, available_length: 2, state: 'AVAILABLE' },
    ]);
    const onRse = expectStatus(await server.root('GET', `/replicas/rse/${two.rse}`), 200).lines<
      Record<string, unknown>
    >();
    expect(onRse.map((row) => row.name)).to.deep.equal(['ds']);
    const bulk = expectStatus(
      await server.root('POST', '/replicas/datasets_bulk', {
        body: {
          dids: [
            { scope, name: 'ds' },
            { scope, name: 'f1' },
          ],
        },
      }),
      200,
    );
    expect(bulk.lines()).to.have.length(2);
    expectError(
      await server.root('POST', '/replicas/datasets_bulk', { body: { dids: [] } }),
      400,
      'ValueError',
      /List of DIDs is empty/,
    );
    expectError(await server.root('GET', `/replicas/${scope}/none/datasets`), 404, 'DataIdentifierNotFound');
    expectError(await server.root('GET', '/replicas/rse/NO_SUCH_RSE'), 404, 'RSENotFound');
    expectStatus(
      await server.root('DELETE', path(scope, 'ds', '/dids'), { body: { dids: [{ scope, name: 'f2' }] } }),
      200,
    );
    const afterDetach = (await rows()).lines<{
      rse: string;
      available_length: number;
      length: number;
      state: string;
    }>();
    expect(afterDetach.find((row) => row.rse === one.rse)).to.deep.include({
      available_length: 1,
      length: 1,
      state: 'AVAILABLE',
    });
    expect(await listReplicas(server, { dids: [{ scope, name: 'ds' }] })).to.have.length(1);
  });
});
