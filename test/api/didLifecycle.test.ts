import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { aFile, newScope, path, registerFiles } from '../support/dids.ts';

/** A message matched whole, word for word. */
const exactly = (text: string): RegExp => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

describe('API: followers, samples, resurrection and listings', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const create = async (scope: string, name: string, type = 'DATASET', extra: Record<string, unknown> = {}) =>
    expectStatus(await server.root('POST', path(scope, name), { body: { type, ...extra } }), 201);

  it('follows and unfollows DIDs, for oneself unless an admin', async () => {
    const scope = await newScope(server);
    const alice = await server.createUser();
    const bob = await server.createUser();
    await create(scope, 'ds');
    const follow = (method: string, account: string, token = alice.token) =>
      server.call(method, path(scope, 'ds', '/follow'), { token, body: { account } });
    expect(expectStatus(await follow('POST', alice.account), 201).json()).to.equal('Created');
    expectError(await follow('POST', alice.account), 409, 'Duplicate', /already follows/);
    expectError(await follow('POST', bob.account), 401, 'AccessDenied');
    expectStatus(await follow('POST', bob.account, server.rootToken), 201);
    expectError(await follow('POST', 'nobody-at-all', server.rootToken), 404, 'AccountNotFound');
    const followers = expectStatus(await server.call('GET', path(scope, 'ds', '/follow'), { token: alice.token }), 200);
    expect(followers.headers['content-type']).to.equal('application/json');
    expect(
      followers
        .lines<{ user: string }>()
        .map((line) => line.user)
        .sort(),
    ).to.deep.equal([alice.account, bob.account].sort());
    expectError(
      await follow('DELETE', bob.account),
      401,
      'AccessDenied',
      /can not remove data identifiers from followed table/,
    );
    expectStatus(await follow('DELETE', alice.account), 200);
    expectStatus(await follow('DELETE', alice.account), 200);
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/follow')), 200).lines()).to.deep.equal([
      { user: bob.account },
    ]);
    expectError(await server.root('GET', path(scope, 'missing', '/follow')), 404, 'DataIdentifierNotFound');
    expectError(
      await server.call('POST', path(scope, 'ds', '/follow'), { token: alice.token, body: {} }),
      400,
      'KeyError',
      /'account' not defined/,
    );
  });

  it('creates samples of the files below a DID, in both route forms', async () => {
    const scope = await newScope(server);
    await registerFiles(
      server,
      Array.from({ length: 6 }, (_, index) => aFile(scope, `f${index}`)),
    );
    await create(scope, 'ds', 'DATASET', {
      dids: Array.from({ length: 6 }, (_, index) => ({ scope, name: `f${index}` })),
    });
    const body = { input_scope: scope, input_name: 'ds', output_scope: scope, output_name: 'sample', nbfiles: '4' };
    expectStatus(await server.root('POST', '/dids/sample', { body }), 201);
    const sample = expectStatus(await server.root('GET', path(scope, 'sample', '/dids')), 200).lines<{
      name: string;
    }>();
    expect(sample).to.have.length(4);
    expect(new Set(sample.map((file) => file.name)).size).to.equal(4);
    expectStatus(await server.root('POST', `/dids/${scope}/ds/${scope}/everything/10/sample`), 201);
    expect(expectStatus(await server.root('GET', path(scope, 'everything')), 200).json()).to.include({
      length: 6,
      open: true,
    });
    expectError(await server.root('POST', '/dids/sample', { body }), 409, 'DataIdentifierAlreadyExists');
    expectError(
      await server.root('POST', '/dids/sample', { body: { ...body, output_name: 'x', nbfiles: 'two' } }),
      400,
      'ValueError',
    );
    expectError(
      await server.root('POST', '/dids/sample', { body: { ...body, output_name: 'x', input_name: 'nothing' } }),
      404,
      'DataIdentifierNotFound',
    );
    const { token } = await server.createUser();
    expectError(
      await server.call('POST', '/dids/sample', { token, body: { ...body, output_name: 'y' } }),
      401,
      'AccessDenied',
    );
  });

  it('refuses a sample whose output names break the generic schema, after its count, in both route forms', async () => {
    const scope = await newScope(server);
    await create(scope, 'ds');
    const body = { input_scope: scope, input_name: 'ds', output_scope: scope, output_name: 'out', nbfiles: 1 };
    const sample = (changes: Record<string, unknown>) =>
      server.root('POST', '/dids/sample', { body: { ...body, ...changes } });
    const long = 'x'.repeat(26);
    expectError(
      await sample({ output_scope: long }),
      400,
      'InvalidObject',
      exactly(`Problem validating did: '${long}' is too long (at most 25 characters)`),
    );
    expectError(
      await sample({ output_scope: 5, output_name: 'a b' }),
      400,
      'InvalidObject',
      exactly("Problem validating did: 'a b' does not match '^[/A-Za-z0-9][/A-Za-z0-9.\\-_]*$'"),
    );
    expectError(
      await sample({ output_name: 'a/../b' }),
      400,
      'InvalidObject',
      exactly(
        "Problem validating did: 'a/../b' holds the path segment '..' (names are paths below an RSE's prefix: no '.', '..' or empty segments)",
      ),
    );
    // The count is read before the output's names.
    expectError(
      await sample({ output_scope: long, nbfiles: 'two' }),
      400,
      'ValueError',
      exactly("invalid literal for int() with base 10: 'two'"),
    );
    const route = (outputScope: string, outputName: string, nbfiles = '1') =>
      server.root('POST', `/dids/${scope}/ds/${outputScope}/${outputName}/${nbfiles}/sample`);
    expectError(
      await route(long, 'out'),
      400,
      'InvalidObject',
      exactly(`Problem validating did: '${long}' is too long (at most 25 characters)`),
    );
    expectError(
      await route(scope, '.hidden'),
      400,
      'InvalidObject',
      exactly("Problem validating did: '.hidden' does not match '^[/A-Za-z0-9][/A-Za-z0-9.\\-_]*$'"),
    );
    expectError(
      await route(long, 'out', 'two'),
      400,
      'ValueError',
      exactly("invalid literal for int() with base 10: 'two'"),
    );
    expectError(await server.root('GET', path(scope, 'out')), 404, 'DataIdentifierNotFound');
  });

  it('resurrects expired DIDs for admins, all listed or none', async () => {
    const scope = await newScope(server);
    await create(scope, 'old', 'DATASET', { lifetime: -60 });
    await create(scope, 'young', 'DATASET', { lifetime: 3600 });
    const { token } = await server.createUser();
    expectError(
      await server.call('POST', '/dids/resurrect', { token, body: [{ scope, name: 'old' }] }),
      401,
      'AccessDenied',
      /can not resurrect/,
    );
    expectError(
      await server.root('POST', '/dids/resurrect', {
        body: [
          { scope, name: 'old' },
          { scope, name: 'young' },
        ],
      }),
      404,
      'DataIdentifierNotFound',
      /Deleted Data identifier/,
    );
    expect(
      expectStatus(await server.root('GET', path(scope, 'old')), 200).json<{ expired_at: string | null }>().expired_at,
    ).to.not.equal(null);
    expectStatus(await server.root('POST', '/dids/resurrect', { body: [{ scope, name: 'old' }] }), 201);
    expect(expectStatus(await server.root('GET', path(scope, 'old')), 200).json()).to.include({ expired_at: null });
    expectError(
      await server.root('POST', '/dids/resurrect', { body: [{ scope }] }),
      400,
      'InvalidObject',
      /'name' is a required property/,
    );
  });

  it('lists new DIDs, a scope as a tree, and no rules yet', async () => {
    const scope = await newScope(server);
    await registerFiles(server, [aFile(scope, 'f1', { bytes: 3 }), aFile(scope, 'loose', { bytes: 4 })]);
    await create(scope, 'ds', 'DATASET', { dids: [{ scope, name: 'f1' }] });
    await create(scope, 'cnt', 'CONTAINER', { dids: [{ scope, name: 'ds' }] });
    const fresh = expectStatus(await server.root('GET', '/dids/new?type=container'), 200).lines<
      Record<string, unknown>
    >();
    expect(fresh).to.deep.include({ scope, name: 'cnt', did_type: 'CONTAINER' });
    expect(fresh.every((did) => did.did_type === 'CONTAINER')).to.equal(true);
    expectError(await server.root('GET', '/dids/new?type=box'), 400, 'ValueError', /^'box' is not a valid DID type$/);
    expect(expectStatus(await server.root('GET', `/dids/${scope}/`), 200).lines()).to.deep.equal([
      { scope, name: 'cnt', type: 'CONTAINER', parent: null, level: 0, bytes: null },
      { scope, name: 'loose', type: 'FILE', parent: null, level: 0, bytes: 4 },
    ]);
    expect(expectStatus(await server.root('GET', `/dids/${scope}/?recursive=True`), 200).lines()).to.deep.equal([
      { scope, name: 'cnt', type: 'CONTAINER', parent: null, level: 0, bytes: null },
      { scope, name: 'ds', type: 'DATASET', parent: { scope, name: 'cnt' }, level: 1 },
      { scope, name: 'f1', type: 'FILE', parent: { scope, name: 'ds' }, level: 2 },
      { scope, name: 'loose', type: 'FILE', parent: null, level: 0, bytes: 4 },
    ]);
    expect(expectStatus(await server.root('GET', `/dids/${scope}/?name=cnt`), 200).lines()).to.deep.equal([
      { scope, name: 'ds', type: 'DATASET', parent: { scope, name: 'cnt' }, level: 1 },
    ]);
    expectError(await server.root('GET', `/dids/${scope}/?name=nothing`), 404, 'DataIdentifierNotFound');
    for (const suffix of ['/rules', '/associated_rules']) {
      const rules = expectStatus(await server.root('GET', path(scope, 'ds', suffix)), 200);
      expect(rules.text).to.equal('');
      expectError(await server.root('GET', path(scope, uniqueName('x'), suffix)), 404, 'DataIdentifierNotFound');
    }
  });

  it('routes the static words and wrong methods as Werkzeug does', async () => {
    const attachments = await server.root('GET', '/dids/attachments');
    expect(attachments.status).to.equal(308);
    expect(attachments.headers.location).to.equal('/dids/attachments/');
    expectError(
      await server.root('POST', '/dids/new', { body: { type: 'DATASET' } }),
      400,
      'ValueError',
      /Could not parse/,
    );
    const scope = await newScope(server);
    await create(scope, 'ds');
    expectError(await server.root('PUT', path(scope, 'ds')), 405, 'MethodNotAllowed');
    expectError(
      await server.root('GET', path(scope, 'ds', '/meta/colour')),
      404,
      'DataIdentifierNotFound',
      /ds\/meta\/colour/,
    );
    expectError(await server.call('GET', path(scope, 'ds')), 400, 'ValueError', /Token must be set/);
  });
});
