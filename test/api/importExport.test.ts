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

  /** Each refused part of an import, answered word for word as the import's reader answered it before its schema. */
  const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

  it('answers each bad part of an import with its error, word for word, importing nothing', async () => {
    const rse = rseName();
    const account = uniqueName('imp');
    const withRse = (entry: unknown) => ({ rses: { [rse]: entry } });
    const withAccount = (entry: object) => ({ accounts: [{ account, ...entry }] });
    const invalid = (detail: string): [number, string, string] => [
      400,
      'InvalidObject',
      `Problem validating import: ${detail}`,
    ];
    const refusals: [unknown, number, string, string][] = [
      [{ rses: [] }, ...invalid("rses [] is not of type 'object'")],
      [withRse(5), ...invalid(`rses.${rse} 5 is not of type 'object'`)],
      [
        { rses: { lower: 5 } },
        400,
        'InvalidObject',
        "Problem validating rse: 'lower' does not match '^([A-Z0-9]+([_-][A-Z0-9]+)*)$'",
      ],
      [withRse({ protocols: {} }), ...invalid(`rses.${rse}.protocols {} is not of type 'array'`)],
      [withRse({ protocols: ['https'] }), ...invalid('protocol "https" is not of type \'object\'')],
      [withRse({ protocols: [{ impl: 'x' }] }), ...invalid(`a protocol of ${rse} has no scheme`)],
      [withRse({ protocols: [{ scheme: '' }] }), ...invalid(`a protocol of ${rse} has no scheme`)],
      [withRse({ protocols: [{ scheme: 5 }] }), ...invalid(`a protocol of ${rse} has no scheme`)],
      [
        withRse({ protocols: [{ scheme: 'https', domains: { site: {} } }] }),
        404,
        'RSEProtocolDomainNotSupported',
        "The protocol domain 'site' is not defined in the schema.",
      ],
      [
        withRse({ protocols: [{ scheme: 'https', hostname: 5 }] }),
        400,
        'InvalidObject',
        "Problem validating protocol: hostname 5 is not of type 'string'",
      ],
      [
        withRse({ protocols: [{ scheme: 'https', port: '1' }] }),
        400,
        'InvalidObject',
        'Problem validating protocol: port "1" is not a non-negative integer',
      ],
      [
        withRse({ protocols: [{ scheme: 'https', impl: 5 }] }),
        400,
        'InvalidObject',
        "Problem validating protocol: impl 5 is not of type 'string'",
      ],
      [withRse({ protocols: [{ scheme: 'https' }] }), 400, 'InvalidObject', 'Missing values!'],
      [
        withRse({ protocols: [{ ...webdav(), scheme: 'srm' }] }),
        400,
        'InvalidObject',
        'Missing values! For SRM, extended_attributes and web_service_path must be specified',
      ],
      [
        withRse({ rse_type: 'FLOPPY', city: 5 }),
        400,
        'InvalidObject',
        'Problem validating rse_type: "FLOPPY" is not one of DISK, TAPE',
      ],
      [withRse({ city: 5 }), 400, 'InvalidObject', "Problem validating city: 5 is not of type 'string'"],
      [withRse({ deterministic: 'maybe' }), 400, 'TypeError', "'deterministic' must be a boolean type."],
      [withRse({ qos_class: 5 }), 400, 'InvalidObject', "Problem validating qos_class: 5 is not of type 'string'"],
      [withRse({ attributes: [] }), ...invalid("attributes [] is not of type 'object'")],
      [
        withRse({ attributes: { tier: [1] } }),
        400,
        'InvalidObject',
        'Problem validating value: [1] is not a string, a number or a boolean',
      ],
      [
        withRse({ verify_checksum: [1] }),
        400,
        'InvalidObject',
        'Problem validating value: [1] is not a string, a number or a boolean',
      ],
      [withRse({ MinFreeSpace: '1' }), 400, 'InvalidObject', 'Problem validating MinFreeSpace: "1" is not an integer'],
      [{ distances: [] }, ...invalid("distances [] is not of type 'object'")],
      [{ distances: { [rse]: 5 } }, ...invalid(`distances.${rse} 5 is not of type 'object'`)],
      [{ distances: { [rse]: { X: 5 } } }, ...invalid(`distances.${rse}.X 5 is not of type 'object'`)],
      [
        { distances: { [rse]: { X: { distance: 'x' } } } },
        400,
        'InvalidObject',
        'Problem validating distance: "x" is not an integer',
      ],
      [
        { distances: { [rse]: { X: { ranking: 1.5 } } } },
        400,
        'InvalidObject',
        'Problem validating distance: 1.5 is not an integer',
      ],
      [{ accounts: {} }, ...invalid("accounts {} is not of type 'array'")],
      [{ accounts: [5] }, ...invalid("account 5 is not of type 'object'")],
      [{ accounts: [{ email: 'x' }] }, 400, 'KeyError', "'account' not defined"],
      [{ accounts: [{ account: null }] }, ...invalid("account null is not of type 'string'")],
      [withAccount({ email: 5 }), ...invalid("email 5 is not of type 'string'")],
      [withAccount({ identities: 'x' }), ...invalid(`identities of ${account} "x" is not of type 'array'`)],
      [withAccount({ identities: [5] }), ...invalid("identity 5 is not of type 'object'")],
      [withAccount({ identities: [{ identity: 'x' }] }), 400, 'KeyError', "'type' not defined"],
      [
        withAccount({ identities: [{ type: 'Saml', identity: 'x' }] }),
        400,
        'IdentityError',
        'Saml is not a valid identity type. Choose from USERPASS, GSS, SSH, X509',
      ],
      [withAccount({ identities: [{ type: 'ssh' }] }), 400, 'KeyError', "'identity' not defined"],
      [
        withAccount({ identities: [{ type: 'ssh', identity: '' }] }),
        ...invalid('identity "" is not a non-empty string'),
      ],
      [
        withAccount({ identities: [{ type: 'userpass', identity: 'x', password: 5 }] }),
        ...invalid("password is not of type 'string'"),
      ],
      [[], 400, 'TypeError', 'body must be a json dictionary'],
    ];
    for (const [body, status, exceptionClass, message] of refusals)
      expectError(await source.root('POST', '/import', { body }), status, exceptionClass, exactly(message));
    expectError(await source.root('GET', `/rses/${rse}`), 404, 'RSENotFound');
    expectError(await source.root('GET', `/accounts/${account}`), 404, 'AccountNotFound');
  });

  it('takes the bitmask only without flags, and a top-level verify_checksum only without the attribute', async () => {
    const rse = rseName();
    const entry = {
      availability: 99,
      availability_write: false,
      attributes: { verify_checksum: false, tier: 2, none: null },
      verify_checksum: [1],
      MinFreeSpace: null,
    };
    expectStatus(await source.root('POST', '/import', { body: { rses: { [rse]: entry } } }), 201);
    const record = expectStatus(await source.root('GET', `/rses/${rse}`), 200).json();
    expect(record).to.deep.include({ availability_read: true, availability_write: false, availability_delete: true });
    const attributes = expectStatus(await source.root('GET', `/rses/${rse}/attr/`), 200).json();
    expect(attributes).to.deep.include({ verify_checksum: false, tier: '2' });
    expect(attributes).not.to.have.property('none');
    expectError(
      await source.root('POST', '/import', { body: { rses: { [rse]: { availability: 99 } } } }),
      400,
      'InvalidObject',
    );
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
