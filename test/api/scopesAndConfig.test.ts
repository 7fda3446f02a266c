import { throttlePolicy } from '../../api/auth/loginAttempts.ts';
import { expect } from 'chai';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { uniqueName } from '../support/events.ts';

describe('API: scopes', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('adds scopes through both paths and lists them globally and per account', async () => {
    const { account } = await server.createUser();
    const [first, second] = [`user.${account}`, `group.${account}`];
    expectError(
      await server.root('GET', `/accounts/${account}/scopes/`),
      404,
      'ScopeNotFound',
      new RegExp(`no scopes found for account ID '${account}'`),
    );
    expectStatus(await server.root('POST', `/accounts/${account}/scopes/${first}`), 201);
    expectStatus(await server.root('POST', `/scopes/${account}/${second}`), 201);
    expect(expectStatus(await server.root('GET', `/accounts/${account}/scopes/`), 200).json()).to.deep.equal([
      second,
      first,
    ]);
    expect(expectStatus(await server.root('GET', `/scopes/${account}/scopes`), 200).json()).to.deep.equal([
      second,
      first,
    ]);
    const all = expectStatus(await server.root('GET', '/scopes/'), 200).json<string[]>();
    expect(all).to.include.members([first, second]);
  });

  it('refuses duplicates, bad names, unknown accounts and non-admins', async () => {
    const { account, token } = await server.createUser();
    const scope = uniqueName('s.');
    expectStatus(await server.root('POST', `/scopes/${account}/${scope}`), 201);
    expectError(await server.root('POST', `/scopes/${account}/${scope}`), 409, 'Duplicate', /already exists/);
    expectError(await server.root('POST', `/scopes/${account}/bad scope!`), 400, 'InvalidObject');
    expectError(await server.root('POST', `/scopes/${account}/${'x'.repeat(26)}`), 400, 'InvalidObject', /too long/);
    expectError(await server.root('POST', `/scopes/nobody-here/${uniqueName('s')}`), 404, 'AccountNotFound');
    expectError(await server.call('POST', `/scopes/${account}/${uniqueName('s')}`, { token }), 401, 'AccessDenied');
    expectError(await server.root('GET', '/scopes/nobody-here/scopes'), 404, 'AccountNotFound');
    expect(expectStatus(await server.root('GET', `/scopes/${account}/scopes`), 200).json()).to.deep.equal([scope]);
  });
});

describe('API: config', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('sets options by body and by path, types values on reading, and removes them', async () => {
    const section = uniqueName('sec');
    expectStatus(
      await server.root('POST', '/config', { body: { [section]: { flag: true, count: 5, name: 'abc' } } }),
      201,
    );
    expectStatus(await server.root('PUT', `/config/${section}/ratio/0.25`), 201);
    expect(expectStatus(await server.root('GET', `/config/${section}`), 200).json()).to.deep.equal({
      flag: true,
      count: 5,
      name: 'abc',
      ratio: 0.25,
    });
    expect(expectStatus(await server.root('GET', `/config/${section}/name`), 200).json()).to.equal('abc');
    expect(
      expectStatus(await server.root('GET', '/config'), 200).json<Record<string, unknown>>()[section],
    ).to.deep.equal({
      flag: true,
      count: 5,
      name: 'abc',
      ratio: 0.25,
    });
    expectStatus(await server.root('DELETE', `/config/${section}/name`), 200);
    expectError(
      await server.root('GET', `/config/${section}/name`),
      404,
      'ConfigNotFound',
      /section '.+' option 'name'/,
    );
    expectStatus(await server.root('DELETE', `/config/${section}`), 200);
    expectError(await server.root('GET', `/config/${section}`), 404, 'ConfigNotFound');
    expectError(await server.root('DELETE', `/config/${section}`), 404, 'ConfigNotFound');
  });

  it('writes nothing when one section of the body is not an object', async () => {
    const [good, bad] = [uniqueName('sec'), uniqueName('sec')];
    expectError(await server.root('POST', '/config', { body: { [good]: { a: 1 }, [bad]: 'flat' } }), 400, 'ValueError');
    expectError(await server.root('GET', `/config/${good}`), 404, 'ConfigNotFound');
  });

  it('refuses values out of the declared range of the options the service reads, and keeps others free-form', async () => {
    expectError(
      await server.root('PUT', '/config/auth/login_free_failures/100000'),
      400,
      'ConfigurationError',
      /option 'login_free_failures': expected a whole number from 0 to 1000/,
    );
    const free = uniqueName('sec');
    expectError(
      await server.root('POST', '/config', { body: { [free]: { a: 1 }, auth: { login_delay_max: '1e400' } } }),
      400,
      'ConfigurationError',
      /option 'login_delay_max': expected a number from 0 to 3600/,
    );
    expectError(
      await server.root('PUT', `/config/conveyor/suspicious_pattern/${encodeURIComponent('.*(a)\\1,x')}`),
      400,
      'ConfigurationError',
      /regular expressions .* without backreferences/,
    );
    expectError(
      await server.root('PUT', '/config/undertaker/dry_run/maybe'),
      400,
      'ConfigurationError',
      /True or False/,
    );
    expectError(
      await server.root('PUT', '/config/conveyor/transfertool/ftp'),
      400,
      'ConfigurationError',
      /fts3, mock, posix/,
    );
    expectError(await server.root('GET', `/config/${free}`), 404, 'ConfigNotFound');
    expectError(await server.root('GET', '/config/auth'), 404, 'ConfigNotFound');

    // What GET /config shows is what the throttle uses.
    expectStatus(await server.root('PUT', '/config/auth/login_free_failures/7'), 201);
    expectStatus(await server.root('PUT', '/config/auth/remark/anything goes'), 201);
    expect(expectStatus(await server.root('GET', '/config/auth'), 200).json()).to.deep.equal({
      login_free_failures: 7,
      remark: 'anything goes',
    });
    expect((await throttlePolicy(server.runtime.services)).freeFailures).to.equal(7);
    expectStatus(await server.root('DELETE', '/config/auth'), 200);
    expect((await throttlePolicy(server.runtime.services)).freeFailures).to.equal(5);
  });

  it('is for admins only, reading included', async () => {
    const { token } = await server.createUser();
    expectError(await server.call('GET', '/config', { token }), 401, 'AccessDenied');
    expectError(
      await server.call('GET', '/config/a/b', { token }),
      401,
      'AccessDenied',
      /Access to 'a' option 'b' denied/,
    );
    expectError(await server.call('PUT', '/config/a/b/c', { token }), 401, 'AccessDenied');
    const admin = await server.createUser({ admin: true });
    expectStatus(await server.call('GET', '/config', { token: admin.token }), 200);
  });
});
