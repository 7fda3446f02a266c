import { expect } from 'chai';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { uniqueName } from '../support/events.ts';
import { aFile, newScope, path, registerFiles } from '../support/dids.ts';

describe('API: DID metadata', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const create = async (scope: string, name: string, type = 'DATASET') =>
    expectStatus(await server.root('POST', path(scope, name), { body: { type } }), 201);

  it('sets one key or several, and reads them per plugin', async () => {
    const scope = await newScope(server);
    await create(scope, 'ds');
    expectStatus(await server.root('POST', path(scope, 'ds', '/meta/campaign'), { body: { value: 'mc23' } }), 201);
    expectStatus(
      await server.root('POST', path(scope, 'ds', '/meta'), {
        body: { meta: { run_number: 7, colour: 'red', nested: { a: 1 } } },
      }),
      201,
    );
    const columns = expectStatus(await server.root('GET', path(scope, 'ds', '/meta')), 200).json<
      Record<string, unknown>
    >();
    expect(columns).to.include({
      scope,
      name: 'ds',
      campaign: 'mc23',
      run_number: 7,
      did_type: 'DATASET',
      is_open: true,
      hidden: false,
    });
    expect(columns).to.not.have.property('colour');
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/meta?plugin=json')), 200).json()).to.deep.equal({
      colour: 'red',
      nested: { a: 1 },
    });
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/meta?plugin=ALL')), 200).json()).to.include({
      campaign: 'mc23',
      colour: 'red',
    });
    expectError(
      await server.root('GET', path(scope, 'ds', '/meta?plugin=XML')),
      400,
      'UnsupportedMetadataPlugin',
      /Metadata plugin "XML" is not enabled on the server./,
    );
    expectError(await server.root('GET', path(scope, 'nothing', '/meta')), 404, 'DataIdentifierNotFound');
  });

  it('refuses reserved keys, unmanaged column keys, bad values and keys with a dot, and writes nothing then', async () => {
    const owner = await server.createUser();
    const scope = await newScope(server, owner.account);
    await create(scope, 'ds');
    const set = (meta: Record<string, unknown>, token = server.rootToken) =>
      server.call('POST', path(scope, 'ds', '/meta'), { token, body: { meta } });
    expectError(
      await set({ colour: 'red', bytes: 5 }),
      401,
      'AccessDenied',
      /can not change the value of the metadata key bytes/,
    );
    expectError(
      await server.root('POST', path(scope, 'ds', '/meta/length'), { body: { value: 5 } }),
      401,
      'AccessDenied',
      /can not change this metadata value/,
    );
    expectError(await set({ colour: 'red', type: 'x' }), 400, 'InvalidMetadata', /not accepted/);
    expectError(await set({ 'a.b': 1 }), 400, 'InvalidMetadata', /Restricted character/);
    expectError(await set({ colour: 'red', task_id: 'x' }), 400, 'InvalidValueForKey', /task_id/);
    expectError(await set({ guid: '8afc4f3e-2e4d-4c4b-9f16-7d3d2a1b0c9e' }), 409, 'UnsupportedOperation', /guid for/);
    expectError(
      await server.root('POST', path(scope, 'ds', '/meta'), { body: { recursive: true } }),
      400,
      'KeyError',
      /'meta' not defined/,
    );
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/meta?plugin=JSON')), 200).json()).to.deep.equal(
      {},
    );
    const other = await server.createUser();
    expectError(await set({ colour: 'red' }, other.token), 401, 'AccessDenied', /can not add metadata/);
    expectStatus(await set({ colour: 'red' }, owner.token), 201);
  });

  it('deletes JSON keys only', async () => {
    const scope = await newScope(server);
    await create(scope, 'ds');
    const remove = (query: string) => server.root('DELETE', path(scope, 'ds', `/meta${query}`));
    expectError(await remove(''), 404, 'KeyNotFound', /No key provided to remove/);
    expectError(await remove('?key=colour'), 404, 'DataIdentifierNotFound', /Key not found for data identifier/);
    expectStatus(await server.root('POST', path(scope, 'ds', '/meta/colour'), { body: { value: 'red' } }), 201);
    expectError(await remove('?key=shape'), 404, 'KeyNotFound', /^shape$/);
    expectError(await remove('?key=project'), 409, 'NotImplementedError');
    expectStatus(await remove('?key=colour'), 200);
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/meta?plugin=JSON')), 200).json()).to.deep.equal(
      {},
    );
  });

  it("applies lifetime and recursive column values, and follows a file's events into its dataset", async () => {
    const scope = await newScope(server);
    await registerFiles(server, [aFile(scope, 'f1', { events: 1 }), aFile(scope, 'f2', { events: 2 })]);
    await create(scope, 'ds');
    expectStatus(
      await server.root('POST', path(scope, 'ds', '/dids'), {
        body: {
          dids: [
            { scope, name: 'f1' },
            { scope, name: 'f2' },
          ],
        },
      }),
      201,
    );
    expectStatus(
      await server.root('POST', path(scope, 'ds', '/meta'), {
        body: { meta: { project: 'p9', lifetime: 60, colour: 'x' }, recursive: true },
      }),
      201,
    );
    expect(expectStatus(await server.root('GET', path(scope, 'f2', '/meta')), 200).json()).to.include({
      project: 'p9',
      expired_at: null,
    });
    expect(
      expectStatus(await server.root('GET', path(scope, 'ds')), 200).json<{ expired_at: string }>().expired_at,
    ).to.match(/UTC$/);
    expectStatus(await server.root('POST', path(scope, 'f1', '/meta/events'), { body: { value: 10 } }), 201);
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/meta')), 200).json()).to.include({ events: 12 });
    expectStatus(await server.root('PUT', path(scope, 'ds', '/status'), { body: { open: false } }), 200);
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/meta')), 200).json()).to.include({
      events: 12,
      length: 2,
    });
    expectStatus(await server.root('POST', path(scope, 'ds', '/meta/lifetime'), { body: { value: null } }), 201);
    expect(expectStatus(await server.root('GET', path(scope, 'ds')), 200).json()).to.include({ expired_at: null });
  });

  it('sets metadata on many DIDs at once, or on none of them', async () => {
    const scope = await newScope(server);
    await create(scope, 'a');
    await create(scope, 'b');
    const bulk = (dids: unknown[]) => server.root('POST', '/dids/bulkdidsmeta', { body: { dids, recursive: false } });
    expectError(
      await bulk([
        { scope, name: 'a', meta: { colour: 'red' } },
        { scope, name: 'missing', meta: { colour: 'red' } },
      ]),
      404,
      'DataIdentifierNotFound',
    );
    expectError(
      await bulk([
        { scope, name: 'a', meta: { colour: 'red' } },
        { scope, name: 'b', meta: { run_number: 'x' } },
      ]),
      400,
      'InvalidValueForKey',
    );
    expect(expectStatus(await server.root('GET', path(scope, 'a', '/meta?plugin=JSON')), 200).json()).to.deep.equal({});
    expectStatus(
      await bulk([
        { scope, name: 'a', meta: { colour: 'red' } },
        { scope, name: 'b', meta: { colour: 'blue', run_number: 3 } },
        { scope, name: 'a', meta: { size: 1 } },
      ]),
      201,
    );
    expect(expectStatus(await server.root('GET', path(scope, 'a', '/meta?plugin=JSON')), 200).json()).to.deep.equal({
      colour: 'red',
      size: 1,
    });
    expect(expectStatus(await server.root('GET', path(scope, 'b', '/meta')), 200).json()).to.include({ run_number: 3 });
  });

  it('streams metadata of many DIDs only to clients accepting a stream, inheriting from parents when asked', async () => {
    const scope = await newScope(server);
    await create(scope, 'cnt', 'CONTAINER');
    await create(scope, 'ds');
    expectStatus(
      await server.root('POST', path(scope, 'cnt', '/dids'), { body: { dids: [{ scope, name: 'ds' }] } }),
      201,
    );
    expectStatus(
      await server.root('POST', path(scope, 'cnt', '/meta'), { body: { meta: { colour: 'red', shape: 'round' } } }),
      201,
    );
    expectStatus(await server.root('POST', path(scope, 'ds', '/meta'), { body: { meta: { colour: 'blue' } } }), 201);
    const dids = [
      { scope, name: 'ds' },
      { scope, name: 'missing' },
    ];
    expectError(
      await server.root('POST', '/dids/bulkmeta', { headers: { Accept: 'application/json' }, body: { dids } }),
      406,
      'UnsupportedRequestedContentType',
    );
    const plain = expectStatus(
      await server.root('POST', '/dids/bulkmeta', { headers: { Accept: 'application/x-json-stream' }, body: { dids } }),
      200,
    );
    expect(plain.headers['content-type']).to.equal('application/x-json-stream');
    expect(plain.lines()).to.deep.equal([{ scope, name: 'ds', colour: 'blue' }]);
    const inherited = expectStatus(await server.root('POST', '/dids/bulkmeta', { body: { dids, inherit: true } }), 200);
    expect(inherited.lines()).to.deep.equal([
      { scope, name: 'ds', colour: 'blue', shape: 'round' },
      { scope, name: 'missing' },
    ]);
    const columns = expectStatus(
      await server.root('POST', '/dids/bulkmeta', { body: { dids, plugin: 'DID_COLUMN' } }),
      200,
    ).lines<Record<string, unknown>>();
    expect(columns[0]).to.include({ scope, name: 'ds', did_type: 'DATASET' });
  });
});

describe('API: metadata conventions', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('lists keys and values, adds them for admins, and checks metadata against them', async () => {
    const key = uniqueName('k');
    expect(expectStatus(await server.root('GET', '/meta_conventions/'), 200).json()).to.deep.equal([]);
    expect((await server.root('GET', '/meta_conventions')).status).to.equal(308);
    expectStatus(
      await server.root('POST', `/meta_conventions/${key}`, {
        body: { key_type: 'DATASET', value_type: "<class 'str'>", value_regexp: '^[A-Z]+$' },
      }),
      201,
    );
    expectError(
      await server.root('POST', `/meta_conventions/${key}`, { body: { key_type: 'DATASET' } }),
      409,
      'Duplicate',
      /already exists/,
    );
    expectError(
      await server.root('POST', `/meta_conventions/${uniqueName('k')}`, { body: { key_type: 'BOX' } }),
      400,
      'UnsupportedKeyType',
    );
    expectError(
      await server.root('POST', `/meta_conventions/${uniqueName('k')}`, {
        body: { key_type: 'ALL', value_type: 'list' },
      }),
      400,
      'UnsupportedValueType',
    );
    expectStatus(await server.root('POST', `/meta_conventions/${key}/`, { body: { value: 'AOD' } }), 201);
    expectStatus(await server.root('POST', `/meta_conventions/${key}/`, { body: { value: 'ESD' } }), 201);
    expectError(await server.root('POST', `/meta_conventions/${key}/`, { body: { value: 'AOD' } }), 409, 'Duplicate');
    expectError(
      await server.root('POST', `/meta_conventions/${key}/`, { body: { value: 'aod' } }),
      400,
      'InvalidValueForKey',
      /regular expression/,
    );
    expectError(
      await server.root('POST', `/meta_conventions/${uniqueName('k')}/`, { body: { value: 'AOD' } }),
      404,
      'KeyNotFound',
    );
    expect(expectStatus(await server.root('GET', '/meta_conventions/'), 200).json()).to.deep.equal([key]);
    expect(expectStatus(await server.root('GET', `/meta_conventions/${key}/`), 200).json()).to.deep.equal([
      'AOD',
      'ESD',
    ]);
    expect(expectStatus(await server.root('GET', `/meta_conventions/${uniqueName('k')}/`), 200).json()).to.deep.equal(
      [],
    );

    const { token } = await server.createUser();
    expectError(
      await server.call('POST', `/meta_conventions/${uniqueName('k')}`, { token, body: { key_type: 'ALL' } }),
      401,
      'AccessDenied',
      /can not add key/,
    );

    const scope = await newScope(server);
    expectError(
      await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET', meta: { [key]: 'RAW' } } }),
      400,
      'InvalidValueForKey',
      /allowed values/,
    );
    expectError(await server.root('GET', path(scope, 'ds')), 404, 'DataIdentifierNotFound');
    expectStatus(
      await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET', meta: { [key]: 'AOD' } } }),
      201,
    );
    expectError(
      await server.root('POST', path(scope, 'ds', `/meta/${key}`), { body: { value: 'XYZ' } }),
      400,
      'InvalidValueForKey',
    );
    expectStatus(await server.root('POST', path(scope, 'ds', `/meta/${key}`), { body: { value: 'ESD' } }), 201);
    expectStatus(await server.root('POST', path(scope, 'cnt'), { body: { type: 'CONTAINER' } }), 201);
    expectError(
      await server.root('POST', path(scope, 'cnt', `/meta/${key}`), { body: { value: 'ESD' } }),
      400,
      'InvalidValueForKey',
      /does not apply to a CONTAINER/,
    );
  });

  it('checks a value against `(a+)+$` at once, /ping answering meanwhile, and refuses backreferences when stored', async () => {
    const key = uniqueName('k');
    expectStatus(
      await server.root('POST', `/meta_conventions/${key}`, { body: { key_type: 'ALL', value_regexp: '(a+)+$' } }),
      201,
    );
    const scope = await newScope(server);
    expectStatus(await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET' } }), 201);
    // A backtracking engine takes 2^n steps here: 34 letters held the event loop for 71 s, 3990 would never end.
    const [refused, ping] = await Promise.all([
      server.root('POST', path(scope, 'ds', `/meta/${key}`), { body: { value: `${'a'.repeat(3990)}!` } }),
      server.call('GET', '/ping'),
    ]);
    expectError(refused, 400, 'InvalidValueForKey', /does not match the regular expression/);
    expectStatus(ping, 200);
    expectStatus(await server.root('POST', path(scope, 'ds', `/meta/${key}`), { body: { value: 'aaa' } }), 201);
    expectError(
      await server.root('POST', `/meta_conventions/${uniqueName('k')}`, {
        body: { key_type: 'ALL', value_regexp: '(a)\\1' },
      }),
      400,
      'InvalidObject',
      /backreference .* linear time/,
    );
  });
});
