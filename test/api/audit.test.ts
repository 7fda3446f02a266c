import { expect } from 'chai';
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { DidMetadataSet } from '../../domain/did/did.ts';
import { upcaster, upcasterRegistry } from '../../domain/shared/upcasting.ts';
import { auditIndexProjection } from '../../projections/audit/auditIndex.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { ManualClock } from '../support/clock.ts';
import { newScope, path } from '../support/dids.ts';
import {
  expectError,
  expectStatus,
  ROOT_PASSWORD,
  ROOT_USERNAME,
  startTestServer,
  type TestServer,
} from '../support/server.ts';
import { addReplicas, fileItem, rseWithProtocols } from './replicaSupport.ts';
import { dmsCommand } from '../../bench/lib/dmsCommand.ts';

type AuditLine = {
  position: number;
  stream: string;
  revision: number;
  type: string;
  at: string;
  account: string;
  request_id: string;
  causation_id: string | null;
  schema_version: number;
  hash: string | null;
  identity?: Readonly<{ kind: string; value: string }>;
  correlation_id?: string;
  /** What these tests read of the data of the events they look at. */
  data: Readonly<{
    children?: { name: string }[];
    changes?: { expiresAt?: string };
    rse?: string;
    key?: string;
    subscription?: { id: string };
    limit?: { rseExpression: string };
    state?: string;
    lock?: { ruleId: string; lockState: string } | null;
    replicas?: { rse: string }[];
  }>;
};

/** What these tests read of a DID's state (`/audit/dids/.../state`). */
type DidStateJson = Readonly<{
  metadata: Record<string, unknown>;
  content: { length: number; bytes: number; children: { name: string }[] };
  rules: { expires_at: string | null }[];
}>;

/** What these tests read of a projection's status (`/admin/projections`). */
type ProjectionJson = Readonly<{
  name: string;
  generation: number;
  head: number;
  checkpoint: number;
  lag: number;
  rebuild: unknown;
  status: string;
}>;

/** `dms <args>` against the server's data directory, as an operator runs it beside the service. */
const dms = (server: TestServer, ...args: string[]) =>
  spawnSync(dmsCommand().command, [...dmsCommand().args, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      DMS_DATA_DIR: server.dataDir,
      DMS_ROOT_USERNAME: ROOT_USERNAME,
      DMS_ROOT_PASSWORD: ROOT_PASSWORD,
      DMS_LOG_LEVEL: 'silent',
    },
  });

describe('API: audit', () => {
  let server: TestServer;
  // Running, so that events follow each other in time; a test moves it between two changes.
  const clock = new ManualClock({ running: true });
  before(async () => (server = await startTestServer({ clock })));
  after(async () => server.stop());

  /** A user owning a new scope, with quota on a new RSE B; files with replicas on RSE A. */
  const world = async () => {
    const owner = await server.createUser();
    const scope = await newScope(server, owner.account);
    const a = await rseWithProtocols(server);
    const b = await rseWithProtocols(server);
    expectStatus(
      await server.root('POST', `/accountlimits/local/${owner.account}/${b.rse}`, { body: { bytes: 1_000_000 } }),
      201,
    );
    await addReplicas(server, a.rse, [fileItem(scope, 'f1'), fileItem(scope, 'f2')]);
    return { owner, scope, a, b };
  };

  const history = async (url: string, token = server.rootToken) =>
    expectStatus(await server.call('GET', url, { token }), 200).lines<AuditLine>();

  it("tells a dataset's whole story with who and when, shows it as it was between two changes, and its hash chains hold until a stored event is edited", async () => {
    const { owner, scope, b } = await world();
    const dataset = uniqueName('ds');
    const asOwner = (method: string, url: string, body?: object) =>
      server.call(method, url, { token: owner.token, ...(body ? { body } : {}) });
    expectStatus(await asOwner('POST', path(scope, dataset), { type: 'DATASET' }), 201);
    expectStatus(
      await asOwner('POST', path(scope, dataset, '/dids'), {
        dids: [
          { scope, name: 'f1' },
          { scope, name: 'f2' },
        ],
      }),
      201,
    );
    clock.advance(1000);
    const betweenAttachAndMetadata = clock.date().toISOString();
    clock.advance(1000);
    expectStatus(await asOwner('POST', path(scope, dataset, '/meta/campaign'), { value: 'mc23' }), 201);
    const ruleResponse = expectStatus(
      await server.call('POST', '/rules/', {
        token: owner.token,
        body: { dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, account: owner.account },
      }),
      201,
    );
    const [ruleId] = JSON.parse(ruleResponse.text) as string[];
    expectStatus(await server.root('DELETE', `/rules/${ruleId}`, { body: {} }), 200);

    const lines = await history(`/audit/dids/${scope}/${dataset}/events`);
    const story = lines.map((line) => [line.type, line.account]);
    expect(story.slice(0, 3)).to.deep.equal([
      ['DidCreated', owner.account],
      ['DidsAttached', owner.account],
      ['DidMetadataSet', owner.account],
    ]);
    // The rule, its creation step (the DID's record of it first, then the rule and its locks), and
    // its deletion, which the API records as an expiry for the judge's cleaner (as Rucio does).
    expect(story.slice(3)).to.deep.equal([
      ['DidRuleAttached', owner.account],
      ['RuleAdded', owner.account],
      ['RuleLocksCreated', owner.account],
      ['RuleUpdated', 'root'],
    ]);
    expect(lines.map((line) => line.position)).to.deep.equal(
      [...lines.map((line) => line.position)].sort((x, y) => x - y),
    );
    const attach = lines[1]!;
    expect(attach).to.include({
      stream: `did-${scope}:${dataset}`,
      revision: 1,
      schema_version: 1,
      causation_id: null,
    });
    expect(attach.at).to.match(/^\d{4}-\d{2}-\d{2}T/);
    expect(attach.request_id).to.be.a('string');
    expect(attach.hash).to.match(/^[0-9a-f]{64}$/);
    expect(attach.data.children!.map((child) => child.name)).to.deep.equal(['f1', 'f2']);
    const deletion = lines[lines.length - 1]!;
    expect(deletion).to.include({ stream: `rule-${ruleId}`, revision: 2 });
    expect(deletion.data.changes!.expiresAt).to.be.a('string');

    const then = expectStatus(
      await server.root('GET', `/audit/dids/${scope}/${dataset}/state?as_of=${betweenAttachAndMetadata}`),
      200,
    ).json<DidStateJson>();
    expect(then).to.include({
      scope,
      name: dataset,
      status: 'LIVE',
      did_type: 'DATASET',
      account: owner.account,
      open: true,
      as_of: betweenAttachAndMetadata,
      position: attach.position,
    });
    expect(then.metadata).to.not.have.property('campaign');
    expect(then.content).to.deep.include({ length: 2, bytes: 200 });
    expect(then.content.children.map((child) => child.name)).to.deep.equal(['f1', 'f2']);
    expect(then.rules).to.deep.equal([]);

    const withRule = lines.find((line) => line.type === 'DidRuleAttached')!;
    const ruled = expectStatus(
      await server.root('GET', `/audit/dids/${scope}/${dataset}/state?as_of=${withRule.position}`),
      200,
    ).json<DidStateJson>();
    expect(ruled.metadata).to.include({ campaign: 'mc23' });
    expect(ruled.rules).to.have.length(1);
    expect(ruled.rules[0]).to.include({
      id: ruleId,
      status: 'LIVE',
      account: owner.account,
      rse_expression: b.rse,
      copies: 1,
    });
    const now = expectStatus(
      await server.root('GET', `/audit/dids/${scope}/${dataset}/state`),
      200,
    ).json<DidStateJson>();
    expect(now.rules[0]!.expires_at).to.equal(deletion.data.changes!.expiresAt);

    const verified = dms(server, 'audit', 'verify');
    expect(verified.status, verified.stderr + verified.stdout).to.equal(0);
    expect(verified.stdout).to.match(/every hash chain holds/);

    const metadataEvent = lines.find((line) => line.type === 'DidMetadataSet')!;
    const raw = new Database(join(server.dataDir, 'events.sqlite'));
    raw.pragma('busy_timeout = 5000');
    raw
      .prepare("UPDATE events SET data = json_set(data, '$.columns.campaign', 'forged') WHERE position = ?")
      .run(metadataEvent.position);
    raw.close();
    const broken = dms(server, 'audit', 'verify');
    expect(broken.status, broken.stderr + broken.stdout).to.equal(1);
    expect(broken.stdout).to.include(
      `BROKEN: stream did-${scope}:${dataset}, revision ${metadataEvent.revision}, position ${metadataEvent.position}`,
    );
  });

  /** A dataset of the owner's scope with f1 and f2 attached, its metadata set, and a rule of the owner on RSE B. */
  const aDatasetWithARule = async () => {
    const world_ = await world();
    const { owner, scope, b } = world_;
    const dataset = uniqueName('ds');
    expectStatus(
      await server.call('POST', path(scope, dataset), { token: owner.token, body: { type: 'DATASET' } }),
      201,
    );
    expectStatus(
      await server.call('POST', path(scope, dataset, '/dids'), {
        token: owner.token,
        body: {
          dids: [
            { scope, name: 'f1' },
            { scope, name: 'f2' },
          ],
        },
      }),
      201,
    );
    expectStatus(
      await server.call('POST', path(scope, dataset, '/meta/campaign'), {
        token: owner.token,
        body: { value: 'mc23' },
      }),
      201,
    );
    const response = expectStatus(
      await server.call('POST', '/rules/', {
        token: owner.token,
        body: { dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, account: owner.account },
      }),
      201,
    );
    const [ruleId] = JSON.parse(response.text) as string[];
    return { ...world_, dataset, ruleId: ruleId! };
  };

  describe('who may read', () => {
    it("lets a scope's owner read the history and past states of its DIDs, and nothing else", async () => {
      const { owner, scope, dataset, ruleId, b } = await aDatasetWithARule();
      expect((await history(`/audit/dids/${scope}/${dataset}/events`, owner.token)).length).to.be.greaterThan(3);
      expectStatus(await server.call('GET', `/audit/dids/${scope}/${dataset}/state`, { token: owner.token }), 200);
      expectError(
        await server.call('GET', `/audit/rules/${ruleId}/events`, { token: owner.token }),
        401,
        'AccessDenied',
      );
      expectError(await server.call('GET', `/audit/rses/${b.rse}/events`, { token: owner.token }), 401, 'AccessDenied');
      expectError(
        await server.call('GET', `/audit/accounts/${owner.account}/events`, { token: owner.token }),
        401,
        'AccessDenied',
      );
      expectError(await server.call('GET', '/audit/events', { token: owner.token }), 401, 'AccessDenied');
    });

    it('refuses the history of a DID to an account that neither owns its scope nor is an admin', async () => {
      const { scope, dataset } = await aDatasetWithARule();
      const stranger = await server.createUser();
      expectError(
        await server.call('GET', `/audit/dids/${scope}/${dataset}/events`, { token: stranger.token }),
        401,
        'AccessDenied',
        /can not read the history/,
      );
      expectError(
        await server.call('GET', `/audit/dids/${scope}/${dataset}/state`, { token: stranger.token }),
        401,
        'AccessDenied',
      );
    });

    it('lets an admin read every history', async () => {
      const { scope, dataset, ruleId } = await aDatasetWithARule();
      const admin = await server.createUser({ admin: true });
      expect(await history(`/audit/dids/${scope}/${dataset}/events`, admin.token)).to.not.deep.equal([]);
      expect(await history(`/audit/rules/${ruleId}/events`, admin.token)).to.not.deep.equal([]);
    });
  });

  describe('histories', () => {
    it('filters a DID history by type (repeated or comma-separated) and by positions since and until', async () => {
      const { scope, dataset } = await aDatasetWithARule();
      const all = await history(`/audit/dids/${scope}/${dataset}/events`);
      const types = (lines: AuditLine[]) => lines.map((line) => line.type);
      expect(
        types(await history(`/audit/dids/${scope}/${dataset}/events?type=DidCreated,DidMetadataSet`)),
      ).to.deep.equal(['DidCreated', 'DidMetadataSet']);
      expect(
        types(await history(`/audit/dids/${scope}/${dataset}/events?type=DidCreated&type=RuleAdded`)),
      ).to.deep.equal(['DidCreated', 'RuleAdded']);
      const between = await history(
        `/audit/dids/${scope}/${dataset}/events?since=${all[1]!.position}&until=${all[2]!.position}`,
      );
      expect(between.map((line) => line.position)).to.deep.equal([all[1]!.position, all[2]!.position]);
      const later = await history(`/audit/dids/${scope}/${dataset}/events?since=${encodeURIComponent(all[2]!.at)}`);
      expect(types(later)).to.include('DidMetadataSet').and.not.include('DidCreated');
      expectError(
        await server.root('GET', `/audit/dids/${scope}/${dataset}/events?since=yesterday`),
        400,
        'ValueError',
        /RFC 3339/,
      );
    });

    it("shows a file's attachment to its dataset, and its replicas, in the file's own history", async () => {
      const { scope, dataset, a } = await aDatasetWithARule();
      const lines = await history(`/audit/dids/${scope}/f1/events`);
      const types = lines.map((line) => line.type);
      // Registered with its replica in one event, then attached.
      expect(types.slice(0, 2)).to.deep.equal(['DidCreated', 'DidsAttached']);
      expect(lines[1]!.stream).to.equal(`did-${scope}:${dataset}`);
      expect(lines[0]!.data.replicas?.map((replica) => replica.rse)).to.deep.equal([a.rse]);
      // The RSE's history shows the file it received.
      const rse = await history(`/audit/rses/${a.rse}/events?type=DidCreated`);
      expect(rse.map((line) => line.stream)).to.include(`did-${scope}:f1`);
      // The rule's lock: the replica it needs created and locked in one event.
      const locked = lines.slice(2).filter((line) => line.type === 'ReplicaAdded');
      expect(locked.map((line) => [line.data.state, line.data.lock?.lockState])).to.deep.equal([
        ['COPYING', 'REPLICATING'],
      ]);
    });

    it("lists a rule's events with the locks it put on each file, and an RSE's events with the replicas it received", async () => {
      const { scope, ruleId, b } = await aDatasetWithARule();
      const rule = await history(`/audit/rules/${ruleId}/events`);
      expect(rule.map((line) => line.type)).to.include.members([
        'RuleAdded',
        'RuleLocksCreated',
        'DidRuleAttached',
        'ReplicaAdded',
      ]);
      // Each file's lock: its replica on B created and locked by the rule, one event per file.
      expect(
        rule
          .filter((line) => line.type === 'ReplicaAdded')
          .map((line) => [line.stream, line.data.lock?.ruleId])
          .sort(),
      ).to.deep.equal([
        [`did-${scope}:f1`, ruleId],
        [`did-${scope}:f2`, ruleId],
      ]);
      const rse = await history(`/audit/rses/${b.rse}/events`);
      expect(rse[0]!.type).to.equal('RseCreated');
      expect(rse.map((line) => line.type)).to.include.members(['RuleAdded', 'ReplicaAdded']);
    });

    it('lists what an account did, and pages the whole feed by position', async () => {
      const { owner } = await aDatasetWithARule();
      const done = await history(`/audit/accounts/${owner.account}/events`);
      expect(done.every((line) => line.account === owner.account)).to.equal(true);
      expect(done.map((line) => line.type)).to.include.members([
        'DidCreated',
        'DidsAttached',
        'DidMetadataSet',
        'RuleAdded',
      ]);
      const first = await history('/audit/events?limit=3');
      expect(first).to.have.length(3);
      const next = await history(`/audit/events?limit=3&after=${first[2]!.position}`);
      expect(next[0]!.position).to.be.greaterThan(first[2]!.position);
      const mine = await history(`/audit/events?account=${owner.account}&type=RuleAdded`);
      expect(mine.map((line) => [line.type, line.account])).to.deep.equal([['RuleAdded', owner.account]]);
      expectError(await server.root('GET', '/audit/events?limit=0'), 400, 'ValueError');
    });

    it('lists the events of some types from the index exactly as the whole feed holds them, in order', async () => {
      await aDatasetWithARule();
      const types = ['RuleAdded', 'DidsAttached'];
      const whole = (await history('/audit/events?limit=10000')).filter((line) => types.includes(line.type));
      // The whole feed is the event log itself; the index of types follows it through its projection.
      await eventually(
        async () => (await history(`/audit/events?type=${types.join(',')}&limit=10000`)).length >= whole.length,
        10_000,
        'the index up to date',
      );
      const typed = await history(`/audit/events?type=${types.join(',')}&limit=10000`);
      expect(typed.map((line) => line.position).slice(0, whole.length)).to.deep.equal(
        whole.map((line) => line.position),
      );
      expect(typed.every((line) => types.includes(line.type))).to.equal(true);
      const page = await history(`/audit/events?type=${types.join(',')}&limit=2&after=${typed[0]!.position}`);
      expect(page.map((line) => line.position)).to.deep.equal(typed.slice(1, 3).map((line) => line.position));
    });

    it('shows a new subscription in the feed and in its own history, with the name it claimed', async () => {
      const { b } = await world();
      const name = uniqueName('sub');
      const added = await server.root('POST', `/subscriptions/root/${name}`, {
        body: {
          options: {
            filter: { scope: ['mc16_.*'], did_type: ['DATASET'] },
            replication_rules: [{ copies: 1, rse_expression: b.rse }],
            comments: 'audited',
            lifetime: null,
            retroactive: false,
          },
        },
      });
      const id = expectStatus(added, 201).text;
      const isMine = (line: AuditLine) => line.type === 'SubscriptionAdded' && line.data.subscription?.id === id;
      const feed = await history('/audit/events?limit=10000');
      expect(feed.filter(isMine).map((line) => [line.account, line.stream])).to.deep.equal([
        ['root', `subscription-${id}`],
      ]);
      await eventually(
        async () => (await history('/audit/events?type=SubscriptionAdded&limit=10000')).some(isMine),
        10_000,
        'the feed of its type',
      );
      const own = await history(`/audit/subscriptions/${id}/events`);
      expect(own.map((line) => line.type)).to.deep.equal(['SubscriptionNameClaimed', 'SubscriptionAdded']);
      expect(own[0]!.stream).to.equal('subscriptionnames-root');
      expectError(
        await server.root('GET', `/audit/subscriptions/${'0'.repeat(32)}/events`),
        404,
        'SubscriptionNotFound',
      );
    });

    it("shows a lifetime exception's request in each DID's history, and transfer limits in the feed", async () => {
      const { scope, a } = await world();
      const dataset = uniqueName('ds');
      expectStatus(
        await server.root('POST', path(scope, dataset), { body: { type: 'DATASET', meta: { eol_at: '2020-01-01' } } }),
        201,
      );
      const cutoff = `${new Date().getUTCFullYear() + 1}-12-31`;
      expectStatus(await server.root('POST', '/config', { body: { lifetime_model: { cutoff_date: cutoff } } }), 201);
      expectStatus(
        await server.root('POST', '/lifetime_exceptions/', {
          body: { dids: [{ scope, name: dataset }], comments: 'c' },
        }),
        201,
      );
      const didHistory = await history(`/audit/dids/${scope}/${dataset}/events`);
      expect(didHistory.map((line) => line.type)).to.deep.equal(['DidCreated', 'DidMetadataSet', 'ExceptionRequested']);
      expect(didHistory[2]!.stream).to.match(/^lifetimeexception-/);

      expectStatus(
        await server.root('PUT', '/requests/transfer_limits', { body: { rse_expression: a.rse, max_transfers: 3 } }),
        201,
      );
      const limits = await history('/audit/events?type=TransferLimitSet&limit=10000');
      expect(limits.some((line) => line.data.limit?.rseExpression === a.rse)).to.equal(true);
    });

    it('answers 404 for a DID, rule, RSE or account that never existed', async () => {
      const scope = await newScope(server);
      expectError(await server.root('GET', `/audit/dids/${scope}/nothing/events`), 404, 'DataIdentifierNotFound');
      expectError(await server.root('GET', `/audit/dids/${scope}/nothing/state`), 404, 'DataIdentifierNotFound');
      expectError(await server.root('GET', `/audit/rules/${'0'.repeat(32)}/events`), 404, 'RuleNotFound');
      expectError(await server.root('GET', '/audit/rses/NO_SUCH_RSE/events'), 404, 'RSENotFound');
      expectError(await server.root('GET', '/audit/accounts/nobody-here/events'), 404, 'AccountNotFound');
    });

    it('shows a DID as ABSENT before its creation', async () => {
      const { scope, dataset } = await aDatasetWithARule();
      const [created] = await history(`/audit/dids/${scope}/${dataset}/events`);
      const before = expectStatus(
        await server.root('GET', `/audit/dids/${scope}/${dataset}/state?as_of=${created!.position - 1}`),
        200,
      ).json<Record<string, unknown>>();
      expect(before).to.deep.equal({
        scope,
        name: dataset,
        as_of: created!.position - 1,
        position: null,
        at: null,
        status: 'ABSENT',
      });
    });
  });

  describe('projections', () => {
    it('lists every projection with its generation, checkpoint and lag for admins', async () => {
      const admin = await server.createUser({ admin: true });
      const projections = expectStatus(
        await server.call('GET', '/admin/projections', { token: admin.token }),
        200,
      ).json<ProjectionJson[]>();
      const audit = projections.find((projection) => projection.name === 'audit_index')!;
      expect(audit).to.include({
        version: auditIndexProjection.version,
        status: 'running',
        rebuild: null,
        error: null,
      });
      expect(audit.generation).to.be.a('number');
      expect(audit.head).to.be.at.least(audit.checkpoint);
      expect(audit.lag).to.equal(audit.head - audit.checkpoint);
      const user = await server.createUser();
      expectError(await server.call('GET', '/admin/projections', { token: user.token }), 401, 'AccessDenied');
    });

    it("rebuilds a projection on root's request and switches reads to the new generation", async () => {
      const before = expectStatus(await server.root('GET', '/admin/projections'), 200).json<ProjectionJson[]>();
      const generation = before.find((projection) => projection.name === 'scopes')!.generation;
      const admin = await server.createUser({ admin: true });
      expectError(
        await server.call('POST', '/admin/projections/scopes/rebuild', { token: admin.token }),
        401,
        'AccessDenied',
      );
      expectError(await server.root('POST', '/admin/projections/nothing/rebuild'), 404, 'ProjectionNotFound');
      const requested = expectStatus(await server.root('POST', '/admin/projections/scopes/rebuild'), 202).json<
        Record<string, unknown>
      >();
      expect(requested).to.include({
        name: 'scopes',
        generation: generation + 1,
        already_under_way: false,
        projector_running: true,
      });
      let scopes: ProjectionJson | undefined;
      await eventually(
        async () => {
          scopes = expectStatus(await server.root('GET', '/admin/projections'), 200)
            .json<ProjectionJson[]>()
            .find((projection) => projection.name === 'scopes');
          return scopes?.generation === generation + 1 && scopes.rebuild === null;
        },
        15_000,
        'the rebuilt generation serving',
      );
      expect(scopes).to.include({ generation: generation + 1, rebuild: null, status: 'running' });
      expect(expectStatus(await server.root('GET', '/scopes/'), 200).json<string[]>()).to.not.deep.equal([]);
    });
  });
});

describe('API: audit of events stored in an older shape', () => {
  /**
   * A test-only schema change: version 1 of DidMetadataSet set one JSON key (`key`, `value`);
   * version 2, the shape the code knows, carries `columns` and `json`.
   */
  const metadataSetV1ToV2 = upcaster<DidMetadataSet>('DidMetadataSet', 1, (data) => ({
    scope: data.scope as string,
    name: data.name as string,
    columns: {},
    json: { [data.key as string]: data.value },
    setAt: data.setAt as string,
  }));
  let server: TestServer;
  before(
    async () =>
      (server = await startTestServer({
        upcasters: upcasterRegistry([metadataSetV1ToV2]),
        environment: { DMS_PROJECTION_THREAD: 'false' },
      })),
  );
  after(async () => server.stop());

  it('replays a stored version 1 event through the projections, the command handler and the state endpoint in the current shape', async () => {
    const scope = await newScope(server);
    const dataset = uniqueName('ds');
    expectStatus(await server.root('POST', path(scope, dataset), { body: { type: 'DATASET' } }), 201);
    const { eventStore } = server.runtime;
    const stream = `did-${scope}:${dataset}`;
    const at = new Date().toISOString();
    const old = await eventStore.appendToStream(
      stream,
      [
        {
          id: randomUUID(),
          type: 'DidMetadataSet',
          data: { scope, name: dataset, key: 'colour', value: 'red', setAt: at },
          metadata: { account: 'root', requestId: 'old-code', at, schemaVersion: 1 },
        },
      ],
      'stream_exists',
    );
    expect(await server.runtime.services.progress.waitFor(old.position, 5000)).to.equal(true);

    expect(expectStatus(await server.root('GET', path(scope, dataset, '/meta?plugin=json')), 200).json()).to.deep.equal(
      { colour: 'red' },
    );
    expectStatus(await server.root('POST', path(scope, dataset, '/meta/shape'), { body: { value: 'round' } }), 201);
    expect(expectStatus(await server.root('GET', path(scope, dataset, '/meta?plugin=json')), 200).json()).to.deep.equal(
      { colour: 'red', shape: 'round' },
    );

    const state = expectStatus(await server.root('GET', `/audit/dids/${scope}/${dataset}/state`), 200).json<
      Record<string, unknown>
    >();
    expect(state.json_metadata).to.deep.equal({ colour: 'red', shape: 'round' });
    const lines = expectStatus(
      await server.root('GET', `/audit/dids/${scope}/${dataset}/events?type=DidMetadataSet`),
      200,
    ).lines<AuditLine>();
    expect(lines.map((line) => [line.schema_version, line.data.key ?? null])).to.deep.equal([
      [1, 'colour'],
      [2, null],
    ]);
    // Written before identities and traces were recorded: shown without them, nothing filled in;
    // the next event of the same stream has both, and the stream's hash chain still holds.
    const [before, after] = lines;
    expect(before).not.to.have.any.keys('identity', 'correlation_id');
    expect(after).to.deep.include({ identity: { kind: 'USERPASS', value: ROOT_USERNAME } });
    expect(after!.correlation_id).to.match(/^[0-9a-f]{32}$/);
    const verdict = expectStatus(await server.root('POST', '/audit/verify'), 200)
      .lines<{ verdict?: { holds: boolean } }>()
      .find((line) => line.verdict !== undefined);
    expect(verdict?.verdict?.holds).to.equal(true);
  });
});
