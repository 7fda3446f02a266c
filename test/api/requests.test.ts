import { markRequestsSubmitting } from '../../commands/request/submissionStep.ts';
import { expect } from 'chai';
import { prepareRequests, recordSubmissions, recordTransferReports } from '../../commands/request/conveyorSteps.ts';
import { finishRequests } from '../../commands/request/requestFinishing.ts';
import { activeRequestStreams } from '../support/requests.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { uniqueName } from '../support/events.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { newScope, path } from '../support/dids.ts';
import { fileItem, rseWithProtocols } from './replicaSupport.ts';
import { ruleOverHttp } from '../support/rules.ts';

type Json = Readonly<Record<string, unknown>>;

/**
 * The /requests routes over HTTP (rest-api-reference §1.20). Requests are queued by rules; the
 * conveyor's steps are run here by hand, through its commands, so each state is there when asked.
 */
describe('API: transfer requests (rules 22 and 24)', function () {
  this.timeout(30_000);
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const asRoot = (): CommandMetadata => ({ now: new Date(), account: 'root', requestId: uniqueName('test-') });
  const settle = async (outcome: { position: bigint | undefined }) => {
    if (outcome.position !== undefined) await server.runtime.services.progress.waitFor(outcome.position, 5000);
  };

  /** A file on A, a rule to B: one QUEUED request; `site` attributes when asked. */
  const queued = async (sites: { a?: string; b?: string } = {}) => {
    const scope = await newScope(server);
    const a = await rseWithProtocols(server);
    const b = await rseWithProtocols(server);
    for (const [rse, site] of [
      [a.rse, sites.a],
      [b.rse, sites.b],
    ] as const) {
      if (site) expectStatus(await server.root('POST', `/rses/${rse}/attr/site`, { body: { value: site } }), 201);
    }
    const dataset = uniqueName('ds');
    expectStatus(await server.root('POST', path(scope, dataset), { body: { type: 'DATASET' } }), 201);
    expectStatus(await server.root('POST', '/replicas', { body: { rse: a.rse, files: [fileItem(scope, 'f1')] } }), 201);
    expectStatus(
      await server.root('POST', path(scope, dataset, '/dids'), { body: { dids: [{ scope, name: 'f1' }] } }),
      201,
    );
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse });
    const request = expectStatus(await server.root('GET', `/requests/${scope}/f1/${b.rse}`), 200).json<Json>();
    return { scope, a, b, ruleId, requestId: request.id as string };
  };

  /** Takes the request through submission to a DONE report, then archives it. */
  const transferred = async (world: Awaited<ReturnType<typeof queued>>, archive: boolean) => {
    const { commands, readModels } = server.runtime.services;
    const streams = await activeRequestStreams(readModels, [world.requestId]);
    const source = { rseId: world.a.id, rse: world.a.rse, ranking: 0, pfn: 'root://a/f1' };
    await settle(
      await markRequestsSubmitting(
        commands,
        [
          {
            type: 'SubmitTransfer',
            data: { requestId: world.requestId, sources: [source], destUrl: 'root://b/f1', transfertool: 'mock' },
          },
        ],
        streams,
        asRoot(),
      ),
    );
    await settle(
      await recordSubmissions(
        commands,
        [{ requestId: world.requestId, externalId: 'job-1', externalHost: 'mock' }],
        streams,
        asRoot(),
      ),
    );
    await settle(
      await recordTransferReports(
        commands,
        [
          {
            type: 'RecordTransferReport',
            data: {
              requestId: world.requestId,
              externalId: 'job-1',
              outcome: 'DONE',
              reason: null,
              source: null,
              startedAt: null,
              finishedAt: null,
            },
          },
        ],
        streams,
        asRoot(),
      ),
    );
    if (archive)
      await settle(
        await finishRequests(
          commands,
          [{ type: 'MarkReplicaAvailable', data: { requestId: world.requestId } }],
          streams,
          asRoot(),
        ),
      );
  };

  describe('GET /requests/{scope}/{name}/{rse}', () => {
    it('answers the active request with Rucio’s columns and the RSE names', async () => {
      const { scope, a, b, ruleId, requestId } = await queued();
      const request = expectStatus(await server.root('GET', `/requests/${scope}/f1/${b.rse}`), 200).json<Json>();
      expect(request).to.include({
        id: requestId,
        state: 'QUEUED',
        rule_id: ruleId,
        dest_rse: b.rse,
        dest_rse_id: b.id,
        source_rse_id: null,
        retry_count: null,
        previous_attempt_id: null,
      });
      expect(JSON.parse(request.attributes as string)).to.include({
        activity: 'User Subscriptions',
        allow_tape_source: true,
      });
      void a;
    });
    it('is open to every account', async () => {
      const { scope, b } = await queued();
      const user = await server.createUser();
      expectStatus(await server.call('GET', `/requests/${scope}/f1/${b.rse}`, { token: user.token }), 200);
    });
    it('answers 404 RequestNotFound without one, 404 RSENotFound for an unknown RSE', async () => {
      const { scope, a } = await queued();
      expectError(
        await server.root('GET', `/requests/${scope}/f1/${a.rse}`),
        404,
        'RequestNotFound',
        new RegExp(`^No request found for DID ${scope}:f1 at RSE ${a.rse}$`),
      );
      expectError(await server.root('GET', `/requests/${scope}/f1/NOWHERE`), 404, 'RSENotFound');
    });
  });

  describe('GET /requests/history/{scope}/{name}/{rse}', () => {
    it('answers the archived request once the transfer is finished (rule 22)', async () => {
      const world = await queued();
      expectError(
        await server.root('GET', `/requests/history/${world.scope}/f1/${world.b.rse}`),
        404,
        'RequestNotFound',
      );
      await transferred(world, true);
      expect(
        expectStatus(await server.root('GET', `/requests/history/${world.scope}/f1/${world.b.rse}`), 200).json<Json>(),
      ).to.include({
        id: world.requestId,
        state: 'DONE',
        external_id: 'job-1',
        source_rse: world.a.rse,
      });
      expectError(await server.root('GET', `/requests/${world.scope}/f1/${world.b.rse}`), 404, 'RequestNotFound');
    });
    it('is for admins', async () => {
      const world = await queued();
      const user = await server.createUser();
      expectError(
        await server.call('GET', `/requests/history/${world.scope}/f1/${world.b.rse}`, { token: user.token }),
        401,
        'AccessDenied',
        /cannot retrieve the request DID/,
      );
    });
  });

  describe('GET /requests/list and /requests/history/list', () => {
    it('lists requests by state between two RSEs, by letter, once their source is known', async () => {
      const world = await queued();
      const list = async (states: string) =>
        expectStatus(
          await server.root(
            'GET',
            `/requests/list?src_rse=${world.a.rse}&dst_rse=${world.b.rse}&request_states=${states}`,
          ),
          200,
        ).lines<Json>();
      expect(await list('Q')).to.deep.equal([]);
      await transferred(world, false);
      expect((await list('D')).map((request) => [request.id, request.state])).to.deep.equal([
        [world.requestId, 'DONE'],
      ]);
      expect(await list('Q,S')).to.deep.equal([]);
    });
    it('lists between sites, the RSEs of each `site` attribute', async () => {
      const [siteA, siteB] = [uniqueName('SITE'), uniqueName('SITE')];
      const world = await queued({ a: siteA, b: siteB });
      await transferred(world, false);
      const lines = expectStatus(
        await server.root('GET', `/requests/list?src_site=${siteA}&dst_site=${siteB}&request_states=D`),
        200,
      ).lines<Json>();
      expect(lines.map((request) => request.id)).to.deep.equal([world.requestId]);
      expectError(
        await server.root('GET', `/requests/list?src_site=NOWHERE&dst_site=${siteB}&request_states=D`),
        404,
        'NotFound',
        /^Could not resolve site name NOWHERE to RSE$/,
      );
    });
    it('pages the history with offset and limit', async () => {
      const world = await queued();
      await transferred(world, true);
      const page = async (query: string) =>
        expectStatus(
          await server.root(
            'GET',
            `/requests/history/list?src_rse=${world.a.rse}&dst_rse=${world.b.rse}&request_states=D${query}`,
          ),
          200,
        ).lines<Json>();
      expect((await page('')).map((request) => request.id)).to.deep.equal([world.requestId]);
      expect(await page('&offset=1')).to.deep.equal([]);
      expect((await page('&limit=1&offset=x')).map((request) => request.id)).to.deep.equal([world.requestId]);
    });
    it('answers Rucio’s errors for missing and invalid parameters', async () => {
      const world = await queued();
      expectError(
        await server.root('GET', `/requests/list?src_rse=${world.a.rse}&dst_rse=${world.b.rse}`),
        400,
        'MissingParameter',
        /^Request state is missing$/,
      );
      expectError(
        await server.root('GET', `/requests/list?src_rse=${world.a.rse}&request_states=Q`),
        400,
        'MissingParameter',
        /^Destination RSE is missing$/,
      );
      expectError(
        await server.root('GET', `/requests/history/list?dst_site=X&request_states=Q`),
        400,
        'MissingParameter',
        /^Source site is missing$/,
      );
      expectError(
        await server.root('GET', `/requests/list?src_rse=${world.a.rse}&dst_rse=${world.b.rse}&request_states=Q,X`),
        400,
        'Invalid',
        /^Request state value is invalid$/,
      );
      expectError(
        await server.root('GET', `/requests/list?src_rse=${world.a.rse}&dst_rse=NOWHERE&request_states=Q`),
        404,
        'RSENotFound',
      );
    });
    it('is for admins', async () => {
      const world = await queued();
      const user = await server.createUser();
      expectError(
        await server.call('GET', `/requests/list?src_rse=${world.a.rse}&dst_rse=${world.b.rse}&request_states=Q`, {
          token: user.token,
        }),
        401,
        'AccessDenied',
        new RegExp(`cannot list requests from RSEs \\['${world.a.rse}'\\] to RSEs \\['${world.b.rse}'\\]`),
      );
    });
  });

  describe('GET /requests/metrics', () => {
    it('answers per link the files and bytes done in the last hour and six hours, and the distance', async () => {
      const world = await queued();
      expectStatus(
        await server.root('POST', `/rses/${world.a.rse}/distances/${world.b.rse}`, { body: { distance: 3 } }),
        201,
      );
      await transferred(world, true);
      const lines = expectStatus(
        await server.root('GET', `/requests/metrics?dst_rse=${world.b.rse}`),
        200,
      ).lines<Json>();
      const link = lines.find((line) => line.src_rse === world.a.rse)!;
      expect(link).to.deep.equal({
        files: { done: { 'User Subscriptions': { '1h': 1, '6h': 1 } }, 'done-total-1h': 1, 'done-total-6h': 1 },
        bytes: { done: { 'User Subscriptions': { '1h': 100, '6h': 100 } }, 'done-total-1h': 100, 'done-total-6h': 100 },
        distance: 3,
        src_rse: world.a.rse,
        dst_rse: world.b.rse,
      });
      const panda = expectStatus(
        await server.root('GET', `/requests/metrics?dst_rse=${world.b.rse}&format=panda`),
        200,
      );
      expect(panda.headers['content-type']).to.equal('application/json');
      expect(panda.json<Json>()[`${world.a.rse}:${world.b.rse}`]).to.deep.equal(link);
    });
    it('counts QUEUED requests whose source is chosen, and groups links by an RSE attribute', async () => {
      expectStatus(await server.root('POST', '/config', { body: { conveyor: { use_preparer: true } } }), 201);
      const world = await queued({ a: 'GROUP_A', b: 'GROUP_B' });
      expectStatus(await server.root('DELETE', '/config/conveyor/use_preparer'), 200);
      const prepared = {
        requestId: world.requestId,
        sourceRseId: world.a.id,
        sourceRse: world.a.rse,
        transfertool: 'mock',
        waiting: false,
      };
      await settle(
        await prepareRequests(
          server.runtime.services.commands,
          [{ type: 'PrepareRequest', data: prepared }],
          await activeRequestStreams(server.runtime.services.readModels, [world.requestId]),
          asRoot(),
        ),
      );
      const metrics = expectStatus(
        await server.root('GET', `/requests/metrics?dst_rse=${world.b.rse}&group_by_rse_attribute=site&format=panda`),
        200,
      ).json<Json>();
      expect(metrics).to.deep.equal({
        'GROUP_A:GROUP_B': {
          files: { queued: { 'User Subscriptions': 1 }, 'queued-total': 1 },
          bytes: { queued: { 'User Subscriptions': 100 }, 'queued-total': 100 },
          src_rse: world.a.rse,
          dst_rse: world.b.rse,
        },
      });
      const user = await server.createUser();
      expectError(
        await server.call('GET', '/requests/metrics', { token: user.token }),
        401,
        'AccessDenied',
        /cannot get request statistics/,
      );
    });
  });

  describe('/requests/transfer_limits', () => {
    it('sets a limit with Rucio’s defaults (201, empty body), lists it, updates it and deletes it (rule 24)', async () => {
      const b = await rseWithProtocols(server);
      const put = expectStatus(
        await server.root('PUT', '/requests/transfer_limits', { body: { rse_expression: b.rse, max_transfers: null } }),
        201,
      );
      expect(put.text).to.equal('');
      const listed = async () =>
        expectStatus(await server.root('GET', '/requests/transfer_limits'), 200)
          .lines<Json>()
          .filter((limit) => limit.rse_expression === b.rse);
      expect(await listed()).to.have.length(1);
      expect((await listed())[0]).to.include({
        activity: 'all_activities',
        direction: 'DESTINATION',
        max_transfers: 0,
        volume: 0,
        deadline: 1,
        strategy: 'fifo',
        transfers: null,
        waitings: null,
      });
      // The Python client sends every key, null where not given, and the direction's letter.
      expectStatus(
        await server.root('PUT', '/requests/transfer_limits', {
          body: {
            rse_expression: b.rse,
            activity: null,
            direction: 'D',
            max_transfers: 5,
            volume: null,
            deadline: null,
            strategy: 'grouped_fifo',
            transfers: null,
            waitings: null,
          },
        }),
        201,
      );
      expect((await listed())[0]).to.include({ max_transfers: 5, strategy: 'grouped_fifo' });
      expectStatus(
        await server.root('PUT', '/requests/transfer_limits', {
          body: { rse_expression: b.rse, activity: 'Express', direction: 'S', max_transfers: 2 },
        }),
        201,
      );
      expect((await listed()).map((limit) => [limit.activity, limit.direction]).sort()).to.deep.equal([
        ['Express', 'SOURCE'],
        ['all_activities', 'DESTINATION'],
      ]);
      const deleted = expectStatus(
        await server.root('DELETE', '/requests/transfer_limits', { body: { rse_expression: b.rse } }),
        200,
      );
      expect(deleted.text).to.equal('');
      expect((await listed()).map((limit) => limit.activity)).to.deep.equal(['Express']);
    });
    it('refuses bodies without the required keys or with bad values', async () => {
      const b = await rseWithProtocols(server);
      expectError(
        await server.root('PUT', '/requests/transfer_limits', { body: { rse_expression: b.rse } }),
        400,
        'KeyError',
        /'max_transfers' not defined/,
      );
      expectError(
        await server.root('PUT', '/requests/transfer_limits', { body: { max_transfers: 1 } }),
        400,
        'KeyError',
        /'rse_expression' not defined/,
      );
      expectError(
        await server.root('PUT', '/requests/transfer_limits', { body: { rse_expression: b.rse, max_transfers: -1 } }),
        400,
        'InvalidObject',
      );
      expectError(
        await server.root('PUT', '/requests/transfer_limits', {
          body: { rse_expression: b.rse, max_transfers: 1, strategy: 'lifo' },
        }),
        400,
        'InvalidObject',
      );
      expectError(
        await server.root('PUT', '/requests/transfer_limits', {
          body: { rse_expression: 'NO_SUCH_RSE', max_transfers: 1 },
        }),
        400,
        'InvalidRSEExpression',
      );
    });
    it('is for admins', async () => {
      const user = await server.createUser();
      expectError(
        await server.call('GET', '/requests/transfer_limits', { token: user.token }),
        401,
        'AccessDenied',
        /cannot list transfer limits/,
      );
      expectError(
        await server.call('PUT', '/requests/transfer_limits', {
          token: user.token,
          body: { rse_expression: 'X', max_transfers: 1 },
        }),
        401,
        'AccessDenied',
        /cannot set transfer limits/,
      );
      expectError(
        await server.call('DELETE', '/requests/transfer_limits', { token: user.token, body: { rse_expression: 'X' } }),
        401,
        'AccessDenied',
        /cannot delete transfer limits/,
      );
    });
  });
});
