import { expect } from 'chai';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { checksumFile } from '../../infra/transfer/checksums.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { newScope, path } from '../support/dids.ts';
import { fileItem, rseWithProtocols } from '../api/replicaSupport.ts';
import { ruleJsonOverHttp, ruleReaches, ruleOverHttp } from '../support/rules.ts';
import { transferStatus } from '../../projections/request/transferStatus.ts';
import { createTransferTools } from '../../infra/transfer/transferTools.ts';
import type { RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import { reactionsOf } from '../../workers/reactor.ts';
import { cancellerRole } from '../../workers/request/conveyorRoles.ts';
import type { WorkerContext } from '../../workers/workerContext.ts';
import { systemClock } from '../../infra/clock.ts';

/**
 * The conveyor as a user meets it: a server with its workers, the `mock` transfer tool, and
 * rules whose copies arrive (or fail) without anyone acting.
 */

type RequestJson = Readonly<Record<string, unknown>>;

/** Two RSEs linked A → B, a dataset of `files` on A: what a rule to B needs to transfer. */
const linkedWorld = async (
  server: TestServer,
  files: readonly string[],
  destinationAttributes: Record<string, string> = {},
) => {
  const scope = await newScope(server);
  const a = await rseWithProtocols(server);
  const b = await rseWithProtocols(server);
  expectStatus(await server.root('POST', `/rses/${a.rse}/distances/${b.rse}`, { body: { distance: 1 } }), 201);
  for (const [key, value] of Object.entries(destinationAttributes))
    expectStatus(await server.root('POST', `/rses/${b.rse}/attr/${key}`, { body: { value } }), 201);
  const dataset = uniqueName('ds');
  expectStatus(await server.root('POST', path(scope, dataset), { body: { type: 'DATASET' } }), 201);
  expectStatus(
    await server.root('POST', '/replicas', { body: { rse: a.rse, files: files.map((name) => fileItem(scope, name)) } }),
    201,
  );
  expectStatus(
    await server.root('POST', path(scope, dataset, '/dids'), {
      body: { dids: files.map((name) => ({ scope, name })) },
    }),
    201,
  );
  return { scope, dataset, a, b };
};

const history = async (server: TestServer, a: string, b: string, states: string): Promise<RequestJson[]> =>
  expectStatus(
    await server.root('GET', `/requests/history/list?src_rse=${a}&dst_rse=${b}&request_states=${states}&limit=1000`),
    200,
  ).lines<RequestJson>();

describe('Roles: the conveyor at work with the mock tool (rules 17, 18 and 22)', function () {
  this.timeout(60_000);
  let server: TestServer;
  before(async () => (server = await startTestServer({ roles: { workers: true } })));
  after(async () => server.stop());

  it('brings a rule’s copies: requests QUEUED → SUBMITTED → DONE, the rule OK, with nobody acting (rules 17 and 22)', async () => {
    const { scope, dataset, a, b } = await linkedWorld(server, ['f1', 'f2']);
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse });
    await ruleReaches(server, ruleId, 'OK', 20_000);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ locks_ok_cnt: 2, locks_replicating_cnt: 0 });
    const done = expectStatus(
      await server.root('GET', `/requests/history/${scope}/f1/${b.rse}`),
      200,
    ).json<RequestJson>();
    expect(done).to.include({
      state: 'DONE',
      rule_id: ruleId,
      source_rse: a.rse,
      dest_rse: b.rse,
      external_host: 'mock',
      transfertool: 'mock',
      retry_count: null,
    });
    expect(done.external_id).to.match(/^mock-/);
    expect(done.dest_url).to.match(/^root:\/\/xrd\.example\.org:1094\/data\/.+\/f1$/);
    expect((await history(server, a.rse, b.rse, 'D')).map((request) => request.name).sort()).to.deep.equal([
      'f1',
      'f2',
    ]);
    // The replica is AVAILABLE on B, and nothing is left in the active requests.
    const replicas = expectStatus(await server.root('GET', `/replicas/${scope}/f1?all_states=true`), 200).lines<{
      states: Record<string, string>;
    }>();
    expect(replicas[0]!.states[b.rse]).to.equal('AVAILABLE');
    expect((await server.root('GET', `/requests/${scope}/f1/${b.rse}`)).status).to.equal(404);
  });

  it('retries a failing transfer three times, chained by previous_attempt_id, then makes the lock and the rule STUCK with the error (rules 18 and 22)', async () => {
    const { scope, dataset, a, b } = await linkedWorld(server, ['f1'], { mock_outcome: 'failed' });
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse });
    await ruleReaches(server, ruleId, 'STUCK', 30_000);
    const rule = await ruleJsonOverHttp(server, ruleId);
    expect(rule).to.include({ locks_stuck_cnt: 1, error: 'TRANSFER_FAILED:Mock transfer failed as asked' });
    const attempts = await history(server, a.rse, b.rse, 'F');
    expect(attempts.map((attempt) => attempt.retry_count).sort()).to.deep.equal([1, 2, 3, null]);
    const byId = new Map(attempts.map((attempt) => [attempt.id, attempt]));
    let last = attempts.find((attempt) => attempt.retry_count === 3)!;
    const chain = [last.retry_count];
    while (last.previous_attempt_id) {
      last = byId.get(last.previous_attempt_id)!;
      chain.push(last.retry_count);
    }
    expect(chain).to.deep.equal([3, 2, 1, null]);
    const analysis = expectStatus(await server.root('GET', `/rules/${ruleId}/analysis`), 200).json<{
      rule_error: string;
      transfers: Record<string, unknown>[];
    }>();
    expect(analysis.rule_error).to.equal('TRANSFER_FAILED:Mock transfer failed as asked');
    expect(analysis.transfers[0]).to.include({
      name: 'f1',
      attempts: 4,
      last_error: 'TRANSFER_FAILED:Mock transfer failed as asked',
      last_source: a.rse,
    });
    const locks = expectStatus(await server.root('GET', `/rules/${ruleId}/locks`), 200).lines<{ state: string }>();
    expect(locks.map((lock) => lock.state)).to.deep.equal(['STUCK']);
  });

  it('ends a request without a source NO_SOURCES, never retried, the rule STUCK (rule 22)', async () => {
    const { scope, dataset, b } = await linkedWorld(server, ['f1']);
    const c = await rseWithProtocols(server);
    // No distance from B or A to C: no path.
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: dataset }], copies: 1, rse_expression: c.rse });
    await ruleReaches(server, ruleId, 'STUCK', 20_000);
    expect((await ruleJsonOverHttp(server, ruleId)).error).to.equal('NO_SOURCES:NO_SOURCES');
    const archived = expectStatus(
      await server.root('GET', `/requests/history/${scope}/f1/${c.rse}`),
      200,
    ).json<RequestJson>();
    expect(archived).to.include({ state: 'NO_SOURCES', retry_count: null });
    void b;
  });

  it('copies a real file between two directories with the posix tool, verified, the rule OK (rules 17 and 22)', async () => {
    const dirs = makeTempDir('posix-rses-');
    try {
      const scope = await newScope(server);
      const fileProtocol = (rse: string) => ({
        file: {
          hostname: 'localhost',
          port: 0,
          prefix: join(dirs.path, rse),
          impl: 'rucio.rse.protocols.posix.Default',
          domains: {
            lan: { read: 1, write: 1, delete: 1 },
            wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
          },
        },
      });
      const a = await rseWithProtocols(server, [fileProtocol('A')]);
      const b = await rseWithProtocols(server, [fileProtocol('B')]);
      expectStatus(await server.root('POST', `/rses/${a.rse}/distances/${b.rse}`, { body: { distance: 1 } }), 201);
      const pfns = expectStatus(await server.root('GET', `/rses/${a.rse}/lfns2pfns?lfn=${scope}:hello.txt`), 200).json<
        Record<string, string>
      >();
      const source = pfns[`${scope}:hello.txt`]!.replace('file://localhost', '');
      mkdirSync(dirname(source), { recursive: true });
      writeFileSync(source, 'hello, transfers\n');
      const { adler32 } = await checksumFile(source, 'adler32');
      expectStatus(
        await server.root('POST', '/replicas', {
          body: { rse: a.rse, files: [{ scope, name: 'hello.txt', bytes: 17, adler32 }] },
        }),
        201,
      );
      const ruleId = await ruleOverHttp(server, {
        dids: [{ scope, name: 'hello.txt' }],
        copies: 1,
        rse_expression: b.rse,
      });
      await ruleReaches(server, ruleId, 'OK', 20_000);
      const done = expectStatus(
        await server.root('GET', `/requests/history/${scope}/hello.txt/${b.rse}`),
        200,
      ).json<RequestJson>();
      expect(done).to.include({ state: 'DONE', transfertool: 'posix' });
      expect(readFileSync((done.dest_url as string).replace('file://localhost', ''), 'utf8')).to.equal(
        'hello, transfers\n',
      );
    } finally {
      dirs.dispose();
    }
  });

  it('shows what `dms transfers status` prints: nothing active left, the last hour’s failures', async () => {
    const status = await transferStatus(server.runtime.services.readModels, new Date());
    expect(status.states).to.deep.equal({});
    expect(status.failuresLastHour.archived).to.include({ FAILED: 4, NO_SOURCES: 1 });
    expect(status.failuresLastHour.transfersFailed.map((link) => link.files)).to.deep.equal([4]);
  });
});

describe('Roles: the preparer and the throttler with a transfer limit (rule 24)', function () {
  this.timeout(60_000);
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ roles: { workers: true } });
    expectStatus(
      await server.root('POST', '/config', {
        body: { conveyor: { use_preparer: true }, 'conveyor-throttler': { interval: 1 } },
      }),
      201,
    );
    server = await server.restart();
  });
  after(async () => server.stop());

  it('keeps at most one transfer in flight under a limit of 1, and brings every copy in the end', async () => {
    const files = ['f1', 'f2', 'f3'];
    const { scope, dataset, a, b } = await linkedWorld(server, files, { mock_delay_ms: '700' });
    expectStatus(
      await server.root('PUT', '/requests/transfer_limits', { body: { rse_expression: b.rse, max_transfers: 1 } }),
      201,
    );
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse });
    let mostInFlight = 0;
    let sawWaiting = false;
    await eventually(
      async () => {
        const active = expectStatus(
          await server.root('GET', `/requests/list?src_rse=${a.rse}&dst_rse=${b.rse}&request_states=Q,G,S,W`),
          200,
        ).lines<RequestJson>();
        mostInFlight = Math.max(mostInFlight, active.filter((request) => request.state !== 'WAITING').length);
        sawWaiting ||= active.some((request) => request.state === 'WAITING');
        return (await ruleJsonOverHttp(server, ruleId)).state === 'OK';
      },
      40_000,
      'the rule OK',
    );
    expect(sawWaiting).to.equal(true);
    expect(mostInFlight).to.equal(1);
    expect((await history(server, a.rse, b.rse, 'D')).map((request) => request.name).sort()).to.deep.equal(files);
    const [limit] = expectStatus(await server.root('GET', '/requests/transfer_limits'), 200).lines<RequestJson>();
    expect(limit).to.include({
      rse_expression: b.rse,
      max_transfers: 1,
      direction: 'DESTINATION',
      activity: 'all_activities',
    });
  });
});

describe('Roles: the conveyor-canceller', () => {
  it('cancels the tool’s job of a cancelled request, and ignores requests without one', async () => {
    const cancelled: string[] = [];
    const tool = {
      name: 'fake',
      submit: async () => [],
      poll: async () => new Map(),
      cancel: async (ids: readonly string[]) => void cancelled.push(...ids),
      close: async () => undefined,
    };
    const transferTools = createTransferTools({ dataDir: '.', clock: systemClock }, { fake: () => tool });
    const context = { transferTools } as unknown as WorkerContext;
    const cancelledRequest = (requestId: string, externalId: string | null, transfertool: string | null) => ({
      requestId,
      scope: 'user.jdoe',
      name: requestId,
      destRseId: 'b'.repeat(32),
      previousState: 'SUBMITTED',
      reason: 'rule deleted',
      externalId,
      transfertool,
    });
    // A batch's cancellations, as the reactor hands them to the role (upcast to the current shape).
    const event = (...requests: object[]) =>
      ({
        id: 'e1',
        type: 'RequestCancelled',
        streamName: 'requests-rule-SITE-r1',
        revision: 1n,
        position: 1n,
        data: { requests, cancelledAt: '2026-11-22T10:00:00.000Z' },
        metadata: { schemaVersion: 2 },
      }) as unknown as RecordedEvent;
    // As the reactor makes jobs of events: through the role's reaction.
    const [reaction] = reactionsOf([cancellerRole]);
    expect(reaction!.jobOf!(event(cancelledRequest('r1', null, null)))).to.equal(undefined);
    const job = reaction!.jobOf!(event(cancelledRequest('r1', 'job-9', 'fake'), cancelledRequest('r2', null, null)));
    expect(job).to.deep.equal({ jobs: [{ requestId: 'r1', externalId: 'job-9', transfertool: 'fake' }] });
    expect(
      await cancellerRole.process(
        job as Parameters<typeof cancellerRole.process>[0],
        { jobId: 'e1', startedAt: new Date() },
        context,
      ),
    ).to.deep.equal({
      done: 1,
      skipped: [],
    });
    expect(cancelled).to.deep.equal(['job-9']);
  });
});
