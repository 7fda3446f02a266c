import { expect } from 'chai';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { createRse, getRse, rseName } from './rseSupport.ts';

describe('API: RSE distances, usage, limits and QoS policies', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('adds, reads, updates and deletes directed distances', async () => {
    const [source, destination] = [await createRse(server), await createRse(server)];
    const path = `/rses/${source}/distances/${destination}`;
    expect(expectStatus(await server.root('GET', path), 200).json()).to.deep.equal([]);
    expectStatus(await server.root('POST', path, { body: { distance: 5 } }), 201);
    const [distance] = expectStatus(await server.root('GET', path), 200).json<Record<string, unknown>[]>();
    expect(distance).to.deep.include({
      src_rse_id: (await getRse(server, source)).id,
      dest_rse_id: (await getRse(server, destination)).id,
      src_rse: source,
      dest_rse: destination,
      distance: 5,
      ranking: 5,
    });
    expect(distance!.created_at).to.match(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} UTC$/);
    expect(
      expectStatus(await server.root('GET', `/rses/${destination}/distances/${source}`), 200).json(),
    ).to.deep.equal([]);
    expectError(
      await server.root('POST', path, { body: { distance: 6 } }),
      409,
      'Duplicate',
      new RegExp(`Distance from ${source} to ${destination} already exists!`),
    );
    expectStatus(await server.root('PUT', path, { body: { ranking: 7 } }), 200);
    expect(expectStatus(await server.root('GET', path), 200).json<{ distance: number }[]>()[0]!.distance).to.equal(7);
    expectError(await server.root('PUT', path, { body: { distance: 'far' } }), 400, 'InvalidObject', /distance/);
    expectError(
      await server.root('POST', `/rses/${source}/distances/${rseName()}`, { body: { distance: 1 } }),
      404,
      'RSENotFound',
    );
    expectError(await server.root('GET', `/rses/${rseName()}/distances/${destination}`), 404, 'RSENotFound');
    const { token } = await server.createUser();
    expectError(await server.call('DELETE', path, { token }), 401, 'AccessDenied');
    const deleted = expectStatus(await server.root('DELETE', path), 200);
    expect(deleted.text).to.equal('Deleted');
    expect(expectStatus(await server.root('GET', path), 200).json()).to.deep.equal([]);
    expectStatus(await server.root('POST', path, {}), 400);
  });

  it('sets usage per source, lists it with totals, filters by source and keeps the history', async () => {
    const rse = await createRse(server);
    expectStatus(
      await server.root('PUT', `/rses/${rse}/usage`, { body: { source: 'storage', used: 30, free: 70, files: 3 } }),
      200,
    );
    expectStatus(
      await server.root('PUT', `/rses/${rse}/usage`, { body: { source: 'storage', used: 40, free: 60 } }),
      200,
    );
    const usage = expectStatus(await server.root('GET', `/rses/${rse}/usage?source=storage`), 200).lines<
      Record<string, unknown>
    >();
    expect(usage).to.have.length(1);
    expect(usage[0]).to.deep.include({ rse, source: 'storage', used: 40, free: 60, total: 100, files: null });
    const all = expectStatus(await server.root('GET', `/rses/${rse}/usage?per_account=true`), 200).lines<
      Record<string, unknown>
    >();
    expect(all.map((line) => line.source)).to.deep.equal(['rucio', 'storage']);
    expect(all[0]).to.have.property('account_usages').that.deep.equals([]);
    const history = expectStatus(await server.root('GET', `/rses/${rse}/usage/history?source=storage`), 200).lines<
      Record<string, unknown>
    >();
    expect(history.map((line) => line.used)).to.deep.equal([40, 30]);
    expect(history[0]).to.deep.include({ rse, source: 'storage', total: 100, free: 60 });
    expectError(
      await server.root('PUT', `/rses/${rse}/usage`, { body: { used: 1 } }),
      400,
      'KeyError',
      /'source' not defined/,
    );
    expectError(
      await server.root('PUT', `/rses/${rse}/usage`, { body: { source: 'storage', used: 'lots' } }),
      400,
      'InvalidObject',
      /used/,
    );
    expectError(await server.root('GET', `/rses/${rseName()}/usage`), 404, 'RSENotFound');
    expectError(await server.root('GET', `/rses/${rse}/usage?per_account=maybe`), 400, 'TypeError');
    expect(expectStatus(await server.root('GET', `/rses/${rse}/usage?source=storage`), 200).lines()).to.deep.equal(
      usage,
    );
  });

  it('sets, reads and deletes limits', async () => {
    const rse = await createRse(server);
    expect(expectStatus(await server.root('GET', `/rses/${rse}/limits`), 200).json()).to.deep.equal({});
    expectStatus(await server.root('PUT', `/rses/${rse}/limits`, { body: { name: 'MinFreeSpace', value: 1000 } }), 200);
    expectStatus(
      await server.root('PUT', `/rses/${rse}/limits`, { body: { name: 'MaxSpaceAvailable', value: 5000 } }),
      200,
    );
    expect(expectStatus(await server.root('GET', `/rses/${rse}/limits`), 200).json()).to.deep.equal({
      MinFreeSpace: 1000,
      MaxSpaceAvailable: 5000,
    });
    expectStatus(await server.root('DELETE', `/rses/${rse}/limits`, { body: { name: 'MinFreeSpace' } }), 200);
    expectStatus(await server.root('DELETE', `/rses/${rse}/limits`, { body: { name: 'MinFreeSpace' } }), 200);
    expectError(
      await server.root('PUT', `/rses/${rse}/limits`, { body: { name: 'MinFreeSpace' } }),
      400,
      'KeyError',
      /'value' not defined/,
    );
    expectError(
      await server.root('PUT', `/rses/${rse}/limits`, { body: { name: 'MinFreeSpace', value: 1.5 } }),
      400,
      'InvalidObject',
    );
    expectError(await server.root('DELETE', `/rses/${rse}/limits`), 400, 'ValueError');
    const { token } = await server.createUser();
    expectError(
      await server.call('PUT', `/rses/${rse}/limits`, { token, body: { name: 'x', value: 1 } }),
      401,
      'AccessDenied',
    );
    expect(expectStatus(await server.root('GET', `/rses/${rse}/limits`), 200).json()).to.deep.equal({
      MaxSpaceAvailable: 5000,
    });
  });

  it('adds, lists and removes QoS policies', async () => {
    const rse = await createRse(server);
    expectStatus(await server.root('POST', `/rses/${rse}/qos_policy/SSD`), 201);
    expectStatus(await server.root('POST', `/rses/${rse}/qos_policy/TAPE_BACKED`), 201);
    expectError(
      await server.root('POST', `/rses/${rse}/qos_policy/SSD`),
      409,
      'Duplicate',
      /QoS policy SSD already exists!/,
    );
    expect(expectStatus(await server.root('GET', `/rses/${rse}/qos_policy`), 200).json()).to.deep.equal([
      'SSD',
      'TAPE_BACKED',
    ]);
    expectStatus(await server.root('DELETE', `/rses/${rse}/qos_policy/SSD`), 200);
    expectStatus(await server.root('DELETE', `/rses/${rse}/qos_policy/SSD`), 200);
    expect(expectStatus(await server.root('GET', `/rses/${rse}/qos_policy`), 200).json()).to.deep.equal([
      'TAPE_BACKED',
    ]);
    expectError(
      await server.root('POST', `/rses/${rse}/qos_policy/X`, { headers: { Accept: 'text/plain' } }),
      406,
      'UnsupportedRequestedContentType',
    );
    expectError(await server.root('GET', `/rses/${rseName()}/qos_policy`), 404, 'RSENotFound');
  });

  it('lists every account with its usage and quota on an RSE, as lines labelled application/json', async () => {
    const rse = await createRse(server);
    const { account } = await server.createUser();
    expectStatus(await server.root('POST', `/accountlimits/local/${account}/${rse}`, { body: { bytes: 1000 } }), 201);
    const response = expectStatus(await server.root('GET', `/rses/${rse}/accounts/usage`), 200);
    expect(response.headers['content-type']).to.equal('application/json');
    const lines = response.lines<Record<string, unknown>>();
    expect(lines.find((line) => line.account === account)).to.deep.equal({
      rse_id: (await getRse(server, rse)).id,
      rse,
      account,
      used_files: 0,
      used_bytes: 0,
      quota_bytes: 1000,
    });
    expect(lines.find((line) => line.account === 'root')).to.deep.include({ quota_bytes: null, used_bytes: 0 });
  });
});
