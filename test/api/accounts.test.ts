import { expect } from 'chai';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { uniqueName } from '../support/events.ts';

describe('API: accounts', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const accountNames = async (query = '') =>
    expectStatus(await server.root('GET', `/accounts${query}`), 200)
      .lines<{ account: string }>()
      .map((line) => line.account);

  it('creates an account, reads it back at once, and lists it as NDJSON', async () => {
    const account = uniqueName('acc');
    const created = expectStatus(
      await server.root('POST', `/accounts/${account}`, { body: { type: 'user', email: 'a@example.org' } }),
      201,
    );
    expect(created.headers['content-type']).to.equal('application/json');
    expect(created.json()).to.equal('Created');

    const details = expectStatus(await server.root('GET', `/accounts/${account}`), 200);
    expect(details.headers['content-type']).to.equal('application/json');
    expect(details.json()).to.include({
      account,
      account_type: 'USER',
      status: 'ACTIVE',
      email: 'a@example.org',
      deleted_at: null,
    });
    expect(details.json<{ created_at: string }>().created_at).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);

    const list = expectStatus(await server.root('GET', '/accounts'), 200);
    expect(list.headers['content-type']).to.equal('application/x-json-stream');
    expect(list.lines()).to.deep.include({ account, type: 'USER', email: 'a@example.org' });
    const names = list.lines<{ account: string }>().map((line) => line.account);
    expect(names).to.deep.equal([...names].sort());
    expect(await accountNames('/')).to.deep.equal(names);
  });

  it('filters the listing by type, name pattern, attribute and identity', async () => {
    const prefix = uniqueName('flt');
    const [group, user] = [`${prefix}_g`, `${prefix}_u`];
    expectStatus(
      await server.root('POST', `/accounts/${group}`, { body: { type: 'GROUP', email: 'g@example.org' } }),
      201,
    );
    expectStatus(
      await server.root('POST', `/accounts/${user}`, { body: { type: 'USER', email: 'u@example.org' } }),
      201,
    );
    expectStatus(await server.root('POST', `/accounts/${user}/attr/site`, { body: { value: 'CERN' } }), 201);
    expectStatus(
      await server.root('POST', `/accounts/${user}/identities`, {
        body: { identity: `${prefix}login`, authtype: 'USERPASS', email: 'u@x', password: 'p' },
      }),
      201,
    );
    expect(await accountNames(`?account=${prefix}*`)).to.deep.equal([group, user]);
    expect(await accountNames(`?account=${prefix}*&account_type=GROUP`)).to.deep.equal([group]);
    expect(await accountNames(`?account=${prefix}*&site=CERN`)).to.deep.equal([user]);
    expect(await accountNames(`?identity=${prefix}login`)).to.deep.equal([user]);
    expect(await accountNames(`?account=${prefix}`)).to.deep.equal([]);
    expectError(await server.root('GET', '/accounts?account_type=ROBOT'), 400, 'InvalidAccountType');
  });

  it('redirects whoami to the caller (303), or to X-Requested-Host (302)', async () => {
    const redirect = await server.root('GET', '/accounts/whoami');
    expect(redirect.status).to.equal(303);
    expect(redirect.headers.location).to.equal('root');
    const proxied = await server.root('GET', '/accounts/whoami', {
      headers: { 'X-Requested-Host': 'https://dms.example.org' },
    });
    expect(proxied.status).to.equal(302);
    expect(proxied.headers.location).to.equal('https://dms.example.org/accounts/root');
  });

  it('updates email and status, and soft-deletes', async () => {
    const { account } = await server.createUser();
    expectStatus(
      await server.root('PUT', `/accounts/${account}`, { body: { email: 'new@example.org', status: 'SUSPENDED' } }),
      200,
    );
    const suspended = expectStatus(await server.root('GET', `/accounts/${account}`), 200).json<
      Record<string, unknown>
    >();
    expect(suspended).to.include({ email: 'new@example.org', status: 'SUSPENDED' });
    expect(suspended.suspended_at).to.be.a('string');
    expect(await accountNames()).not.to.include(account);
    expectError(
      await server.root('PUT', `/accounts/${account}`, { body: { status: 'FROZEN' } }),
      400,
      'ValueError',
      /Unknown value FROZEN/,
    );

    expectStatus(await server.root('PUT', `/accounts/${account}`, { body: { status: 'ACTIVE' } }), 200);
    expectStatus(await server.root('DELETE', `/accounts/${account}`), 200);
    expect(expectStatus(await server.root('GET', `/accounts/${account}`), 200).json()).to.include({
      status: 'DELETED',
    });
    expectError(await server.root('DELETE', `/accounts/${account}`), 404, 'AccountNotFound');
    expectError(
      await server.root('POST', `/accounts/${account}`, { body: { type: 'USER', email: 'x' } }),
      409,
      'Duplicate',
    );
  });

  it('answers bad input with Rucio errors and changes nothing', async () => {
    const before = await accountNames();
    expectError(
      await server.root('POST', '/accounts/Bad.Name', { body: { type: 'USER', email: 'x' } }),
      400,
      'InvalidObject',
      /Problem validating account/,
    );
    expectError(
      await server.root('POST', `/accounts/${uniqueName('a')}`, { body: { type: 'ROBOT', email: 'x' } }),
      400,
      'InvalidAccountType',
    );
    expectError(
      await server.root('POST', `/accounts/${uniqueName('a')}`, { body: { email: 'x' } }),
      400,
      'KeyError',
      /^'type' not defined$/,
    );
    expectError(
      await server.root('POST', `/accounts/${uniqueName('a')}`, { body: '["USER"]' }),
      400,
      'TypeError',
      /body must be a json dictionary/,
    );
    expectError(
      await server.root('POST', `/accounts/${uniqueName('a')}`, { body: '{"type": "USER",' }),
      400,
      'ValueError',
      /cannot decode json/,
    );
    expectError(await server.root('POST', `/accounts/${uniqueName('a')}`), 400, 'ValueError');
    expectError(
      await server.root('GET', '/accounts/nobody-here'),
      404,
      'AccountNotFound',
      /Account with ID 'nobody-here' cannot be found/,
    );
    expect(await accountNames()).to.deep.equal(before);
  });

  it('takes an account or identity type in any case, and names the types for any other value', async () => {
    const account = uniqueName('anycase').toLowerCase().slice(0, 25);
    expectStatus(
      await server.root('POST', `/accounts/${account}`, { body: { type: 'group', email: 'x@example.org' } }),
      201,
    );
    expect(expectStatus(await server.root('GET', `/accounts/${account}`), 200).json()).to.include({
      account_type: 'GROUP',
    });
    for (const type of ['ROBOT', 5])
      expectError(
        await server.root('POST', `/accounts/${uniqueName('a')}`, { body: { type, email: 'x' } }),
        400,
        'InvalidAccountType',
        new RegExp(`^${type} is an invalid account type\\. Choose from \\["USER","GROUP","SERVICE"\\]$`),
      );
    expectStatus(
      await server.root('POST', `/accounts/${account}/identities`, {
        body: { identity: `/CN=${account}`, authtype: 'x509', email: 'x@example.org' },
      }),
      201,
    );
    for (const authtype of ['TELEPATHY', 5])
      expectError(
        await server.root('POST', `/accounts/${account}/identities`, { body: { identity: 'x', authtype, email: 'x' } }),
        400,
        'IdentityError',
        new RegExp(`^${authtype} is not a valid identity type\\. Choose from X509, GSS, USERPASS, SSH, SAML, OIDC$`),
      );
  });

  it('lets only root create or delete accounts and only admins change them', async () => {
    const { account, token } = await server.createUser();
    const target = uniqueName('acc');
    expectError(
      await server.call('POST', `/accounts/${target}`, { token, body: { type: 'USER', email: 'x' } }),
      401,
      'AccessDenied',
      new RegExp(`Account ${account} can not add account`),
    );
    expectError(await server.call('PUT', `/accounts/${account}`, { token, body: { email: 'x' } }), 401, 'AccessDenied');
    expectError(
      await server.call('POST', `/accounts/${account}/attr/admin`, { token, body: { value: 'True' } }),
      401,
      'AccessDenied',
    );
    const admin = await server.createUser({ admin: true });
    expectStatus(
      await server.call('PUT', `/accounts/${account}`, { token: admin.token, body: { email: 'by-admin@example.org' } }),
      200,
    );
    expectError(await server.call('DELETE', `/accounts/${account}`, { token: admin.token }), 401, 'AccessDenied');
    expectError(await server.root('GET', `/accounts/${target}`), 404, 'AccountNotFound');
  });

  describe('attributes', () => {
    it('adds, lists and removes attributes', async () => {
      const { account } = await server.createUser();
      expectStatus(
        await server.root('POST', `/accounts/${account}/attr/country-ch`, {
          body: { key: 'country-ch', value: 'admin' },
        }),
        201,
      );
      expectStatus(await server.root('POST', `/accounts/${account}/attr/flag`, { body: { value: true } }), 201);
      const listed = expectStatus(await server.root('GET', `/accounts/${account}/attr/`), 200);
      expect(listed.json()).to.deep.equal([
        { key: 'country-ch', value: 'admin' },
        { key: 'flag', value: 'True' },
      ]);
      expectError(
        await server.root('POST', `/accounts/${account}/attr/flag`, { body: { value: 'x' } }),
        409,
        'Duplicate',
      );
      expectError(
        await server.root('POST', `/accounts/${account}/attr/bad key`, { body: { value: 'x' } }),
        400,
        'InvalidObject',
      );
      expectError(
        await server.root('POST', `/accounts/${account}/attr/k2`, { body: { value: 'has space' } }),
        400,
        'InvalidObject',
      );
      expectStatus(await server.root('DELETE', `/accounts/${account}/attr/flag`), 200);
      expectError(await server.root('DELETE', `/accounts/${account}/attr/flag`), 404, 'AccountNotFound');
      expect(expectStatus(await server.root('GET', `/accounts/${account}/attr/`), 200).json()).to.have.length(1);
      expectError(await server.root('GET', '/accounts/nobody-here/attr/'), 404, 'AccountNotFound');
    });
  });

  describe('identities', () => {
    it('grants, lists and revokes identities of an account', async () => {
      const { account } = await server.createUser();
      const dn = `/DC=org/CN=${account}`;
      expectStatus(
        await server.root('POST', `/accounts/${account}/identities`, {
          body: { identity: dn, authtype: 'X509', email: 'x@example.org' },
        }),
        201,
      );
      const listed = expectStatus(await server.root('GET', `/accounts/${account}/identities`), 200);
      expect(listed.headers['content-type']).to.equal('application/x-json-stream');
      expect(listed.lines()).to.deep.include({ type: 'X509', identity: dn, email: 'x@example.org' });
      expect(listed.lines()).to.deep.include({ type: 'USERPASS', identity: account, email: `${account}@example.org` });

      expectError(
        await server.root('POST', `/accounts/${account}/identities`, {
          body: { identity: dn, authtype: 'X509', email: 'x@example.org' },
        }),
        409,
        'Duplicate',
      );
      expectError(
        await server.root('POST', `/accounts/${account}/identities`, {
          body: { identity: 'newlogin', authtype: 'USERPASS', email: 'x' },
        }),
        400,
        'IdentityError',
        /You must provide a password!/,
      );
      expectError(
        await server.root('POST', `/accounts/${account}/identities`, {
          body: { identity: 'x', authtype: 'TELEPATHY', email: 'x' },
        }),
        400,
        'IdentityError',
      );
      expectError(
        await server.root('POST', `/accounts/${account}/identities`, { body: { identity: 'x', email: 'x' } }),
        400,
        'KeyError',
      );

      expectStatus(
        await server.root('DELETE', `/accounts/${account}/identities`, { body: { identity: dn, authtype: 'x509' } }),
        200,
      );
      expectError(
        await server.root('DELETE', `/accounts/${account}/identities`, { body: { identity: dn, authtype: 'x509' } }),
        404,
        'IdentityError',
      );
      expect(expectStatus(await server.root('GET', `/accounts/${account}/identities`), 200).lines()).to.have.length(1);
      expectError(await server.root('GET', '/accounts/nobody-here/identities'), 404, 'AccountNotFound');
      expectError(
        await server.root('POST', '/accounts/nobody-here/identities', {
          body: { identity: 'q', authtype: 'GSS', email: 'x' },
        }),
        404,
        'AccountNotFound',
      );
    });

    it('creates userpass identities from headers and lists the accounts of an identity', async () => {
      const { account } = await server.createUser();
      const login = uniqueName('login');
      expectStatus(
        await server.root('PUT', `/identities/${account}/userpass`, {
          headers: { 'X-Svc-Username': login, 'X-Svc-Password': 'pw', 'X-Svc-Email': 'e@example.org' },
        }),
        201,
      );
      expect(await server.login(login, 'pw', account)).to.be.a('string');
      expectError(
        await server.root('PUT', `/identities/${account}/userpass`, {
          headers: { 'X-Svc-Username': login, 'X-Svc-Password': 'pw' },
        }),
        400,
        'ValueError',
        /Username, Email and Password must be set/,
      );
      expect(
        expectStatus(await server.root('GET', `/identities/${login}/userpass/accounts`), 200).json(),
      ).to.deep.equal([account]);
      expectError(
        await server.root('GET', `/identities/${login}/box/accounts`),
        400,
        'ValueError',
        /^Unknown identity type box$/,
      );
    });
  });
});
