import { expect } from 'chai';
import { silentLogger } from '../../infra/logger.ts';
import { createTransferTools } from '../../infra/transfer/transferTools.ts';
import { deletionCandidates } from '../../projections/replica/deletionQueries.ts';
import { replicaId, replicasCollection, type ReplicaDocument } from '../../projections/replica/replicaDocuments.ts';
import { cleanerRole } from '../../workers/rule/judgeRoles.ts';
import { kronosRole } from '../../workers/trace/kronosRole.ts';
import { createWorkerContext } from '../../workers/workerContext.ts';
import { newScope, path } from '../support/dids.ts';
import { uniqueName } from '../support/events.ts';
import { request } from '../support/http.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { addReplicas, fileItem, rseWithProtocols } from './replicaSupport.ts';

type Meta = { accessed_at: string | null; access_cnt: number | null };

/**
 * Traces over HTTP (Rucio's traces.py, nongrid_traces.py) and what kronos makes of them: the
 * replica's and the DID's access, and the reaper's order.
 */
describe('API: traces and access times', () => {
  let server: TestServer;
  const dirs = makeTempDir('kronos-');
  before(async () => (server = await startTestServer()));
  after(async () => {
    await server.stop();
    dirs.dispose();
  });

  /** A scope with a dataset of two files, each with a replica on a new RSE. */
  const world = async () => {
    const scope = await newScope(server);
    const { rse, id } = await rseWithProtocols(server);
    const [f1, f2, dataset] = [uniqueName('f'), uniqueName('f'), uniqueName('ds')];
    await addReplicas(server, rse, [fileItem(scope, f1), fileItem(scope, f2)]);
    expectStatus(await server.root('POST', path(scope, dataset), { body: { type: 'DATASET' } }), 201);
    expectStatus(
      await server.root('POST', path(scope, dataset, '/dids'), {
        body: {
          dids: [
            { scope, name: f1 },
            { scope, name: f2 },
          ],
        },
      }),
      201,
    );
    return { scope, rse, rseId: id, f1, f2, dataset };
  };
  /** A trace as `rucio download` posts it for a file it downloaded, without a token. */
  const downloaded = (scope: string, name: string, rse: string, extra: object = {}) => ({
    hostname: 'laptop',
    localSite: 'ROAMING',
    account: 'root',
    eventType: 'download',
    eventVersion: 'api_39.4.2',
    uuid: '0123456789abcdef0123456789abcdef',
    scope,
    filename: name,
    datasetScope: '',
    dataset: '',
    filesize: 100,
    remoteSite: rse,
    clientState: 'DONE',
    stateReason: 'OK',
    ...extra,
  });
  const post = (body: unknown, route = '/traces/') =>
    request(server.url, 'POST', route, { body: typeof body === 'string' ? body : JSON.stringify(body) });
  let cycle = 0;
  const workerContext = () =>
    createWorkerContext(
      server.runtime.services.commands,
      server.runtime.services.readModels,
      server.runtime.services.progress,
      silentLogger(),
      createTransferTools({ dataDir: dirs.path, clock: server.runtime.services.clock }),
      { clock: server.runtime.services.clock },
    );
  /** One kronos cycle, as if it ran a few seconds from now (past the buffer's settling time), then the read models. */
  const kronos = async () => {
    cycle += 1;
    const { commands, progress } = server.runtime.services;
    const report = await kronosRole.run(
      { jobId: `test-${cycle}`, startedAt: new Date(Date.now() + 5000) },
      workerContext(),
    );
    await progress.waitFor(await commands.eventStore.headPosition(), 5000);
    return report;
  };
  const meta = async (scope: string, name: string) =>
    expectStatus(await server.root('GET', path(scope, name, '/meta')), 200).json<Meta>();
  const replica = (scope: string, name: string, rseId: string) =>
    server.runtime.services.readModels
      .collection<ReplicaDocument>(replicasCollection)
      .get(replicaId(scope, name, rseId));
  const historyTypes = async (scope: string, name: string) =>
    expectStatus(await server.root('GET', `/audit/dids/${scope}/${name}/events`), 200)
      .lines<{ type: string; data: { accesses?: number } }>()
      .filter((line) => line.type === 'ReplicaAccessed' || line.type === 'DidAccessed');

  it("takes a download trace without a token, and kronos sets the replica's, the file's and its dataset's access", async () => {
    const { scope, rse, rseId, f1, f2, dataset } = await world();
    const answer = expectStatus(await post(downloaded(scope, f1, rse)), 201);
    expect(answer.text).to.equal('Created');
    expect(answer.headers['content-type']).to.equal('application/octet-stream');
    expect((await meta(scope, f1)).accessed_at).to.equal(null);
    await kronos();
    const file = await meta(scope, f1);
    expect(file.access_cnt).to.equal(1);
    expect(Date.parse(file.accessed_at!)).to.be.closeTo(Date.now(), 60_000);
    expect((await meta(scope, dataset)).access_cnt).to.equal(1);
    expect((await meta(scope, f2)).accessed_at).to.equal(null);
    expect((await replica(scope, f1, rseId))!.accessed_at).to.be.a('string');
    expect((await replica(scope, f2, rseId))!.accessed_at).to.equal(null);
  });

  it('records many traces of one replica in a batch as one event, counting them all', async () => {
    const { scope, rse, f1, dataset } = await world();
    expectStatus(await post([1, 2, 3, 4, 5].map(() => downloaded(scope, f1, rse))), 201);
    await kronos();
    const events = await historyTypes(scope, f1);
    expect(events.map((line) => [line.type, line.data.accesses])).to.deep.equal([['ReplicaAccessed', 5]]);
    expect((await meta(scope, f1)).access_cnt).to.equal(5);
    expect((await historyTypes(scope, dataset)).map((line) => line.type)).to.deep.equal(['DidAccessed']);
  });

  it('records nothing for failed downloads, uploads, or traces of RSEs that do not exist, and still answers 201', async () => {
    const { scope, rse, f1 } = await world();
    expectStatus(
      await post([
        downloaded(scope, f1, rse, { clientState: 'FAILED' }),
        downloaded(scope, f1, rse, { eventType: 'upload' }),
        downloaded(scope, f1, 'NO_SUCH_RSE'),
      ]),
      201,
    );
    await kronos();
    expect(await meta(scope, f1)).to.include({ accessed_at: null });
  });

  it('lets the reaper take the least recently read replica first: the last lock gone, its tombstone is its last read', async () => {
    const { scope, rse, rseId, f1, f2 } = await world();
    const added = await server.root('POST', '/rules/', {
      body: {
        dids: [
          { scope, name: f1 },
          { scope, name: f2 },
        ],
        copies: 1,
        rse_expression: rse,
      },
    });
    const ruleIds = expectStatus(added, 201).json<string[]>();
    // f1 was created first: unread, it would go first. Read, it goes after f2.
    expectStatus(await post(downloaded(scope, f1, rse)), 201);
    await kronos();
    for (const ruleId of ruleIds) expectStatus(await server.root('DELETE', `/rules/${ruleId}`, { body: {} }), 200);
    // The judge-cleaner deletes the rule (expired within the hour by its deletion), releasing its locks.
    await cleanerRole.run({ jobId: `cleaner-${cycle}`, startedAt: new Date(Date.now() + 7_200_000) }, workerContext());
    const { commands, progress } = server.runtime.services;
    await progress.waitFor(await commands.eventStore.headPosition(), 5000);
    const candidates = await deletionCandidates(server.runtime.services.readModels, rseId, {
      now: new Date(Date.now() + 60_000).toISOString(),
      obsoleteOnly: false,
      limit: 10,
    });
    expect(candidates.candidates.map((candidate) => candidate.name)).to.deep.equal([f2, f1]);
    expect(candidates.candidates[1]!.tombstone).to.equal((await replica(scope, f1, rseId))!.accessed_at);
  });

  it('answers 400 to a body that is no JSON, or holds anything but trace objects', async () => {
    expectError(await post('{not json'), 400, 'ValueError');
    expectError(await post([1, 2]), 400, 'ValueError', /single trace as a JSON object or a list of trace objects/);
  });

  it('refuses a trace body over 1 MiB with 413', async () => {
    const big = JSON.stringify({ eventType: 'download', padding: 'x'.repeat(1024 * 1024) });
    expect((await post(big)).status).to.equal(413);
  });

  it("refuses an address's traces past its rate with 429, and takes them again once its bucket fills", async () => {
    expectStatus(
      await server.root('POST', '/config', { body: { trace: { rate_per_address: 0.1, burst_per_address: 3 } } }),
      201,
    );
    try {
      expectStatus(await post([{ eventType: 'upload' }, { eventType: 'upload' }, { eventType: 'upload' }]), 201);
      expectError(await post({ eventType: 'upload' }), 429, 'TooManyRequests');
    } finally {
      expectStatus(
        await server.root('POST', '/config', { body: { trace: { rate_per_address: 100, burst_per_address: 2000 } } }),
        201,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expectStatus(await post({ eventType: 'upload' }), 201);
  });

  it('takes a non-grid trace without a token, and refuses one that is no JSON object', async () => {
    expectStatus(await post({ payload: { file: 'x' } }, '/nongrid_traces/'), 201);
    expectError(await post([1], '/nongrid_traces/'), 400, 'TypeError');
  });
});
