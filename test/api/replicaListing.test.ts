import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { newScope, path } from '../support/dids.ts';
import { uniqueName } from '../support/events.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { addReplicas, fileItem, listReplicas, protocol, rseWithProtocols } from './replicaSupport.ts';

describe('API: listing replicas (behaviour rules 9 and 10)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const dataset = async (scope: string, name: string, files: string[], rse?: string) => {
    expectStatus(await server.root('POST', path(scope, name), { body: { type: 'DATASET' } }), 201);
    if (files.length > 0)
      expectStatus(
        await server.root('POST', path(scope, name, '/dids'), {
          body: { rse, dids: files.map((file) => fileItem(scope, file)) },
        }),
        201,
      );
  };

  it('builds deterministic PFNs with the hash path: scope/md5[0:2]/md5[2:4]/name, user scopes split on dots (rule 9)', async () => {
    const account = uniqueName('u');
    expectStatus(
      await server.root('POST', `/accounts/${account}`, { body: { type: 'USER', email: 'u@example.org' } }),
      201,
    );
    const scope = `user.${account}`;
    expectStatus(await server.root('POST', `/accounts/${account}/scopes/${scope}`), 201);
    const { rse } = await rseWithProtocols(server);
    await addReplicas(server, rse, [fileItem(scope, 'file1')]);
    const md5 = createHash('md5').update(`${scope}:file1`).digest('hex');
    const lines = expectStatus(await server.root('GET', `/replicas/${scope}/file1`), 200);
    expect(lines.headers['content-type']).to.equal('application/x-json-stream');
    expect(Object.keys(lines.lines<{ pfns: object }>()[0]!.pfns)).to.deep.equal([
      `root://xrd.example.org:1094/data/user/${account}/${md5.slice(0, 2)}/${md5.slice(2, 4)}/file1`,
    ]);
  });

  it('returns a requested file even without replicas, but only files with replicas of a collection (rule 10)', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server);
    await dataset(scope, 'ds', ['with'], rse);
    await addReplicas(server, rse, [fileItem(scope, 'elsewhere')]);
    expectStatus(
      await server.root('PUT', '/replicas', {
        body: { rse, files: [{ scope, name: 'elsewhere', state: 'UNAVAILABLE' }] },
      }),
      200,
    );
    expectStatus(
      await server.root('POST', path(scope, 'ds', '/dids'), { body: { dids: [{ scope, name: 'elsewhere' }] } }),
      201,
    );
    const lines = await listReplicas(server, {
      dids: [
        { scope, name: 'elsewhere' },
        { scope, name: 'ds' },
        { scope, name: 'missing' },
      ],
    });
    expect(lines.map((line) => [line.name, Object.keys(line.pfns).length])).to.deep.equal([
      ['elsewhere', 0],
      ['with', 1],
    ]);
    expect(lines[0]).to.deep.include({ rses: {}, states: {} });
  });

  it('shows only AVAILABLE replicas unless all states are asked for, with their states (rule 10)', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server);
    await dataset(scope, 'ds', ['a', 'b'], rse);
    expectStatus(
      await server.root('PUT', '/replicas', { body: { rse, files: [{ scope, name: 'b', state: 'C' }] } }),
      200,
    );
    expect((await listReplicas(server, { dids: [{ scope, name: 'ds' }] })).map((line) => line.name)).to.deep.equal([
      'a',
    ]);
    const all = await listReplicas(server, { dids: [{ scope, name: 'ds' }], all_states: true });
    expect(all.map((line) => line.states)).to.deep.equal([{ [rse]: 'AVAILABLE' }, { [rse]: 'COPYING' }]);
    expect(
      (await listReplicas(server, { dids: [{ scope, name: 'ds' }], unavailable: true })).map((line) => line.name),
    ).to.deep.equal(['a', 'b']);
  });

  it('orders PFNs LAN before WAN by priority and numbers them from 1 (rule 10)', async () => {
    const scope = await newScope(server);
    const near = await rseWithProtocols(server, [
      { root: protocol('root', 'near.example.org', { wan: 2, lan: 1 }) },
      { https: protocol('https', 'near.example.org', { wan: 1 }, { port: 443 }) },
    ]);
    expectStatus(await server.root('POST', `/rses/${near.rse}/attr/site`, { body: { value: 'CERN' } }), 201);
    const far = await rseWithProtocols(server, [{ root: protocol('root', 'far.example.org', { wan: 1 }) }]);
    await addReplicas(server, near.rse, [fileItem(scope, 'f1')]);
    await addReplicas(server, far.rse, [fileItem(scope, 'f1')]);
    const [line] = await listReplicas(server, {
      dids: [{ scope, name: 'f1' }],
      client_location: { site: 'CERN' },
      schemes: ['root'],
    });
    expect(
      Object.entries(line!.pfns).map(([pfn, entry]) => [pfn.split('/')[2], entry.domain, entry.priority]),
    ).to.deep.equal([
      ['near.example.org:1094', 'lan', 1],
      ['far.example.org:1094', 'wan', 2],
    ]);
    const both = await listReplicas(server, { dids: [{ scope, name: 'f1' }], domain: 'all', rse_expression: near.rse });
    expect(Object.values(both[0]!.pfns).map((entry) => [entry.domain, entry.priority])).to.deep.equal([
      ['lan', 1],
      ['wan', 2],
    ]);
    const limited = await listReplicas(server, { dids: [{ scope, name: 'f1' }] }, '?limit=1');
    expect(Object.keys(limited[0]!.pfns)).to.have.length(1);
    expect(Object.keys(limited[0]!.rses)).to.have.members([near.rse, far.rse]);
  });

  it('refuses a limit that is not a whole number, and a bad signature lifetime from callers who may sign', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server);
    await addReplicas(server, rse, [fileItem(scope, 'f')]);
    const dids = [{ scope, name: 'f' }];
    const list = (body: object, query = '', token = server.rootToken) =>
      server.call('POST', `/replicas/list${query}`, { body: { dids, ...body }, token });
    const notAnInteger = (text: string, name: string) =>
      new RegExp(`^invalid literal for int\\(\\) with base 10: '${text}' \\(${name}\\)$`);
    expectError(await list({}, '?limit=x'), 400, 'ValueError', notAnInteger('x', 'limit'));
    expectError(await list({}, '?limit='), 400, 'ValueError', notAnInteger('', 'limit'));
    expectError(await list({ signature_lifetime: 'x' }), 400, 'ValueError', notAnInteger('x', 'signature_lifetime'));
    expectError(
      await list({ signature_lifetime: 0 }),
      400,
      'ValueError',
      /^'signature_lifetime' must be a whole number of seconds from 1 to 604800, not 0$/,
    );
    expectError(
      await list({ signature_lifetime: 1.5 }),
      400,
      'ValueError',
      notAnInteger('1\\.5', 'signature_lifetime'),
    );
    // The body is read before the query.
    expectError(await list({ nrandom: 'y' }, '?limit=x'), 400, 'ValueError', notAnInteger('y', 'nrandom'));
    // Someone who may not sign is not asked for a lifetime: it is not read.
    const user = await server.createUser();
    expect(expectStatus(await list({ signature_lifetime: 'x' }, '', user.token), 200).lines()).to.have.length(1);
    expectError(
      await server.root('GET', `/replicas/${scope}/f?limit=x`),
      400,
      'ValueError',
      notAnInteger('x', 'limit'),
    );
    // Here an empty limit is none.
    expect(expectStatus(await server.root('GET', `/replicas/${scope}/f?limit=`), 200).lines()).to.have.length(1);
  });

  it('lists a file held by two datasets of a container once, draws nrandom files, and resolves parents', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server);
    await dataset(scope, 'ds1', ['f1', 'f2'], rse);
    await dataset(scope, 'ds2', ['f3'], rse);
    expectStatus(
      await server.root('POST', path(scope, 'ds2', '/dids'), { body: { dids: [{ scope, name: 'f1' }] } }),
      201,
    );
    expectStatus(
      await server.root('POST', path(scope, 'cont'), {
        body: {
          type: 'CONTAINER',
          dids: [
            { scope, name: 'ds1' },
            { scope, name: 'ds2' },
          ],
        },
      }),
      201,
    );
    const names = (await listReplicas(server, { dids: [{ scope, name: 'cont' }] })).map((line) => line.name);
    expect(names.sort()).to.deep.equal(['f1', 'f2', 'f3']);
    expect(await listReplicas(server, { dids: [{ scope, name: 'cont' }], nrandom: 2 })).to.have.length(2);
    const [withParents] = await listReplicas(server, { dids: [{ scope, name: 'f3' }], resolve_parents: true });
    expect(withParents!.parents).to.have.members([`${scope}:ds2`, `${scope}:cont`]);
  });

  it('lists every file of datasets larger than one page, each once, in child order, with one NDJSON line each', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server);
    const names = (prefix: string, count: number) =>
      Array.from({ length: count }, (_, index) => `${prefix}${String(index).padStart(4, '0')}`);
    await dataset(scope, 'big1', names('a', 1000), rse);
    expectStatus(
      await server.root('POST', path(scope, 'big1', '/dids'), {
        body: {
          rse,
          dids: names('a', 1100)
            .slice(1000)
            .map((file) => fileItem(scope, file)),
        },
      }),
      201,
    );
    await dataset(scope, 'big2', names('b', 700), rse);
    // 600 files of big1 also belong to big2: listed once, with big1 (the first dataset listed).
    expectStatus(
      await server.root('POST', path(scope, 'big2', '/dids'), {
        body: { dids: names('a', 600).map((name) => ({ scope, name })) },
      }),
      201,
    );
    expectStatus(
      await server.root('POST', path(scope, 'bigc'), {
        body: {
          type: 'CONTAINER',
          dids: [
            { scope, name: 'big1' },
            { scope, name: 'big2' },
          ],
        },
      }),
      201,
    );
    const listed = (await listReplicas(server, { dids: [{ scope, name: 'bigc' }] })).map((line) => line.name);
    expect(listed).to.have.length(1800);
    expect(new Set(listed).size).to.equal(1800);
    expect(listed.slice(0, 1100)).to.deep.equal(names('a', 1100));
    expect(listed.slice(1100)).to.deep.equal(names('b', 700));
    const one = await listReplicas(server, {
      dids: [
        { scope, name: 'big1' },
        { scope, name: 'a0001' },
      ],
    });
    expect(one.map((line) => line.name)).to.deep.equal([
      'a0001',
      ...names('a', 1100).filter((name) => name !== 'a0001'),
    ]);
  });

  it('answers a metalink when asked for one', async () => {
    const scope = await newScope(server);
    const { rse } = await rseWithProtocols(server);
    await addReplicas(server, rse, [fileItem(scope, 'f1')]);
    const response = await server.root('POST', '/replicas/list', {
      body: { dids: [{ scope, name: 'f1' }] },
      headers: { Accept: 'application/metalink4+xml' },
    });
    expectStatus(response, 200);
    expect(response.headers['content-type']).to.equal('application/metalink4+xml');
    expect(response.text).to.match(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<metalink xmlns="urn:ietf:params:xml:ns:metalink">\n <file name="f1">/,
    );
    expect(response.text)
      .to.include(`<identity>${scope}:f1</identity>`)
      .and.include('<hash type="adler32">0cc737eb</hash>')
      .and.include(`<url location="${rse}" domain="wan" priority="1" client_extract="false">root://`);
    const single = await server.root('GET', `/replicas/${scope}/f1`, {
      headers: { Accept: 'application/metalink4+xml' },
    });
    expect(single.text)
      .to.include(`<glfn name="/atlas/rucio/${scope}:f1"></glfn>`)
      .and.include(`<url location="${rse}" priority="1">`);
  });

  it('refuses bad listing requests with Rucio errors', async () => {
    const scope = await newScope(server);
    expectError(
      await server.root('POST', '/replicas/list?sort=closest', { body: { dids: [{ scope, name: 'f' }] } }),
      400,
      'SortingAlgorithmNotSupported',
    );
    expectError(
      await server.root('POST', '/replicas/list', { body: { dids: [{ scope: '', name: 'f' }] } }),
      400,
      'InvalidObject',
      /r_dids/,
    );
    expectError(
      await server.root('POST', '/replicas/list', { body: { dids: [], domain: 'moon' } }),
      400,
      'InvalidObject',
      /domain/,
    );
    expectError(
      await server.root('POST', '/replicas/list', { body: { dids: [], updated_after: 'yesterday' } }),
      400,
      'ValueError',
    );
    expectError(
      await server.root('POST', '/replicas/list', { body: { dids: [{ scope, name: 'f' }], rse_expression: 'A&' } }),
      400,
      'InvalidRSEExpression',
    );
    expectError(await server.root('GET', `/replicas/${scope}/nothing`), 404, 'DataIdentifierNotFound');
    expectError(await server.root('GET', '/replicas/list'), 400, 'ValueError', /Could not parse/);
    expectError(
      await server.root('GET', `/replicas/${scope}/f`, { headers: { Accept: 'text/plain' } }),
      406,
      'UnsupportedRequestedContentType',
    );
  });
});
