import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { createRse, rseName, selected, webdav } from './rseSupport.ts';

type Export = {
  rses: Record<string, Record<string, unknown>>;
  distances: Record<string, Record<string, Record<string, unknown>>>;
};

/** An export without what differs between deployments by nature: ids and times. */
const comparable = (data: Export) => {
  const rses = Object.fromEntries(
    Object.entries(data.rses).map(([name, { id: _id, created_at: _created, updated_at: _updated, ...rest }]) => [
      name,
      rest,
    ]),
  );
  const distances = Object.fromEntries(
    Object.entries(data.distances).map(([source, destinations]) => [
      source,
      Object.fromEntries(
        Object.entries(destinations).map(([destination, { distance, ranking }]) => [
          destination,
          { distance, ranking },
        ]),
      ),
    ]),
  );
  return { rses, distances };
};

describe('API: import and export', () => {
  let source: TestServer;
  before(async () => (source = await startTestServer()));
  after(async () => source.stop());

  const exported = async (server: TestServer) => expectStatus(await server.root('GET', '/export'), 200).json<Export>();

  it('seeds an empty deployment that then exports the same RSEs and distances', async () => {
    const disk = await createRse(source, {
      city: 'Geneva',
      country_name: 'CH',
      availability_delete: false,
      continent: 'EU',
    });
    const tape = await createRse(source, { rse_type: 'TAPE', deterministic: false });
    expectStatus(await source.root('POST', `/rses/${disk}/attr/tier`, { body: { value: '1' } }), 201);
    expectStatus(
      await source.root('POST', `/rses/${disk}/attr/lfn2pfn_algorithm`, { body: { value: 'identity' } }),
      201,
    );
    expectStatus(await source.root('POST', `/rses/${disk}/protocols/https`, { body: webdav() }), 201);
    expectStatus(
      await source.root('POST', `/rses/${tape}/protocols/root`, {
        body: webdav({ port: 1094, domains: { wan: { read: 3 } } }),
      }),
      201,
    );
    expectStatus(
      await source.root('PUT', `/rses/${disk}/limits`, { body: { name: 'MinFreeSpace', value: 1024 } }),
      200,
    );
    expectStatus(await source.root('POST', `/rses/${disk}/distances/${tape}`, { body: { distance: 2 } }), 201);
    const original = await exported(source);
    expect(original.rses[disk]).to.deep.include({
      MinFreeSpace: 1024,
      lfn2pfn_algorithm: 'identity',
      verify_checksum: true,
      city: 'Geneva',
    });
    expect(original.rses[disk]).not.to.have.property('continent');
    expect(original.distances[disk]![tape]).to.deep.include({ distance: 2, ranking: 2 });

    const target = await startTestServer();
    try {
      expectStatus(await target.root('POST', '/import', { body: original }), 201);
      const copied = await exported(target);
      expect(comparable(copied)).to.deep.equal(comparable(original));
      expect(await selected(target, 'tier=1')).to.deep.equal([disk]);
      const pfns = expectStatus(await target.root('GET', `/rses/${disk}/lfns2pfns?lfn=user.jdoe:f1`), 200).json();
      expect(pfns).to.deep.equal({ 'user.jdoe:f1': 'https://eos.example.org:443/eos/data/user/jdoe/f1' });
      expectStatus(await target.root('POST', '/import/', { body: original }), 201);
      expect(comparable(await exported(target))).to.deep.equal(comparable(original));
    } finally {
      await target.stop();
    }
  });

  it('edits RSEs that exist and adds accounts with identities that can log in', async () => {
    const rse = await createRse(source, { city: 'Geneva' });
    const account = uniqueName('imp');
    const body = {
      rses: { [rse]: { city: 'Lyon', attributes: { site: 'IN2P3' }, protocols: [{ scheme: 'https', ...webdav() }] } },
      accounts: [
        {
          account,
          email: `${account}@example.org`,
          identities: [{ type: 'userpass', identity: `${account}-login`, password: 'secret-1' }],
        },
      ],
    };
    expectStatus(await source.root('POST', '/import', { body }), 201);
    const attributes = expectStatus(await source.root('GET', `/rses/${rse}/attr/`), 200).json();
    expect(attributes).to.deep.include({ city: 'Lyon', site: 'IN2P3' });
    const info = expectStatus(await source.root('GET', `/accounts/${account}`), 200).json();
    expect(info).to.deep.include({ account, account_type: 'USER', email: `${account}@example.org` });
    expect(await source.login(`${account}-login`, 'secret-1', account)).to.be.a('string');
    const changed = {
      ...body,
      rses: { [rse]: { protocols: [{ scheme: 'https', hostname: 'eos.example.org', port: 443, prefix: '/moved' }] } },
    };
    expectStatus(await source.root('POST', '/import', { body: changed }), 201);
    const protocols = expectStatus(await source.root('GET', `/rses/${rse}/protocols`), 200).json<
      { prefix: string; domains: object }[]
    >();
    expect(protocols).to.have.length(1);
    expect(protocols[0]).to.deep.include({ prefix: '/moved', domains: webdav().domains });
  });

  it('imports nothing at all when any part is refused', async () => {
    const [first, second] = [rseName(), rseName()];
    const account = uniqueName('imp');
    const good = { rses: { [first]: { city: 'Paris' } }, accounts: [{ account, email: 'a@example.org' }] };
    const refusals: [object, number, string][] = [
      [
        {
          ...good,
          rses: {
            ...good.rses,
            [second]: { protocols: [{ scheme: 'https', ...webdav({ domains: { wan: { read: -1 } } }) }] },
          },
        },
        409,
        'RSEProtocolPriorityError',
      ],
      [{ ...good, distances: { [first]: { [rseName()]: { distance: 1 } } } }, 404, 'RSENotFound'],
      [{ ...good, rses: { ...good.rses, lower: {} } }, 400, 'InvalidObject'],
      [{ ...good, rses: { ...good.rses, [second]: { rse_type: 'FLOPPY' } } }, 400, 'InvalidObject'],
      [
        {
          ...good,
          accounts: [
            ...good.accounts,
            { account: 'root', email: 'x@example.org', identities: [{ type: 'saml', identity: 'x' }] },
          ],
        },
        400,
        'IdentityError',
      ],
      [
        {
          ...good,
          accounts: [
            ...good.accounts,
            { account: uniqueName('imp'), identities: [{ type: 'userpass', identity: uniqueName('id') }] },
          ],
        },
        400,
        'IdentityError',
      ],
      [{ ...good, rses: [] }, 400, 'InvalidObject'],
    ];
    for (const [body, status, exceptionClass] of refusals)
      expectError(await source.root('POST', '/import', { body }), status, exceptionClass);
    expectError(await source.root('POST', '/import', { body: '[]' }), 400, 'TypeError');
    expectError(await source.root('GET', `/rses/${first}`), 404, 'RSENotFound');
    expectError(await source.root('GET', `/rses/${second}`), 404, 'RSENotFound');
    expectError(await source.root('GET', `/accounts/${account}`), 404, 'AccountNotFound');
    expectStatus(await source.root('POST', '/import', { body: good }), 201);
    expectStatus(await source.root('GET', `/rses/${first}`), 200);
  });

  it('leaves export to root and import to admins', async () => {
    const admin = await source.createUser({ admin: true });
    const user = await source.createUser();
    expectError(await source.call('GET', '/export', { token: admin.token }), 401, 'AccessDenied');
    expectError(await source.call('POST', '/import', { token: user.token, body: {} }), 401, 'AccessDenied');
    expectStatus(await source.call('POST', '/import', { token: admin.token, body: { rses: {} } }), 201);
    const withoutDistances = expectStatus(await source.root('GET', '/export?distance=false'), 200).json<object>();
    expect(withoutDistances).to.have.keys(['rses']);
  });
});
