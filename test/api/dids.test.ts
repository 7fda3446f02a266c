import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { newScope, path } from '../support/dids.ts';

describe('API: creating and reading DIDs (behaviour rule 1)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('creates datasets and containers, one by one or in bulk, and reads them back', async () => {
    const scope = await newScope(server);
    const created = await server.root('POST', path(scope, 'ds1'), {
      body: { type: 'DATASET', lifetime: 3600, statuses: { monotonic: true } },
    });
    expectStatus(created, 201);
    expect(created.headers['content-type']).to.equal('application/json');
    expect(created.json()).to.equal('Created');
    expectStatus(
      await server.root('POST', '/dids', {
        body: [
          { scope, name: 'ds2', type: 'dataset', meta: { project: 'p1', colour: 'red' } },
          { scope, name: 'cnt', type: 'C', dids: [{ scope, name: 'ds2' }] },
        ],
      }),
      201,
    );
    const dataset = expectStatus(await server.root('GET', path(scope, 'ds1')), 200).json<Record<string, unknown>>();
    expect(dataset).to.include({
      scope,
      name: 'ds1',
      type: 'DATASET',
      account: 'root',
      open: true,
      monotonic: true,
      length: null,
      bytes: null,
    });
    expect(dataset.expired_at).to.match(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} UTC$/);
    const container = expectStatus(await server.root('GET', path(scope, 'cnt', '/status')), 200).json<
      Record<string, unknown>
    >();
    expect(container).to.include({ type: 'CONTAINER', length: 1, expired_at: null });
    expect(expectStatus(await server.root('GET', path(scope, 'ds2', '/meta')), 200).json()).to.include({
      project: 'p1',
      did_type: 'DATASET',
    });
  });

  it('refuses files, duplicates, unknown scopes and bad names, and a refused bulk creates nothing', async () => {
    const scope = await newScope(server);
    expectError(
      await server.root('POST', path(scope, 'f'), { body: { type: 'FILE' } }),
      409,
      'UnsupportedOperation',
      /Only collection/,
    );
    expectStatus(await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET' } }), 201);
    expectError(
      await server.root('POST', path(scope, 'ds'), { body: { type: 'CONTAINER' } }),
      409,
      'DataIdentifierAlreadyExists',
      /already exists/,
    );
    expectError(
      await server.root('POST', path(uniqueName('nos.'), 'ds'), { body: { type: 'DATASET' } }),
      404,
      'ScopeNotFound',
      /Scope not found!/,
    );
    expectError(
      await server.root('POST', path(scope, '-bad'), { body: { type: 'DATASET' } }),
      400,
      'InvalidObject',
      /Problem validating did/,
    );
    expectError(
      await server.root('POST', path(scope, 'x'), { body: { type: 'BOX' } }),
      400,
      'InvalidObject',
      /is not one of/,
    );
    expectError(await server.root('POST', path(scope, 'x'), { body: {} }), 400, 'KeyError', /'type' not defined/);
    expectError(
      await server.root('POST', path(scope, 'x'), { body: { type: 'DATASET', rules: [{ copies: 1 }] } }),
      400,
      'InvalidObject',
      /rse_expression/,
    );
    expectError(await server.root('GET', path(scope, 'x')), 404, 'DataIdentifierNotFound');
    expectError(
      await server.root('POST', '/dids', {
        body: [
          { scope, name: 'new1', type: 'DATASET' },
          { scope, name: 'ds', type: 'DATASET' },
        ],
      }),
      409,
      'DataIdentifierAlreadyExists',
    );
    expectError(
      await server.root('GET', path(scope, 'new1')),
      404,
      'DataIdentifierNotFound',
      new RegExp(`'${scope}:new1' not found`),
    );
    expectError(await server.root('POST', '/dids', { body: { scope } }), 400, 'TypeError', /body must be a json list/);
    expectError(
      await server.root('POST', '/dids', { body: [{ scope, name: 'owned', type: 'DATASET', account: 'nobody-here' }] }),
      404,
      'AccountNotFound',
    );
    expectError(
      await server.root('POST', '/dids', { body: [{ scope, name: 'timed', type: 'DATASET', lifetime: 'soon' }] }),
      400,
      'InvalidObject',
      /lifetime/,
    );
  });

  it('lets scope owners, admins and anyone in the mock scope create, and nobody else', async () => {
    const owner = await server.createUser();
    const other = await server.createUser();
    const admin = await server.createUser({ admin: true });
    const scope = await newScope(server, owner.account);
    expectStatus(
      await server.call('POST', path(scope, 'mine'), { token: owner.token, body: { type: 'DATASET' } }),
      201,
    );
    expect(expectStatus(await server.root('GET', path(scope, 'mine')), 200).json()).to.include({
      account: owner.account,
    });
    expectError(
      await server.call('POST', path(scope, 'theirs'), { token: other.token, body: { type: 'DATASET' } }),
      401,
      'AccessDenied',
      /can not add data identifier to scope/,
    );
    expectError(
      await server.call('POST', '/dids', { token: other.token, body: [{ scope, name: 'theirs', type: 'DATASET' }] }),
      401,
      'AccessDenied',
      /can not bulk add/,
    );
    expectStatus(
      await server.call('POST', path(scope, 'admins'), { token: admin.token, body: { type: 'DATASET' } }),
      201,
    );
    expectStatus(await server.root('POST', '/scopes/root/mock'), 201);
    const mockName = uniqueName('m');
    expectStatus(
      await server.call('POST', path('mock', mockName), { token: other.token, body: { type: 'CONTAINER' } }),
      201,
    );
  });

  it('parses scope/name paths as Rucio does', async () => {
    const scope = await newScope(server);
    expectStatus(await server.root('POST', path(scope, 'a/b/c'), { body: { type: 'DATASET' } }), 201);
    expect(expectStatus(await server.root('GET', `/dids/${scope}/a/b/c`), 200).json()).to.include({ name: 'a/b/c' });
    expect(expectStatus(await server.root('GET', path(scope, 'a/b/c')), 200).json()).to.include({ name: 'a/b/c' });
    const redirect = await server.root('GET', `/dids/${scope}?name=x`);
    expect(redirect.status).to.equal(308);
    expect(redirect.headers.location).to.equal(`/dids/${scope}/?name=x`);
    expectError(
      await server.root('POST', `/dids/${scope}`, { body: { type: 'DATASET' } }),
      400,
      'ValueError',
      /Could not parse/,
    );
    expectError(await server.root('POST', '/dids/', { body: [] }), 404, 'NotFound');
  });
});

describe('API: opening and closing collections (behaviour rules 3 and 5)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('closes once, reopens for admins only, and refuses other statuses', async () => {
    const owner = await server.createUser();
    const scope = await newScope(server, owner.account);
    expectStatus(await server.call('POST', path(scope, 'ds'), { token: owner.token, body: { type: 'DATASET' } }), 201);
    const status = (body: unknown, token = owner.token) =>
      server.call('PUT', path(scope, 'ds', '/status'), { token, body });
    expectError(
      await status({ open: false, colour: 'red' }),
      409,
      'UnsupportedStatus',
      /The status colour is not a valid data identifier status./,
    );
    expectError(await status({ open: 'maybe' }), 400, 'TypeError', /'open' must be a boolean type/);
    const closed = expectStatus(await status({ open: false }), 200);
    expect(closed.text).to.equal('');
    expect(expectStatus(await server.root('GET', path(scope, 'ds')), 200).json()).to.include({
      open: false,
      length: 0,
      bytes: 0,
    });
    expectError(await status({ open: false }), 409, 'UnsupportedOperation', /cannot be changed/);
    expectError(await status({ open: true }), 401, 'AccessDenied', /can not set status/);
    expectStatus(await status({ open: true }, server.rootToken), 200);
    expectError(await status({ open: true }, server.rootToken), 409, 'UnsupportedOperation', /cannot be changed/);
    expectError(
      await server.root('PUT', path(scope, 'nothing', '/status'), { body: { open: false } }),
      404,
      'DataIdentifierNotFound',
    );
  });
});
