import { expect } from 'chai';
import { connect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { newScope, path } from '../support/dids.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';

/** Sends raw bytes on a new connection; the whole answer and how long the server took to close it. */
const rawExchange = (
  url: string,
  bytes: string,
  timeoutMs = 5000,
): Promise<{ text: string; closedAfterMs: number | undefined }> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    const started = Date.now();
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closedAfterMs: undefined });
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closedAfterMs: Date.now() - started });
    });
    socket.on('error', () => undefined);
    socket.write(bytes, 'latin1');
  });

/** The parts of a raw answer: status, headers (lower-case names), body. */
const parseRaw = (text: string) => {
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
};

const expectRawError = (text: string, status: number, exceptionClass: string) => {
  const answer = parseRaw(text);
  expect(answer.status, text).to.equal(status);
  expect(answer.headers['exceptionclass']).to.equal(exceptionClass);
  expect(answer.headers['exceptionmessage']).to.be.a('string');
  expect(JSON.parse(answer.body)).to.include({ ExceptionClass: exceptionClass });
};

/**
 * Issue 14, bounded input: every client mistake is a 4xx in Rucio's format before any work, and
 * nothing is cut, stored half or left hanging.
 */
describe('API: bounded input', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  describe('the HTTP layer', () => {
    it('refuses a Content-Length over the limit with 413 at once and closes the connection', async () => {
      const { text, closedAfterMs } = await rawExchange(
        server.url,
        'POST /accounts/x HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n{',
      );
      expectRawError(text, 413, 'RequestEntityTooLarge');
      expect(closedAfterMs, 'the connection was closed').to.be.a('number');
    });

    it('answers Expect: 100-continue with 413 instead of asking for a body over the limit', async () => {
      const { text } = await rawExchange(
        server.url,
        'POST /accounts/x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 999999999999\r\n\r\n',
      );
      expect(text).to.not.contain('100 Continue');
      expectRawError(text, 413, 'RequestEntityTooLarge');
    });

    it("gives Node's own refusals Rucio's format: headers too large, bytes that are not HTTP", async () => {
      expectRawError(
        (await rawExchange(server.url, `GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)).text,
        431,
        'RequestHeaderFieldsTooLarge',
      );
      expectRawError(
        (await rawExchange(server.url, 'GET /pi\u0001ng HTTP/1.1\r\nHost: x\r\n\r\n')).text,
        400,
        'ValueError',
      );
      expectRawError((await rawExchange(server.url, 'NONSENSE\r\n\r\n')).text, 400, 'ValueError');
    });

    it('answers OPTIONS without an allowed Origin in the error format', async () => {
      expectError(await server.call('OPTIONS', '/ping'), 403, 'AccessDenied', /needs an Origin/);
      expectError(
        await server.call('OPTIONS', '/ping', { headers: { Origin: 'https://evil.example.org' } }),
        403,
        'AccessDenied',
        /may not make cross-origin/,
      );
    });

    it('decodes gzip, deflate and br bodies, refuses ones that are not, and unknown encodings', async () => {
      const create = (body: Buffer | string, encoding: string) =>
        server.call('POST', `/accounts/${uniqueName('enc')}`, {
          token: server.rootToken,
          headers: { 'Content-Encoding': encoding },
          body,
        });
      const json = '{"type": "USER", "email": "e@example.org"}';
      expectStatus(await create(gzipSync(json), 'gzip'), 201);
      expectStatus(await create(deflateSync(json), 'deflate'), 201);
      expectStatus(await create(brotliCompressSync(json), 'br'), 201);
      for (const encoding of ['gzip', 'deflate', 'br'])
        expectError(await create(json, encoding), 400, 'ValueError', new RegExp(`not valid ${encoding}`));
      expectError(await create(json, 'compress'), 415, 'UnsupportedMediaType');
    });

    it('refuses bodies that are not UTF-8 and paths or query strings that are not, or hold control characters', async () => {
      expectError(
        await server.root('POST', `/accounts/${uniqueName('bytes')}`, {
          body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]),
        }),
        400,
        'ValueError',
        /not valid UTF-8/,
      );
      expectError(await server.root('GET', '/accounts/%ff%fe'), 400, 'ValueError');
      expectError(await server.root('GET', '/accounts/a%00b'), 400, 'ValueError', /control characters/);
      expectError(await server.root('GET', '/accounts?account=%ff'), 400, 'ValueError', /not percent-encoded UTF-8/);
      expectError(await server.root('GET', '/accounts?account=a%0db'), 400, 'ValueError', /control characters/);
      expectError(
        await server.root('GET', '/accounts?constructor=1'),
        400,
        'ValueError',
        /not allowed as a query parameter/,
      );
    });
  });

  describe('JSON bodies', () => {
    it('refuses documents nested deeper than 64 levels before any work', async () => {
      const account = uniqueName('deep');
      const body = `{"type": "USER", "email": ${'['.repeat(5000)}${']'.repeat(5000)}}`;
      expectError(
        await server.root('POST', `/accounts/${account}`, { body }),
        400,
        'ValueError',
        /nests deeper than 64/,
      );
      expectError(await server.root('GET', `/accounts/${account}`), 404, 'AccountNotFound');
    });

    it('refuses numbers out of range, unpaired surrogates, too long strings and __proto__ keys', async () => {
      const create = (body: string) => server.root('POST', `/accounts/${uniqueName('json')}`, { body });
      expectError(await create('{"type": "USER", "email": null, "x": 1e400}'), 400, 'ValueError', /number/);
      expectError(await create('{"type": "USER", "email": "\\ud800"}'), 400, 'ValueError', /unpaired surrogate/);
      expectError(
        await create(JSON.stringify({ type: 'USER', email: 'x'.repeat(10_000_000) })),
        400,
        'ValueError',
        /longer than 65536/,
      );
      expectError(
        await create('{"__proto__": {"type": "USER"}, "type": "USER", "email": null}'),
        400,
        'ValueError',
        /__proto__/,
      );
    });
  });

  describe('names, values and keys', () => {
    let scope: string;
    before(async () => {
      scope = await newScope(server);
      expectStatus(await server.root('POST', path(scope, 'dataset'), { body: { type: 'DATASET' } }), 201);
    });

    it('refuses lifetimes beyond a century either way instead of failing on the date', async () => {
      for (const lifetime of [1e300, -1e308]) {
        expectError(
          await server.root('POST', path(scope, uniqueName('ds')), { body: { type: 'DATASET', lifetime } }),
          400,
          'InvalidObject',
          /lifetime/,
        );
        expectError(
          await server.root('POST', path(scope, 'dataset', '/meta/lifetime'), { body: { value: lifetime } }),
          400,
          'InvalidValueForKey',
          /lifetime/,
        );
      }
      expectStatus(
        await server.root('POST', path(scope, uniqueName('ds')), { body: { type: 'DATASET', lifetime: 86_400 } }),
        201,
      );
    });

    it('refuses a DID name with control characters whole, never a shorter name', async () => {
      expectError(
        await server.root('POST', `/dids/${scope}/zz%0d%0aYY`, { body: { type: 'DATASET' } }),
        400,
        'ValueError',
        /control characters/,
      );
      expectError(await server.root('GET', path(scope, 'zz')), 404, 'DataIdentifierNotFound');
    });

    it('takes only JSON booleans for a status, and no negative sample', async () => {
      expectError(
        await server.root('PUT', path(scope, 'dataset', '/status'), { body: { open: 'false' } }),
        400,
        'TypeError',
      );
      expect(expectStatus(await server.root('GET', path(scope, 'dataset')), 200).json()).to.include({ open: true });
      const output = uniqueName('sample');
      expectError(
        await server.root('POST', `/dids/${scope}/dataset/${scope}/${output}/-1/sample`),
        400,
        'ValueError',
        /negative/,
      );
      expectError(await server.root('GET', path(scope, output)), 404, 'DataIdentifierNotFound');
    });

    it('refuses prototype keys in search filters, metadata, config and attributes', async () => {
      const filters = encodeURIComponent("[{'__proto__': {'name': 'x'}}]");
      expectError(
        await server.root('GET', `/dids/${scope}/dids/search?filters=${filters}`),
        400,
        'DIDFilterSyntaxError',
        /reserved key/,
      );
      const nested = encodeURIComponent(`${'['.repeat(100)}${']'.repeat(100)}`);
      expectError(
        await server.root('GET', `/dids/${scope}/dids/search?filters=${nested}`),
        400,
        'DIDFilterSyntaxError',
        /nested too deep/,
      );
      expectError(
        await server.root('POST', path(scope, 'dataset', '/meta/constructor'), { body: { value: 1 } }),
        400,
        'InvalidMetadata',
        /reserved/,
      );
      expectError(
        await server.root('POST', path(scope, 'dataset', '/meta'), { body: { meta: { prototype: 1 } } }),
        400,
        'InvalidMetadata',
        /reserved/,
      );
      expectError(
        await server.root('POST', '/config', { body: { constructor: { a: 1 } } }),
        400,
        'ValueError',
        /reserved/,
      );
      expectError(await server.root('PUT', '/config/prototype/a/1'), 400, 'ValueError', /reserved/);
      expectError(await server.root('GET', '/config/webui/constructor'), 404, 'ConfigNotFound');
      expectError(
        await server.root('POST', '/accounts/root/attr/constructor', { body: { value: 'x' } }),
        400,
        'InvalidObject',
        /reserved/,
      );
      expectStatus(
        await server.root('POST', '/config', { body: { [uniqueName('section')]: { option: 'value' } } }),
        201,
      );
      const sections = expectStatus(await server.root('GET', '/config'), 200).json<Record<string, unknown>>();
      expect(Object.getPrototypeOf(sections)).to.equal(Object.prototype);
    });

    it('bounds names, emails, identities, metadata, attribute and config values where Rucio does', async () => {
      const account = uniqueName('bounds');
      expectError(
        await server.root('POST', `/accounts/${account}`, {
          body: { type: 'USER', email: `${'e'.repeat(250)}@example.org` },
        }),
        400,
        'InvalidObject',
        /longer than 255/,
      );
      expectStatus(
        await server.root('POST', `/accounts/${account}`, { body: { type: 'USER', email: 'e@example.org' } }),
        201,
      );
      expectError(
        await server.root('POST', `/accounts/${account}/identities`, {
          body: { identity: 'i'.repeat(3000), authtype: 'X509', email: 'e@example.org' },
        }),
        400,
        'InvalidObject',
        /longer than 2048/,
      );
      expectError(
        await server.root('POST', path(scope, 'dataset', '/meta'), { body: { meta: { big: 'v'.repeat(5000) } } }),
        400,
        'InvalidValueForKey',
        /longer than 4000/,
      );
      expectError(
        await server.root('POST', path(scope, 'dataset', '/meta'), { body: { meta: { ['k'.repeat(300)]: 1 } } }),
        400,
        'InvalidMetadata',
        /longer than 255/,
      );
      expectError(
        await server.root('POST', '/config', { body: { s: { o: 'v'.repeat(4001) } } }),
        400,
        'ValueError',
        /longer than 4000/,
      );
      expectError(
        await server.root('POST', '/config', { body: { ['s'.repeat(129)]: { o: 'v' } } }),
        400,
        'ValueError',
        /longer than 128/,
      );
      expectError(
        await server.root('POST', `/dids/${scope}/${'n'.repeat(251)}`, { body: { type: 'DATASET' } }),
        400,
        'InvalidObject',
        /too long/,
      );
      const rse = uniqueName('BOUNDS_').toUpperCase();
      expectStatus(await server.root('POST', `/rses/${rse}`, { body: {} }), 201);
      expectError(
        await server.root('POST', `/rses/${rse}/attr/tier`, { body: { value: 'v'.repeat(256) } }),
        400,
        'InvalidObject',
        /longer than 255/,
      );
      expectError(
        await server.root('PUT', `/rses/${rse}`, { body: { city: 'c'.repeat(256) } }),
        400,
        'InvalidObject',
        /longer than 255/,
      );
      expectError(
        await server.root('GET', `/rses/?expression=${'('.repeat(40)}${rse}${')'.repeat(40)}`),
        400,
        'InvalidRSEExpression',
        /deeper than 32/,
      );
    });

    it('matches name patterns with many wildcards without backtracking', async () => {
      // Names of many `a`s: a backtracking match of `*a*a…*b` against them takes minutes.
      expectStatus(
        await server.root('POST', `/accounts/${'a'.repeat(13)}${uniqueName('').slice(0, 12)}`, {
          body: { type: 'USER', email: null },
        }),
        201,
      );
      expectStatus(await server.root('POST', path(scope, 'a'.repeat(200)), { body: { type: 'DATASET' } }), 201);
      const started = Date.now();
      expectStatus(await server.root('GET', `/accounts?account=${'*a'.repeat(12)}*b`), 200);
      expectStatus(await server.root('GET', `/dids/${scope}/dids/search?name=${'*a'.repeat(12)}*b`), 200);
      expect(Date.now() - started).to.be.lessThan(2000);
    });
  });
});

/**
 * Issue 22: every connection is bounded in time (headers, a pause in the body, the whole
 * request, idle keep-alive) and, without a proxy in front, in number per address. The bounds
 * are set low here so that each test waits about a second.
 */
describe('API: connections bounded in time and number', () => {
  let server: TestServer;
  before(
    async () =>
      (server = await startTestServer({
        environment: {
          DMS_HEADERS_TIMEOUT_MS: '1000',
          DMS_BODY_IDLE_TIMEOUT_MS: '1000',
          DMS_REQUEST_TIMEOUT_MS: '2500',
          DMS_KEEP_ALIVE_TIMEOUT_MS: '1000',
          DMS_MAX_CONNECTIONS_PER_ADDRESS: '3',
        },
      })),
  );
  after(async () => server.stop());
  const host = () => new URL(server.url).host;

  it('answers a body that stops half-way with 408 in Rucio format and closes the connection', async () => {
    const { text, closedAfterMs } = await rawExchange(
      server.url,
      `POST /accounts/x HTTP/1.1\r\nHost: ${host()}\r\nContent-Length: 100\r\n\r\n0123456789`,
    );
    expectRawError(text, 408, 'RequestTimeout');
    expect(parseRaw(text).body).to.match(/stopped arriving: nothing came for 1 s/);
    expect(closedAfterMs).to.not.equal(undefined);
  });

  it('answers headers that never end with 408, and a body that trickles past the request time', async () => {
    const headers = await rawExchange(server.url, `GET /ping HTTP/1.1\r\nHost: ${host()}\r\nX-Slow: `);
    expectRawError(headers.text, 408, 'RequestTimeout');
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.write(`POST /accounts/x HTTP/1.1\r\nHost: ${host()}\r\nContent-Length: 100\r\n\r\n`);
    // A byte every 300 ms never pauses a second, but the request as a whole takes too long. The
    // timing is the client's behaviour under test, not a wait: the test waits for the close.
    const trickle = setInterval(() => socket.write('a'), 300);
    await new Promise((resolve) => socket.on('close', resolve));
    clearInterval(trickle);
    expectRawError(text, 408, 'RequestTimeout');
  });

  it('closes a keep-alive connection left idle', async () => {
    const { text, closedAfterMs } = await rawExchange(server.url, `GET /ping HTTP/1.1\r\nHost: ${host()}\r\n\r\n`);
    expect(parseRaw(text).status).to.equal(200);
    expect(closedAfterMs).to.not.equal(undefined);
  });

  it('refuses requests on connections past the bound per address with 429, until one closes', async () => {
    const { hostname, port } = new URL(server.url);
    const held = await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<ReturnType<typeof connect>>((resolve) => {
            const socket = connect(Number(port), hostname, () => resolve(socket));
            socket.on('error', () => undefined);
          }),
      ),
    );
    try {
      const refused = await rawExchange(server.url, `GET /ping HTTP/1.1\r\nHost: ${host()}\r\n\r\n`);
      expectRawError(refused.text, 429, 'TooManyConnections');
    } finally {
      for (const socket of held) socket.destroy();
    }
    // Once the server has seen them closed, a new connection is served again.
    await eventually(async () => (await server.call('GET', '/ping')).status === 200, 5000, 'a connection served');
  });
});
