import { expect } from 'chai';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { createRse, rseName } from './rseSupport.ts';

describe('API: account limits and usage', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const json = async (path: string) => expectStatus(await server.root('GET', path), 200).text;

  it('sets local limits through both path families and reads them back, -1 as Infinity', async () => {
    const [first, second] = [await createRse(server), await createRse(server)];
    const { account } = await server.createUser();
    expect(await json(`/accounts/${account}/limits`)).to.equal('{}');
    expectStatus(await server.root('POST', `/accountlimits/local/${account}/${first}`, { body: { bytes: 1000 } }), 201);
    expectStatus(await server.root('POST', `/accountlimits/${account}/${second}`, { body: { bytes: -1 } }), 201);
    const entries = [`"${first}":1000`, `"${second}":Infinity`];
    const both = `{${(first < second ? entries : entries.reverse()).join(',')}}`;
    expect(await json(`/accounts/${account}/limits`)).to.equal(both);
    expect(await json(`/accounts/${account}/limits/local`)).to.equal(both);
    expect(await json(`/accounts/${account}/limits/${first}`)).to.equal(`{"${first}":1000}`);
    expect(await json(`/accounts/${account}/limits/local/${second}`)).to.equal(`{"${second}":Infinity}`);
    const usage = expectStatus(await server.root('GET', `/accounts/${account}/usage`), 200);
    expect(usage.headers['content-type']).to.equal('application/x-json-stream');
    expect(usage.text).to.include(`"rse":"${first}","bytes":0,"files":0,"bytes_limit":1000,"bytes_remaining":1000`);
    expect(usage.text).to.include(
      `"rse":"${second}","bytes":0,"files":0,"bytes_limit":Infinity,"bytes_remaining":Infinity`,
    );
    const one = expectStatus(await server.root('GET', `/accounts/${account}/usage/local/${first}`), 200).lines<
      Record<string, unknown>
    >();
    expect(one).to.have.length(1);
    expect(one[0]).to.deep.include({ rse: first, bytes_limit: 1000 });
    expectStatus(await server.root('DELETE', `/accountlimits/local/${account}/${first}`), 200);
    expectStatus(await server.root('DELETE', `/accountlimits/${account}/${second}`), 200);
    expectStatus(await server.root('DELETE', `/accountlimits/${account}/${second}`), 200);
    expect(await json(`/accounts/${account}/limits`)).to.equal('{}');
    expect(await json(`/accounts/${account}/limits/${first}`)).to.equal(`{"${first}":null}`);
    expect(expectStatus(await server.root('GET', `/accounts/${account}/usage/`), 200).text).to.equal('');
  });

  it('sets global limits on expressions and resolves them when listed', async () => {
    const tag = rseName('T').toLowerCase();
    const rse = await createRse(server);
    expectStatus(await server.root('POST', `/rses/${rse}/attr/${tag}`, { body: { value: 'yes' } }), 201);
    const { account } = await server.createUser();
    const expression = `${tag}=yes`;
    expectStatus(
      await server.root('POST', `/accountlimits/global/${account}/${encodeURIComponent(expression)}`, {
        body: { bytes: 500 },
      }),
      201,
    );
    const limits = JSON.parse(await json(`/accounts/${account}/limits/global`)) as Record<
      string,
      { resolved_rses: string[]; limit: number }
    >;
    expect(limits[expression]).to.deep.include({ resolved_rses: [rse], limit: 500 });
    expect(await json(`/accounts/${account}/limits/global/${encodeURIComponent(expression)}`)).to.equal(
      `{"${expression}":500}`,
    );
    const usage = expectStatus(await server.root('GET', `/accounts/${account}/usage/global`), 200).lines();
    expect(usage).to.deep.equal([
      { rse_expression: expression, bytes: 0, files: 0, bytes_limit: 500, bytes_remaining: 500 },
    ]);
    const one = expectStatus(
      await server.root('GET', `/accounts/${account}/usage/global/${encodeURIComponent(expression)}`),
      200,
    ).lines();
    expect(one).to.deep.equal(usage);
    expectError(
      await server.root('POST', `/accountlimits/global/${account}/${encodeURIComponent('(bad')}`, {
        body: { bytes: 1 },
      }),
      400,
      'InvalidRSEExpression',
      /parentheses/,
    );
    expectError(
      await server.root('POST', `/accountlimits/global/${account}/${rseName()}`, { body: { bytes: 1 } }),
      400,
      'InvalidRSEExpression',
      /empty set/,
    );
    expectStatus(
      await server.root('DELETE', `/accountlimits/global/${account}/${encodeURIComponent(expression)}`),
      200,
    );
    expect(await json(`/accounts/${account}/limits/global`)).to.equal('{}');
  });

  it('refuses negative limits, malformed bodies, unknown accounts and RSEs, changing nothing', async () => {
    const rse = await createRse(server);
    const { account } = await server.createUser();
    const path = `/accountlimits/local/${account}/${rse}`;
    expectError(await server.root('POST', path, { body: { bytes: -5 } }), 400, 'InvalidObject', /bytes/);
    expectError(await server.root('POST', path, { body: { bytes: '5' } }), 400, 'InvalidObject');
    expectError(await server.root('POST', path, { body: {} }), 400, 'KeyError', /'bytes' not defined/);
    expectError(await server.root('POST', path, { body: 'bytes=5' }), 400, 'ValueError');
    expectError(
      await server.root('POST', `/accountlimits/local/nobody-here/${rse}`, { body: { bytes: 5 } }),
      404,
      'AccountNotFound',
      /Account nobody-here does not exist/,
    );
    expectError(
      await server.root('POST', `/accountlimits/local/${account}/${rseName()}`, { body: { bytes: 5 } }),
      404,
      'RSENotFound',
    );
    expectError(await server.root('GET', '/accounts/nobody-here/limits'), 404, 'AccountNotFound');
    expectError(await server.root('GET', `/accounts/${account}/limits/${rseName()}`), 404, 'RSENotFound');
    expectError(await server.root('GET', '/accounts/nobody-here/usage'), 404, 'AccountNotFound');
    expect(await json(`/accounts/${account}/limits`)).to.equal('{}');
  });

  it('lets admins and country admins set limits, and accounts read their own usage', async () => {
    const [french, swiss] = [await createRse(server), await createRse(server)];
    expectStatus(await server.root('POST', `/rses/${french}/attr/country`, { body: { value: 'FR' } }), 201);
    expectStatus(await server.root('POST', `/rses/${swiss}/attr/country`, { body: { value: 'CH' } }), 201);
    const user = await server.createUser();
    const countryAdmin = await server.createUser();
    expectStatus(
      await server.root('POST', `/accounts/${countryAdmin.account}/attr/country-FR`, { body: { value: 'admin' } }),
      201,
    );
    const set = (token: string, rse: string) =>
      server.call('POST', `/accountlimits/local/${user.account}/${rse}`, { token, body: { bytes: 10 } });
    expectError(await set(user.token, french), 401, 'AccessDenied', /can not set account limits/);
    expectStatus(await set(countryAdmin.token, french), 201);
    expectError(await set(countryAdmin.token, swiss), 401, 'AccessDenied');
    const global = (token: string, expression: string) =>
      server.call('POST', `/accountlimits/global/${user.account}/${encodeURIComponent(expression)}`, {
        token,
        body: { bytes: 10 },
      });
    expectStatus(await global(countryAdmin.token, 'country=FR'), 201);
    expectError(await global(countryAdmin.token, `${french}|${swiss}`), 401, 'AccessDenied');
    expectStatus(await server.call('GET', `/accounts/${user.account}/usage`, { token: user.token }), 200);
    expectStatus(await server.call('GET', `/accounts/${user.account}/usage`, { token: countryAdmin.token }), 200);
    const stranger = await server.createUser();
    expectError(
      await server.call('GET', `/accounts/${user.account}/usage`, { token: stranger.token }),
      401,
      'AccessDenied',
    );
    expectError(
      await server.call('GET', `/accounts/${user.account}/usage/global`, { token: stranger.token }),
      401,
      'AccessDenied',
    );
  });

  it('answers the usage history of an account on an RSE (empty until rules exist)', async () => {
    const rse = await createRse(server);
    expect(expectStatus(await server.root('GET', `/accounts/root/usage/history/${rse}`), 200).json()).to.deep.equal([]);
    expectError(await server.root('GET', `/accounts/root/usage/history/${rseName()}`), 404, 'RSENotFound');
  });
});
