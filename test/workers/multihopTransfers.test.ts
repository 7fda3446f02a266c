import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { didKey } from '../../domain/did/did.ts';
import { INTERMEDIATE_HOP_RULE_ID } from '../../domain/request/transferHops.ts';
import { replicasCollection, type ReplicaDocument } from '../../projections/replica/replicaDocuments.ts';
import { newScope } from '../support/dids.ts';
import { eventually } from '../support/eventually.ts';
import { FakeFts3Server } from '../infra/fakeFts3Server.ts';
import { linkRses, pathOnRse, placeFile, posixRse } from '../support/posixRses.ts';
import { ruleJsonOverHttp, ruleReaches, ruleOverHttp } from '../support/rules.ts';
import { ruleAcrossProtocolGap } from '../support/protocolGap.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Multihop transfers as a user meets them: two RSEs with no direct path (no link, or no protocol
 * in common), an RSE between them marked `available_for_multihop`, and a rule whose copies go
 * through it, with the posix tool (real files), the mock tool and the FTS3 tool against an FTS
 * look-alike. The request listing shows the path; the rule is OK only when the last copy lands;
 * a failed hop fails its path and the request is retried, never the hop (behaviour rule 22).
 */

type RequestJson = Readonly<Record<string, unknown>>;

/**
 * The archived request of a copy, once the request history shows it: the tests wait for the rule
 * (the rules group's read model), and requests are the transfers group's, which may show a moment later.
 */
const archived = async (server: TestServer, scope: string, name: string, rse: string): Promise<RequestJson> => {
  const path = `/requests/history/${scope}/${name}/${rse}`;
  await eventually(async () => (await server.root('GET', path)).status !== 404, 10_000, `${path} projected`);
  return expectStatus(await server.root('GET', path), 200).json<RequestJson>();
};

const historyBetween = async (server: TestServer, source: string, dest: string, states: string) =>
  expectStatus(
    await server.root(
      'GET',
      `/requests/history/list?src_rse=${source}&dst_rse=${dest}&request_states=${states}&limit=1000`,
    ),
    200,
  ).lines<RequestJson>();

const replicaDocument = async (server: TestServer, scope: string, name: string, rseId: string) =>
  server.runtime.services.readModels
    .collection<ReplicaDocument>(replicasCollection)
    .findOne({ didKey: didKey(scope, name), rse_id: rseId });

describe('Roles: multihop transfers (Rucio’s transfer paths)', function () {
  this.timeout(90_000);
  let server: TestServer;
  let dirs: { path: string; dispose(): void };
  before(async () => {
    dirs = makeTempDir('multihop-');
    server = await startTestServer({ roles: { workers: true } });
    expectStatus(await server.root('POST', '/config', { body: { reaper: { interval: 1 } } }), 201);
  });
  after(async () => {
    await server.stop();
    dirs.dispose();
  });

  it('copies a real file through an intermediate RSE when no link joins source and destination (posix), and the reaper removes the intermediate copy', async () => {
    const scope = await newScope(server);
    const source = await posixRse(server, dirs.path, { prefix: 'SRC' });
    // An obsolete tombstone: the reaper may take the intermediate copy as soon as nothing needs it.
    const hop = await posixRse(server, dirs.path, {
      prefix: 'HOP',
      attributes: { available_for_multihop: 'true', multihop_tombstone_delay: '-1' },
    });
    const dest = await posixRse(server, dirs.path, { prefix: 'DST' });
    await linkRses(server, source.rse, hop.rse);
    await linkRses(server, hop.rse, dest.rse);
    await placeFile(server, source.rse, scope, 'hello.txt', 'hello, multihop\n');
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'hello.txt' }],
      copies: 1,
      rse_expression: dest.rse,
    });
    await ruleReaches(server, ruleId, 'OK', 30_000);
    expect(readFileSync(await pathOnRse(server, dest.rse, scope, 'hello.txt'), 'utf8')).to.equal('hello, multihop\n');

    const own = await archived(server, scope, 'hello.txt', dest.rse);
    const first = await archived(server, scope, 'hello.txt', hop.rse);
    const path = [source.rse, hop.rse, dest.rse];
    expect(first).to.include({
      state: 'DONE',
      rule_id: INTERMEDIATE_HOP_RULE_ID,
      retry_count: 0,
      source_rse: source.rse,
      transfertool: 'posix',
      initial_request_id: own.id,
      next_hop_request_id: own.id,
      previous_hop_request_id: null,
    });
    expect(first.transfer_path).to.deep.equal(path);
    expect(JSON.parse(first.attributes as string)).to.include({
      is_intermediate_hop: true,
      source_replica_expression: source.rse,
    });
    expect(own).to.include({
      state: 'DONE',
      rule_id: ruleId,
      source_rse: hop.rse,
      initial_request_id: own.id,
      previous_hop_request_id: first.id,
    });
    expect(own.transfer_path).to.deep.equal(path);
    // The copies in order: the request's own copy was submitted once the first had landed.
    expect(Date.parse(String(first.transferred_at))).to.be.at.most(Date.parse(String(own.submitted_at)));

    // The intermediate copy, made with the multihop tombstone, goes once the path is done.
    await eventually(
      async () => (await replicaDocument(server, scope, 'hello.txt', hop.id)) === null,
      30_000,
      'the reaper removes the intermediate replica',
    );
    expect(existsSync(await pathOnRse(server, hop.rse, scope, 'hello.txt'))).to.equal(false);
    expect(existsSync(await pathOnRse(server, dest.rse, scope, 'hello.txt'))).to.equal(true);
  });

  it('crosses a protocol gap through an RSE that speaks both (mock)', async () => {
    const { scope, source, hop, dest, ruleId } = await ruleAcrossProtocolGap(server, { directLink: true });
    await ruleReaches(server, ruleId, 'OK', 30_000);
    const own = await archived(server, scope, 'f1', dest.rse);
    expect(own).to.include({ state: 'DONE', transfertool: 'mock', source_rse: hop.rse });
    expect(own.dest_url).to.match(/^davs:\/\/dst\.example\.org/);
    expect(own.transfer_path).to.deep.equal([source.rse, hop.rse, dest.rse]);
    const [first] = await historyBetween(server, source.rse, hop.rse, 'D');
    expect(first).to.include({ state: 'DONE', next_hop_request_id: own.id });
    expect(first!.dest_url).to.match(/^root:\/\/hop\.example\.org/);
  });

  it('fails the path when a hop fails, retries the request as Rucio does (never the hop), and makes the rule STUCK in the end', async () => {
    const { scope, source, hop, dest, ruleId } = await ruleAcrossProtocolGap(server, {
      hop: { mock_outcome: 'failed' },
    });
    await ruleReaches(server, ruleId, 'STUCK', 60_000);
    expect((await ruleJsonOverHttp(server, ruleId)).error).to.equal('TRANSFER_FAILED:Unused hop in multi-hop');
    // Four attempts of the request itself, each failed with its path; each path's hop tried once.
    const analysis = expectStatus(await server.root('GET', `/rules/${ruleId}/analysis`), 200).json<{
      transfers: Record<string, unknown>[];
    }>();
    expect(analysis.transfers[0]).to.include({ name: 'f1', attempts: 4 });
    // The last hop is archived in a step of its own, maybe just after the rule turned STUCK.
    let hops: RequestJson[] = [];
    await eventually(
      async () => (hops = await historyBetween(server, source.rse, hop.rse, 'F')).length === 4,
      20_000,
      'four hops archived',
    );
    expect(hops.map((request) => [request.retry_count, request.previous_attempt_id])).to.deep.equal(
      hops.map(() => [0, null]),
    );
    const last = await archived(server, scope, 'f1', dest.rse);
    expect(last).to.include({ state: 'FAILED', retry_count: 3, err_msg: 'TRANSFER_FAILED:Unused hop in multi-hop' });
    // The intermediate copy that never arrived is given up, and left to the reaper.
    const intermediate = await replicaDocument(server, scope, 'f1', hop.id);
    expect(intermediate).to.include({ state: 'UNAVAILABLE', lock_cnt: 0 });
    expect(intermediate!.tombstone).to.be.a('string');
  });

  it('runs the path as one FTS multihop job (fts3 against an FTS look-alike)', async () => {
    const fts = await FakeFts3Server.start();
    try {
      const tool = { fts: fts.url, transfertool: 'fts3' };
      const { scope, hop, dest, ruleId } = await ruleAcrossProtocolGap(server, {
        source: { fts: fts.url },
        hop: tool,
        dest: tool,
      });
      await ruleReaches(server, ruleId, 'OK', 30_000);
      const own = await archived(server, scope, 'f1', dest.rse);
      const first = await archived(server, scope, 'f1', hop.rse);
      expect([first.state, own.state]).to.deep.equal(['DONE', 'DONE']);
      expect(first.external_id).to.equal(own.external_id);
      const [submission] = fts.requestsTo('POST', '/jobs');
      const body = submission!.body as {
        files: { metadata: { request_id: string } }[];
        params: Record<string, unknown>;
      };
      expect(body.params).to.include({ multihop: true });
      expect(body.files.map((file) => file.metadata.request_id)).to.deep.equal([first.id, own.id]);
      expect(fts.requestsTo('POST', '/jobs')).to.have.length(1);
    } finally {
      await fts.stop();
    }
  });
});
