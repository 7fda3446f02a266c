import { expect } from 'chai';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { createRse, getRse, rseName, webdav } from './rseSupport.ts';

type Protocol = {
  scheme: string;
  hostname: string;
  port: number;
  prefix: string;
  domains: { lan: Record<string, number | null>; wan: Record<string, number | null> };
};

describe('API: RSE protocols and PFNs', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const protocols = async (rse: string) =>
    expectStatus(await server.root('GET', `/rses/${rse}/protocols`), 200).json<Protocol[]>();

  it('adds protocols with Rucio defaults and lists them by hostname, scheme and port', async () => {
    const rse = await createRse(server);
    expectError(
      await server.root('GET', `/rses/${rse}/protocols`),
      404,
      'RSEProtocolNotSupported',
      /^No protocols found for this RSE$/,
    );
    expectStatus(await server.root('POST', `/rses/${rse}/protocols/https`, { body: webdav() }), 201);
    expectStatus(
      await server.root('POST', `/rses/${rse}/protocols/root`, {
        body: { impl: 'rucio.rse.protocols.xrootd.Default', domains: { wan: { read: 2 } } },
      }),
      201,
    );
    const listed = await protocols(rse);
    expect(listed.map((protocol) => [protocol.hostname, protocol.scheme, protocol.port])).to.deep.equal([
      ['eos.example.org', 'https', 443],
      ['localhost', 'root', 0],
    ]);
    expect(listed[1]).to.deep.include({ prefix: '', extended_attributes: null });
    expect(listed[1]!.domains).to.deep.equal({
      lan: { read: null, write: null, delete: null },
      wan: { read: 2, write: null, delete: null, third_party_copy_read: null, third_party_copy_write: null },
    });
    const settings = expectStatus(await server.root('GET', `/rses/${rse}/protocols/root`), 200).json<{
      protocols: Protocol[];
      rse: string;
    }>();
    expect(settings.rse).to.equal(rse);
    expect(settings.protocols).to.have.length(2);
    expect((await getRse(server, rse)).protocols).to.deep.equal(listed);
  });

  it('refuses duplicates and bad priorities, domains, operations and bodies, adding nothing', async () => {
    const rse = await createRse(server);
    expectStatus(await server.root('POST', `/rses/${rse}/protocols/https`, { body: webdav() }), 201);
    const add = (body: unknown, scheme = 'davs') => server.root('POST', `/rses/${rse}/protocols/${scheme}`, { body });
    expectError(
      await add(webdav({ prefix: '/other' }), 'https'),
      409,
      'Duplicate',
      /Protocol 'https' on port 443 already registered for {2}'.+' with hostname 'eos.example.org'./,
    );
    expectError(
      await add(webdav({ domains: { wan: { read: -1 } } })),
      409,
      'RSEProtocolPriorityError',
      /The provided priority \(-1\) for operation 'read' in domain 'wan' is not supported./,
    );
    expectError(await add(webdav({ domains: { wan: { read: 'high' } } })), 409, 'RSEProtocolPriorityError');
    expectError(
      await add(webdav({ domains: { site: { read: 1 } } })),
      404,
      'RSEProtocolDomainNotSupported',
      /The protocol domain 'site' is not defined in the schema./,
    );
    expectError(
      await add(webdav({ domains: { wan: { copy: 1 } } })),
      404,
      'RSEOperationNotSupported',
      /Operation 'copy' not defined in schema./,
    );
    expectError(await add({ hostname: 'x' }), 400, 'InvalidObject', /^Missing values!$/);
    expectError(await add(webdav(), 'srm'), 400, 'InvalidObject', /web_service_path/);
    expectError(await add('not json'), 400, 'ValueError');
    expectError(
      await server.root('POST', `/rses/${rseName()}/protocols/https`, { body: webdav() }),
      404,
      'RSENotFound',
    );
    const { token } = await server.createUser();
    expectError(
      await server.call('POST', `/rses/${rse}/protocols/davs`, { token, body: webdav() }),
      401,
      'AccessDenied',
    );
    expect((await protocols(rse)).map((protocol) => protocol.scheme)).to.deep.equal(['https']);
  });

  /** Each refused body, answered word for word as the protocol routes answered it before their schema. */
  const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

  it('answers each bad value of a new protocol with Rucio’s error, word for word, adding nothing', async () => {
    const rse = await createRse(server);
    const add = (body: unknown, scheme = 'davs') => server.root('POST', `/rses/${rse}/protocols/${scheme}`, { body });
    const refusals: [unknown, number, string, string][] = [
      [webdav({ domains: [] }), 400, 'InvalidObject', "Problem validating domains: [] is not of type 'object'"],
      [webdav({ domains: null }), 400, 'InvalidObject', "Problem validating domains: null is not of type 'object'"],
      [webdav({ domains: { wan: 5 } }), 400, 'InvalidObject', "Problem validating domains: 5 is not of type 'object'"],
      [
        webdav({ domains: { wan: { read: true } } }),
        409,
        'RSEProtocolPriorityError',
        "The provided priority (True) for operation 'read' in domain 'wan' is not supported.",
      ],
      [
        webdav({ domains: { lan: { write: 1.5 } } }),
        409,
        'RSEProtocolPriorityError',
        "The provided priority (1.5) for operation 'write' in domain 'lan' is not supported.",
      ],
      [
        webdav({ domains: { wan: { delete: 'high' } } }),
        409,
        'RSEProtocolPriorityError',
        "The provided priority (high) for operation 'delete' in domain 'wan' is not supported.",
      ],
      [
        webdav({ domains: { wan: { read: 1 }, site: 5 } }),
        404,
        'RSEProtocolDomainNotSupported',
        "The protocol domain 'site' is not defined in the schema.",
      ],
      [
        webdav({ domains: { lan: { read: 1, copy: -1 } } }),
        404,
        'RSEOperationNotSupported',
        "Operation 'copy' not defined in schema.",
      ],
      [webdav({ impl: 5 }), 400, 'InvalidObject', "Problem validating protocol: impl 5 is not of type 'string'"],
      [webdav({ impl: '' }), 400, 'InvalidObject', 'Missing values!'],
      [webdav({ impl: null }), 400, 'InvalidObject', 'Missing values!'],
      [webdav({ prefix: 5 }), 400, 'InvalidObject', "Problem validating protocol: prefix 5 is not of type 'string'"],
      [
        webdav({ hostname: ['h'] }),
        400,
        'InvalidObject',
        'Problem validating protocol: hostname ["h"] is not of type \'string\'',
      ],
      [
        webdav({ port: '443' }),
        400,
        'InvalidObject',
        'Problem validating protocol: port "443" is not a non-negative integer',
      ],
      [
        webdav({ port: -1 }),
        400,
        'InvalidObject',
        'Problem validating protocol: port -1 is not a non-negative integer',
      ],
      [
        webdav({ port: 1.5 }),
        400,
        'InvalidObject',
        'Problem validating protocol: port 1.5 is not a non-negative integer',
      ],
      [[webdav()], 400, 'TypeError', 'body must be a json dictionary'],
      [
        webdav({ domains: { site: { read: -1 } }, impl: 5 }),
        404,
        'RSEProtocolDomainNotSupported',
        "The protocol domain 'site' is not defined in the schema.",
      ],
    ];
    for (const [body, status, exceptionClass, message] of refusals)
      expectError(await add(body), status, exceptionClass, exactly(message));
    expectError(
      await add(webdav({ extended_attributes: { space_token: 'X' } }), 'srm'),
      400,
      'InvalidObject',
      exactly('Missing values! For SRM, extended_attributes and web_service_path must be specified'),
    );
    expectStatus(await add(webdav({ extended_attributes: { web_service_path: '/srm/managerv2?SFN=' } }), 'srm'), 201);
    expectStatus(
      await add(webdav({ hostname: null, port: null, extended_attributes: 'web_service_path' }), 'srm'),
      201,
    );
    expect((await protocols(rse)).map(({ scheme, hostname, port }) => [scheme, hostname, port])).to.deep.equal([
      ['srm', 'eos.example.org', 443],
      ['srm', 'localhost', 0],
    ]);
  });

  it('answers each bad change of a protocol with Rucio’s error, word for word, changing nothing', async () => {
    const rse = await createRse(server);
    expectStatus(await server.root('POST', `/rses/${rse}/protocols/https`, { body: webdav() }), 201);
    const change = (body: unknown) => server.root('PUT', `/rses/${rse}/protocols/https`, { body });
    const refusals: [unknown, number, string, string][] = [
      [
        { impl: 5, scheme: 'x', port: 1 },
        400,
        'InvalidObject',
        'Problem validating protocol: scheme, port identify a protocol and cannot be changed',
      ],
      [
        { hostname: 'h' },
        400,
        'InvalidObject',
        'Problem validating protocol: hostname identify a protocol and cannot be changed',
      ],
      [{ domains: 'wan' }, 400, 'InvalidObject', 'Problem validating domains: "wan" is not of type \'object\''],
      [{ domains: { wan: { copy: 1 } } }, 404, 'RSEOperationNotSupported', "Operation 'copy' not defined in schema."],
      [{ prefix: 5, impl: 5 }, 400, 'InvalidObject', "Problem validating protocol: prefix 5 is not of type 'string'"],
      [{ impl: 5 }, 400, 'InvalidObject', "Problem validating protocol: impl 5 is not of type 'string'"],
      [{ impl: null }, 400, 'InvalidObject', 'Missing values: impl cannot be null'],
      [{ impl: '' }, 400, 'InvalidObject', 'Missing values: impl cannot be null'],
      [[], 400, 'TypeError', 'body must be a json dictionary'],
    ];
    for (const [body, status, exceptionClass, message] of refusals)
      expectError(await change(body), status, exceptionClass, exactly(message));
    expectError(
      await server.root('PUT', `/rses/${rse}/protocols/https/eos.example.org/abc`, { body: { impl: 5 } }),
      400,
      'InvalidObject',
      exactly("Problem validating protocol: impl 5 is not of type 'string'"),
    );
    expect((await protocols(rse))[0]).to.deep.include({
      prefix: '/eos/data',
      impl: 'rucio.rse.protocols.webdav.Default',
    });
    expectStatus(await change({ prefix: null, extended_attributes: null, domains: { lan: { read: null } } }), 200);
    expect((await protocols(rse))[0]).to.deep.include({ prefix: '', extended_attributes: null });
  });

  it('refuses a file protocol whose prefix is not an absolute normalised path, on POST and PUT, changing nothing', async () => {
    const rse = await createRse(server);
    const posix = (prefix: string) => ({
      prefix,
      impl: 'rucio.rse.protocols.posix.Default',
      domains: { wan: { read: 1 } },
    });
    for (const prefix of ['../../../somewhere', 'relative/rse', '/data/../etc', '/data/./rse', '/data//rse']) {
      expectError(
        await server.root('POST', `/rses/${rse}/protocols/file`, { body: posix(prefix) }),
        400,
        'InvalidObject',
        /must be an absolute normalised path/,
      );
    }
    expectStatus(await server.root('POST', `/rses/${rse}/protocols/file`, { body: posix('/data/rse/') }), 201);
    expectError(
      await server.root('PUT', `/rses/${rse}/protocols/file`, { body: { prefix: '/data/rse/../../etc' } }),
      400,
      'InvalidObject',
      /the prefix '\/data\/rse\/..\/..\/etc' of a protocol on local files/,
    );
    expect((await protocols(rse)).map((protocol) => protocol.prefix)).to.deep.equal(['/data/rse/']);
  });

  it('updates priorities and prefix by scheme, hostname and port, and swaps priorities as the client does', async () => {
    const rse = await createRse(server);
    expectStatus(await server.root('POST', `/rses/${rse}/protocols/https`, { body: webdav() }), 201);
    expectStatus(
      await server.root('POST', `/rses/${rse}/protocols/root`, {
        body: webdav({ port: 1094, domains: { wan: { read: 2, write: 2 } } }),
      }),
      201,
    );
    expectStatus(
      await server.root('PUT', `/rses/${rse}/protocols/https/eos.example.org/443`, {
        body: { domains: { wan: { read: 2 } } },
      }),
      200,
    );
    expectStatus(
      await server.root('PUT', `/rses/${rse}/protocols/root/eos.example.org/1094`, {
        body: { domains: { wan: { read: 1 } } },
      }),
      200,
    );
    expectStatus(await server.root('PUT', `/rses/${rse}/protocols/root`, { body: { prefix: '/xrootd' } }), 200);
    const [https, root] = await protocols(rse);
    expect(https!.domains.wan).to.deep.include({ read: 2, write: 1 });
    expect(root).to.deep.include({ prefix: '/xrootd' });
    expect(root!.domains.wan).to.deep.include({ read: 1, write: 2 });
    expectError(
      await server.root('PUT', `/rses/${rse}/protocols/root/other.host`, { body: { prefix: '/x' } }),
      404,
      'RSEProtocolNotSupported',
      /for hostname 'other.host'/,
    );
    expectError(
      await server.root('PUT', `/rses/${rse}/protocols/root`, { body: { domains: { wan: { read: -3 } } } }),
      409,
      'RSEProtocolPriorityError',
    );
    expectError(
      await server.root('PUT', `/rses/${rse}/protocols/root`, { body: { port: 2 } }),
      400,
      'InvalidObject',
      /cannot be changed/,
    );
    expectError(
      await server.root('PUT', `/rses/${rse}/protocols/root/eos.example.org/abc`, { body: {} }),
      400,
      'ValueError',
    );
    expect((await protocols(rse))[1]).to.deep.include({ prefix: '/xrootd', port: 1094 });
  });

  it('deletes protocols by scheme, hostname and port', async () => {
    const rse = await createRse(server);
    for (const port of [443, 8443])
      expectStatus(await server.root('POST', `/rses/${rse}/protocols/https`, { body: webdav({ port }) }), 201);
    expectStatus(
      await server.root('POST', `/rses/${rse}/protocols/root`, { body: webdav({ hostname: 'xrd.example.org' }) }),
      201,
    );
    expectError(
      await server.root('DELETE', `/rses/${rse}/protocols/https/eos.example.org/80`),
      404,
      'RSEProtocolNotSupported',
      /does not support protocol 'https' for hostname 'eos.example.org' on port '80'/,
    );
    expectStatus(await server.root('DELETE', `/rses/${rse}/protocols/https/eos.example.org/8443`), 200);
    expect((await protocols(rse)).map((protocol) => protocol.port)).to.deep.equal([443, 443]);
    expectStatus(await server.root('DELETE', `/rses/${rse}/protocols/https`), 200);
    expectStatus(await server.root('DELETE', `/rses/${rse}/protocols/root/xrd.example.org`), 200);
    expectError(await server.root('DELETE', `/rses/${rse}/protocols/root`), 404, 'RSEProtocolNotSupported');
  });

  it('turns lfns into pfns by priority, scheme, domain and operation', async () => {
    const rse = await createRse(server);
    expectStatus(
      await server.root('POST', `/rses/${rse}/protocols/https`, {
        body: webdav({ domains: { wan: { read: 2, write: 1 }, lan: { read: 1 } } }),
      }),
      201,
    );
    expectStatus(
      await server.root('POST', `/rses/${rse}/protocols/root`, {
        body: webdav({
          hostname: 'xrd.example.org',
          port: 1094,
          prefix: '//atlas',
          impl: 'rucio.rse.protocols.xrootd.Default',
          domains: { wan: { read: 1, write: 2 } },
        }),
      }),
      201,
    );
    const pfns = async (query: string) =>
      expectStatus(await server.root('GET', `/rses/${rse}/lfns2pfns?${query}`), 200).json<Record<string, string>>();
    expect(await pfns('lfn=user.jdoe:file1&lfn=data18:AOD.01234._000001.pool.root.1')).to.deep.equal({
      'user.jdoe:file1': 'https://eos.example.org:443/eos/data/user/jdoe/a2/cb/file1',
      'data18:AOD.01234._000001.pool.root.1':
        'https://eos.example.org:443/eos/data/data18/61/67/AOD.01234._000001.pool.root.1',
    });
    expect(await pfns('lfn=user.jdoe:file1&operation=read')).to.deep.equal({
      'user.jdoe:file1': 'root://xrd.example.org:1094//atlas/user/jdoe/a2/cb/file1',
    });
    expect(await pfns('lfn=user.jdoe:file1&operation=read&scheme=https')).to.deep.equal({
      'user.jdoe:file1': 'https://eos.example.org:443/eos/data/user/jdoe/a2/cb/file1',
    });
    expect(await pfns('lfn=user.jdoe:file1&operation=read&domain=lan'))
      .to.have.property('user.jdoe:file1')
      .that.matches(/^https:/);
    expectStatus(
      await server.root('POST', `/rses/${rse}/attr/lfn2pfn_algorithm`, { body: { value: 'identity' } }),
      201,
    );
    expect(await pfns('lfn=user.jdoe:file1')).to.deep.equal({
      'user.jdoe:file1': 'https://eos.example.org:443/eos/data/user/jdoe/file1',
    });
    expectError(
      await server.root('GET', `/rses/${rse}/lfns2pfns?lfn=nocolon&lfn=a:b`),
      400,
      'InvalidPath',
      /LFN\(s\) in invalid format: nocolon/,
    );
    expectError(
      await server.root('GET', `/rses/${rse}/lfns2pfns?lfn=a:b&operation=delete`),
      404,
      'RSEProtocolNotSupported',
    );
    expectError(await server.root('GET', `/rses/${rse}/lfns2pfns?lfn=a:b&scheme=srm`), 404, 'RSEProtocolNotSupported');
    expectError(
      await server.root('GET', `/rses/${rse}/lfns2pfns?lfn=a:b&domain=site`),
      404,
      'RSEProtocolDomainNotSupported',
    );
    expectError(
      await server.root('GET', `/rses/${rse}/lfns2pfns?lfn=a:b&operation=copy`),
      404,
      'RSEOperationNotSupported',
    );
    expectError(await server.root('GET', `/rses/${rseName()}/lfns2pfns?lfn=a:b`), 404, 'RSENotFound');
    expectError(await server.root('GET', `/rses/${rse}/lfns2pfns`), 404, 'ReplicaNotFound', /No replicas found/);
  });

  it('answers a non-deterministic RSE as Rucio does without replicas: no PFN', async () => {
    const rse = await createRse(server, { deterministic: false });
    expectStatus(await server.root('POST', `/rses/${rse}/protocols/https`, { body: webdav() }), 201);
    expectError(
      await server.root('GET', `/rses/${rse}/lfns2pfns?lfn=user.jdoe:file1`),
      404,
      'ReplicaNotFound',
      /No replicas found/,
    );
  });
});
