import { expect } from 'chai';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { uniqueName } from '../support/events.ts';

describe('API: routing and HTTP conventions', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('answers /ping and /ping/ without a token', async () => {
    for (const path of ['/ping', '/ping/']) {
      const response = expectStatus(await server.call('GET', path), 200);
      expect(response.headers['content-type']).to.equal('application/json');
      expect(response.json()).to.deep.equal({ version: '39.0.0rc1' });
    }
    const head = expectStatus(await server.call('HEAD', '/ping'), 200);
    expect(head.text).to.equal('');
  });

  it('redirects slash-only paths with 308 and keeps the query', async () => {
    const response = await server.root('GET', '/scopes?x=1');
    expect(response.status).to.equal(308);
    expect(response.headers.location).to.equal('/scopes/?x=1');
    expect(response.text).to.equal(
      'Permanent redirect to /scopes/?x=1: this path ends with a slash. Send the same request there (curl: -L).\n',
    );
    expect((await server.root('GET', '/accounts/root/attr')).headers.location).to.equal('/accounts/root/attr/');
  });

  it('does not match slash-less-only paths with a slash, and answers unknown paths 404', async () => {
    expectError(await server.root('GET', '/config/'), 404, 'NotFound');
    expectError(await server.root('GET', '/no/such/thing'), 404, 'NotFound');
  });

  it('answers a known path with the wrong method 405 with Allow', async () => {
    const response = await server.root('PATCH', '/accounts/root');
    expectError(response, 405, 'MethodNotAllowed');
    expect(String(response.headers.allow).split(', ')).to.include.members(['GET', 'POST', 'PUT', 'DELETE']);
  });

  it('refuses an Accept header that allows none of the route answer types with 406', async () => {
    expectError(
      await server.root('GET', '/accounts/root', { headers: { Accept: 'text/csv' } }),
      406,
      'UnsupportedRequestedContentType',
    );
    expectStatus(await server.root('GET', '/accounts/root', { headers: { Accept: '*/*' } }), 200);
    expectError(
      await server.root('GET', '/accounts', { headers: { Accept: 'application/json' } }),
      406,
      'UnsupportedRequestedContentType',
    );
  });

  it('cuts the header message at 125 characters and keeps the whole one in the body', async () => {
    const name = 'x'.repeat(200);
    const response = await server.root('GET', `/accounts/${name}`);
    expectError(response, 404, 'AccountNotFound');
    const header = String(response.headers.exceptionmessage);
    expect(header).to.have.length(128);
    expect(header.endsWith('...')).to.equal(true);
    expect(response.json<{ ExceptionMessage: string }>().ExceptionMessage).to.equal(
      `Account with ID '${name}' cannot be found`,
    );
    expect(response.text).to.match(/^\{"ExceptionClass": "AccountNotFound", "ExceptionMessage": "/);
  });

  it('reads JSON bodies whatever the Content-Type says', async () => {
    const account = uniqueName('ct');
    expectStatus(
      await server.root('POST', `/accounts/${account}`, {
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: { type: 'USER', email: 'c@example.org' },
      }),
      201,
    );
    expect(expectStatus(await server.root('GET', `/accounts/${account}`), 200).json()).to.include({
      email: 'c@example.org',
    });
  });

  it('decodes percent-escapes in the path before routing', async () => {
    const { account } = await server.createUser();
    expectStatus(await server.root('GET', `/accounts/${account.replace(/^u/, '%75')}`), 200);
    expectError(await server.root('GET', '/accounts/%E0%A4%A'), 400, 'ValueError');
  });

  it('answers CORS pre-flights for configured web UI origins only', async () => {
    expect(
      (await server.call('OPTIONS', '/accounts/root', { headers: { Origin: 'https://ui.example.org' } })).status,
    ).to.equal(403);
    // A value holding '/' cannot travel in the path (escapes are decoded before routing): use the body.
    expectStatus(
      await server.root('POST', '/config', {
        body: { webui: { urls: 'https://ui.example.org, https://other.example.org' } },
      }),
      201,
    );
    const allowed = await server.call('OPTIONS', '/accounts/root', {
      headers: { Origin: 'https://ui.example.org', 'Access-Control-Request-Headers': 'X-Svc-Auth-Token' },
    });
    expect(allowed.status).to.equal(200);
    expect(allowed.headers['access-control-allow-origin']).to.equal('https://ui.example.org');
    expect(allowed.headers['access-control-allow-headers']).to.equal('X-Svc-Auth-Token');
  });

  it('echoes a request id, or makes one', async () => {
    expect(
      (await server.call('GET', '/ping', { headers: { 'X-Request-Id': 'trace-123' } })).headers['x-request-id'],
    ).to.equal('trace-123');
    expect((await server.call('GET', '/ping')).headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
  });
});
