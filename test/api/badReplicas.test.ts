import { expect } from 'chai';
import { newScope } from '../support/dids.ts';
import { uniqueName } from '../support/events.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { addReplicas, fileItem, listReplicas, protocol, rseWithProtocols } from './replicaSupport.ts';

describe('API: bad, suspicious and temporarily unavailable replicas', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  /** Two files with one replica each; their PFNs as the listing gives them. */
  const twoReplicas = async () => {
    const scope = await newScope(server);
    // Each RSE its own host: a PFN that two RSEs could serve is refused.
    const host = `${uniqueName('h')}.example.org`;
    const { rse, id } = await rseWithProtocols(server, [{ root: protocol('root', host) }]);
    await addReplicas(server, rse, [fileItem(scope, 'f1'), fileItem(scope, 'f2')]);
    const lines = await listReplicas(server, {
      dids: [
        { scope, name: 'f1' },
        { scope, name: 'f2' },
      ],
    });
    const [pfn1, pfn2] = lines.map((line) => Object.keys(line.pfns)[0]!);
    return { scope, rse, id, host, pfn1: pfn1!, pfn2: pfn2! };
  };
  const badStates = async (query: string) =>
    expectStatus(await server.root('GET', `/replicas/bad/states${query}`), 200).lines<Record<string, unknown>>();

  it('declares suspicious replicas by PFN (anyone), counts the declarations and reports unknown PFNs', async () => {
    const { scope, rse, id, host, pfn1 } = await twoReplicas();
    const user = await server.createUser();
    const declare = (pfns: string[]) =>
      server.call('POST', '/replicas/suspicious', { token: user.token, body: { pfns, reason: 'checksum' } });
    expect(expectStatus(await declare([pfn1]), 201).json()).to.deep.equal({});
    const unknown = `root://${host}:1094/data/nothing/here`;
    expect(expectStatus(await declare([pfn1, unknown]), 201).json()).to.deep.equal({
      [rse]: [`${unknown} Unknown replica`],
    });
    const suspicious = expectStatus(await server.root('GET', `/replicas/suspicious?rse_expression=${rse}`), 200);
    expect(suspicious.headers['content-type']).to.equal('application/json');
    expect(suspicious.json()).to.deep.equal([
      {
        scope,
        name: 'f1',
        rse,
        rse_id: id,
        cnt: 2,
        created_at: suspicious.json<{ created_at: string }[]>()[0]!.created_at,
      },
    ]);
    expect(
      expectStatus(await server.root('GET', `/replicas/suspicious?rse_expression=${rse}&nattempts=2`), 200).json(),
    ).to.deep.equal([]);
    expect((await badStates(`?state=S&rse=${rse}`)).map((row) => [row.name, row.state])).to.deep.equal([
      ['f1', 'SUSPICIOUS'],
      ['f1', 'SUSPICIOUS'],
    ]);
    expect((await listReplicas(server, { dids: [{ scope, name: 'f1' }] }))[0]!.states).to.deep.equal({
      [rse]: 'AVAILABLE',
    });
  });

  it('declares bad replicas (root only): hidden from listings, once, until recovered', async () => {
    const { scope, rse, host, pfn1 } = await twoReplicas();
    const user = await server.createUser({ admin: true });
    expectError(
      await server.call('POST', '/replicas/bad', { token: user.token, body: { replicas: [pfn1], reason: 'lost' } }),
      401,
      'AccessDenied',
      /can not declare bad replicas in RSE/,
    );
    expect(
      expectStatus(
        await server.root('POST', '/replicas/bad', { body: { replicas: [pfn1], reason: 'lost' } }),
        201,
      ).json(),
    ).to.deep.equal({});
    expect(
      expectStatus(await server.root('POST', '/replicas/bad', { body: { pfns: [pfn1] } }), 201).json(),
    ).to.deep.equal({ [rse]: [`${pfn1} Already declared`] });
    expect(
      expectStatus(
        await server.root('POST', '/replicas/bad', { body: { replicas: [{ scope, name: 'nope', rse }] } }),
        201,
      ).json(),
    ).to.deep.equal({
      [rse]: [`('${scope}', 'nope') Unknown replica`],
    });
    expectError(
      await server.root('POST', '/replicas/bad', {
        body: { replicas: [`root://${host}:1094/data/x`, 'https://other/x'] },
      }),
      400,
      'InvalidType',
    );
    expectError(
      await server.root('POST', '/replicas/bad', { body: { replicas: ['root://unknown.example.org:1/x'] } }),
      404,
      'ReplicaNotFound',
      /Not all replicas found/,
    );
    expect((await listReplicas(server, { dids: [{ scope, name: 'f1' }] }))[0]!.pfns).to.deep.equal({});
    expect((await listReplicas(server, { dids: [{ scope, name: 'f1' }], all_states: true }))[0]!.states).to.deep.equal({
      [rse]: 'BAD',
    });
    expect((await badStates(`?state=BAD&rse=${rse}`)).map((row) => [row.name, row.state])).to.deep.equal([
      ['f1', 'BAD'],
    ]);
    expect(await badStates(`?state=B&rse=${rse}&list_pfns=True`)).to.deep.equal([pfn1]);
    expectStatus(
      await server.root('PUT', '/replicas', { body: { rse, files: [{ scope, name: 'f1', state: 'AVAILABLE' }] } }),
      200,
    );
    expect((await badStates(`?rse=${rse}`)).map((row) => row.state)).to.deep.equal(['RECOVERED']);
    expect(
      expectStatus(
        await server.root('POST', '/replicas/bad', { body: { replicas: [{ scope, name: 'f1', rse }] } }),
        201,
      ).json(),
    ).to.deep.equal({});
  });

  it('declares the replicas of DIDs bad on an RSE and summarises the incidents by day and reason', async () => {
    const { scope, rse, id } = await twoReplicas();
    const outcome = await server.root('POST', '/replicas/bad/dids', {
      body: {
        rse,
        dids: [
          { scope, name: 'f1' },
          { scope, name: 'f9' },
        ],
        reason: 'disk',
      },
    });
    expect(expectStatus(outcome, 201).json()).to.deep.equal([`${scope}:f9 Unknown replica`]);
    const [summary] = expectStatus(await server.root('GET', `/replicas/bad/summary?rse_expression=${rse}`), 200).lines<
      Record<string, unknown>
    >();
    expect(summary).to.deep.include({ BAD: 1, rse, rse_id: id, reason: 'disk' });
    expect(String(summary!.created_at)).to.match(/ 00:00:00 UTC$/);
  });

  it('applies declared PFNs at once: temporarily unavailable until an expiry within 30 days', async () => {
    const { scope, rse, host, pfn1, pfn2 } = await twoReplicas();
    const soon = new Date(Date.now() + 86_400_000).toISOString().replace('Z', '');
    const declare = (body: object) =>
      server.root('POST', '/replicas/bad/pfns', { body: { reason: 'downtime', ...body } });
    expectError(
      await declare({ pfns: [pfn1], state: 'TEMPORARY_UNAVAILABLE' }),
      400,
      'InputValidationError',
      /expires_at value should be set/,
    );
    expectError(
      await declare({ pfns: [pfn1], state: 'BAD', expires_at: soon }),
      400,
      'InputValidationError',
      /shouldn't be set/,
    );
    expectError(
      await declare({ pfns: [pfn1], state: 'TEMPORARY_UNAVAILABLE', expires_at: '2999-01-01T00:00:00.000000' }),
      400,
      'InputValidationError',
      /maximum duration of 30 days/,
    );
    expectError(
      await declare({ pfns: [pfn1], state: 'TEMPORARY_UNAVAILABLE', expires_at: 'tomorrow' }),
      400,
      'ValueError',
    );
    expectError(
      await declare({
        pfns: [pfn1, `root://${host}:1094/data/none`],
        state: 'TEMPORARY_UNAVAILABLE',
        expires_at: soon,
      }),
      404,
      'ReplicaNotFound',
    );
    expectStatus(await declare({ pfns: [pfn1], state: 'TEMPORARY_UNAVAILABLE', expires_at: soon }), 201);
    expectStatus(await declare({ pfns: [pfn2], state: 'SUSPICIOUS' }), 201);
    const states = await listReplicas(server, {
      dids: [
        { scope, name: 'f1' },
        { scope, name: 'f2' },
      ],
      all_states: true,
    });
    expect(states.map((line) => line.states[rse])).to.deep.equal(['TEMPORARY_UNAVAILABLE', 'AVAILABLE']);
    expect((await badStates(`?state=T&rse=${rse}`)).map((row) => row.name)).to.deep.equal(['f1']);
    const user = await server.createUser({ admin: true });
    expectError(
      await server.call('POST', '/replicas/bad/pfns', { token: user.token, body: { pfns: [pfn2], state: 'BAD' } }),
      401,
      'AccessDenied',
    );
  });
});
