import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { newScope, path } from '../support/dids.ts';
import { addReplicas, fileItem, rseWithProtocols } from '../api/replicaSupport.ts';
import { replicasCollection, type ReplicaDocument } from '../../projections/replica/replicaDocuments.ts';
import { Queue } from 'bullmq';
import { handleCommands } from '../../commands/handleCommand.ts';
import { planAddRules } from '../../commands/rule/ruleCreationCommands.ts';
import { StepBuilder } from '../../commands/stepBuilder.ts';
import { ruleRequestOf } from '../../api/routes/rule/ruleParams.ts';
import { didStreamName } from '../../domain/did/did.ts';
import { redisConnectionOptions } from '../../infra/queue/connection.ts';
import { ManualClock } from '../support/clock.ts';

/** The judge alone: with the conveyor running, the requests these tests look at would move on. */
const JUDGE = { workers: true, daemonRoles: ['judge-injector', 'judge-evaluator', 'judge-repairer', 'judge-cleaner'] };

/**
 * The judge as a user meets it: a server with its workers running, and rules that change without
 * anyone asking.
 */
describe('Roles: the judge at work (rules 12, 16, 19, 20, 25)', function () {
  this.timeout(30_000);
  let server: TestServer;
  // Running, as the daemons expect between their cycles; tests jump it over rules' lifetimes, by
  // more than an hour in all: root's token lasts a day here.
  const clock = new ManualClock({ running: true });
  before(async () => {
    server = await startTestServer({ roles: JUDGE, clock, environment: { DMS_TOKEN_LIFETIME_SECONDS: '86400' } });
    expectStatus(
      await server.root('POST', '/config', {
        body: { 'judge-cleaner': { interval: 1 }, 'judge-repairer': { interval: 1, delta: 0 } },
      }),
      201,
    );
    server = await server.restart();
  });
  after(async () => server.stop());

  const world = async () => {
    const scope = await newScope(server);
    const a = await rseWithProtocols(server);
    const b = await rseWithProtocols(server);
    const dataset = uniqueName('ds');
    expectStatus(await server.root('POST', path(scope, dataset), { body: { type: 'DATASET' } }), 201);
    await addReplicas(server, a.rse, [fileItem(scope, 'f1'), fileItem(scope, 'f2')]);
    expectStatus(
      await server.root('POST', path(scope, dataset, '/dids'), {
        body: {
          dids: [
            { scope, name: 'f1' },
            { scope, name: 'f2' },
          ],
        },
      }),
      201,
    );
    return { scope, dataset, a, b };
  };
  const addRule = async (body: object) =>
    (JSON.parse(expectStatus(await server.root('POST', '/rules/', { body }), 201).text) as string[])[0]!;
  const ruleOf = async (ruleId: string) =>
    (await server.root('GET', `/rules/${ruleId}`)).json<Record<string, unknown>>();

  it('injects an asynchronous rule without anyone acting', async () => {
    const { scope, dataset, b } = await world();
    const ruleId = await addRule({
      dids: [{ scope, name: dataset }],
      copies: 1,
      rse_expression: b.rse,
      asynchronous: true,
    });
    await eventually(async () => (await ruleOf(ruleId)).state === 'REPLICATING', 10_000, 'the rule injected');
    expect(await ruleOf(ruleId)).to.include({ locks_replicating_cnt: 2 });
  });

  it('locks a file attached to a dataset under a rule', async () => {
    const { scope, dataset, a, b } = await world();
    const ruleId = await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse });
    await addReplicas(server, a.rse, [fileItem(scope, 'f3')]);
    expectStatus(
      await server.root('POST', path(scope, dataset, '/dids'), { body: { dids: [{ scope, name: 'f3' }] } }),
      201,
    );
    await eventually(async () => (await ruleOf(ruleId)).locks_replicating_cnt === 3, 10_000, 'the new file locked');
    expectStatus(await server.root('GET', `/requests/${scope}/f3/${b.rse}`), 200);
  });

  it('locks a file attached while a rule was being made, whose evaluation could not see the rule (issue 34)', async () => {
    const { scope, dataset, a, b } = await world();
    const { commands, config } = server.runtime.services;
    // The rule reads its dataset's content (f1, f2) and is appended only after an attach of f3 that
    // the evaluator has already evaluated, finding no rule: the race two API processes run into.
    const metadata = { now: new Date(), account: 'root', requestId: uniqueName('race') };
    const request = ruleRequestOf({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse }, 'root');
    const step = new StepBuilder(metadata);
    const [ruleId] = await planAddRules(commands, request, step, metadata);
    await addReplicas(server, a.rse, [fileItem(scope, 'f3')]);
    expectStatus(
      await server.root('POST', path(scope, dataset, '/dids'), { body: { dids: [{ scope, name: 'f3' }] } }),
      201,
    );
    const attach = (await commands.eventStore.readStream(didStreamName(scope, dataset))).findLast(
      (event) => event.type === 'DidsAttached',
    )!;
    const evaluations = new Queue('judge-evaluator', {
      connection: redisConnectionOptions(server.runtime.redisUrl!),
      prefix: config.queuePrefix,
    });
    try {
      await eventually(
        async () => (await evaluations.getJobState(attach.id)) === 'completed',
        10_000,
        'the attach evaluated',
      );
    } finally {
      await evaluations.close();
    }
    await handleCommands(commands, step.decisions(), { metadata });
    await eventually(
      async () => (await ruleOf(ruleId!)).locks_replicating_cnt === 3,
      10_000,
      'the file attached meanwhile locked',
    );
    expectStatus(await server.root('GET', `/requests/${scope}/f3/${b.rse}`), 200);
  });

  it('injects an approved rule of a user without quota (rules 12 and 16)', async () => {
    const { scope, dataset, b } = await world();
    const user = await server.createUser();
    const response = expectStatus(
      await server.call('POST', '/rules/', {
        body: {
          dids: [{ scope, name: dataset }],
          copies: 1,
          rse_expression: b.rse,
          account: user.account,
          ask_approval: true,
        },
        token: user.token,
      }),
      201,
    );
    const [ruleId] = JSON.parse(response.text) as string[];
    expectStatus(await server.root('PUT', `/rules/${ruleId}`, { body: { options: { approve: true } } }), 200);
    await eventually(async () => (await ruleOf(ruleId!)).state === 'REPLICATING', 10_000, 'the approved rule injected');
    expect(await ruleOf(ruleId!)).to.include({ account: user.account, locks_replicating_cnt: 2 });
  });

  it('gives the owner back the usage of a rule the cleaner deletes (rules 20 and 25)', async () => {
    const { scope, dataset, b } = await world();
    const user = await server.createUser();
    expectStatus(
      await server.root('POST', `/accountlimits/local/${user.account}/${b.rse}`, { body: { bytes: 1_000 } }),
      201,
    );
    const response = expectStatus(
      await server.call('POST', '/rules/', {
        body: {
          dids: [{ scope, name: dataset }],
          copies: 1,
          rse_expression: b.rse,
          account: user.account,
          lifetime: 60,
        },
        token: user.token,
      }),
      201,
    );
    const [ruleId] = JSON.parse(response.text) as string[];
    const usage = async () =>
      expectStatus(await server.root('GET', `/accounts/${user.account}/usage/local/${b.rse}`), 200).lines<{
        bytes: number;
        files: number;
      }>()[0]!;
    expect(await usage()).to.include({ bytes: 200, files: 2 });
    clock.advance(61_000);
    await eventually(
      async () => (await server.root('GET', `/rules/${ruleId}`)).status === 404,
      15_000,
      'the expired rule deleted',
    );
    await eventually(async () => (await usage()).bytes === 0, 5_000, 'the usage given back');
    expect(await usage()).to.include({ bytes: 0, files: 0, bytes_remaining: 1_000 });
  });

  it('deletes a rule the API deleted once its hour is up, purging the copies it held (rule 20)', async () => {
    const { scope, dataset, a } = await world();
    const ruleId = await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: a.rse });
    expectStatus(await server.root('DELETE', `/rules/${ruleId}`, { body: { purge_replicas: true } }), 200);
    expect((await server.root('GET', `/rules/${ruleId}`)).status, 'the rule kept for its hour').to.equal(200);
    clock.advance(3_601_000);
    await eventually(
      async () => (await server.root('GET', `/rules/${ruleId}`)).status === 404,
      15_000,
      'the deleted rule gone',
    );
    // The rule's group shows the deletion first; the replicas' group may apply it a moment later.
    await server.settled();
    // Tombstones are no part of any answer: the replica read model shows them.
    const left = await server.runtime.services.readModels
      .collection<ReplicaDocument>(replicasCollection)
      .find({ rse_id: a.id })
      .toArray();
    expect(
      left.filter((replica) => replica.name === 'f1' || replica.name === 'f2').map((replica) => replica.tombstone),
    ).to.deep.equal(['1970-01-01T00:00:00.000Z', '1970-01-01T00:00:00.000Z']);
  });

  it('deletes a rule once it expires, and its locks with it', async () => {
    const { scope, dataset, b } = await world();
    const ruleId = await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, lifetime: 60 });
    clock.advance(61_000);
    await eventually(
      async () => (await server.root('GET', `/rules/${ruleId}`)).status === 404,
      15_000,
      'the expired rule deleted',
    );
    expectError(await server.root('GET', `/rules/${ruleId}`), 404, 'RuleNotFound');
    expect(expectStatus(await server.root('GET', `/rules/${ruleId}/locks`), 200).text).to.equal('');
    expectError(await server.root('GET', `/requests/${scope}/f1/${b.rse}`), 404, 'RequestNotFound');
  });
});

/**
 * A rule too large to be applied in the request, on a server of its own: its injection keeps the
 * process busy for seconds, which must not slow the other tests' schedules.
 */
describe('Roles: the judge-injector with a large rule (rule 16)', function () {
  this.timeout(30_000);
  let server: TestServer;
  before(async () => (server = await startTestServer({ roles: JUDGE })));
  after(async () => server.stop());
  const addRule = async (body: object) =>
    (JSON.parse(expectStatus(await server.root('POST', '/rules/', { body }), 201).text) as string[])[0]!;
  const ruleOf = async (ruleId: string) =>
    (await server.root('GET', `/rules/${ruleId}`)).json<Record<string, unknown>>();

  it('injects a rule of 10 000 locks, which starts in INJECT, without anyone acting (rule 16)', async function () {
    this.timeout(180_000);
    const scope = await newScope(server);
    const a = await rseWithProtocols(server);
    const b = await rseWithProtocols(server);
    const dataset = uniqueName('big');
    expectStatus(await server.root('POST', path(scope, dataset), { body: { type: 'DATASET' } }), 201);
    for (let start = 0; start < 10_000; start += 1000) {
      const dids = Array.from({ length: 1000 }, (_, offset) => fileItem(scope, `f${start + offset}`));
      expectStatus(await server.root('POST', path(scope, dataset, '/dids'), { body: { rse: a.rse, dids } }), 201);
    }
    const ruleId = await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse });
    await eventually(async () => (await ruleOf(ruleId)).state === 'REPLICATING', 150_000, 'the large rule injected');
    expect(await ruleOf(ruleId)).to.include({ locks_replicating_cnt: 10_000, locks_ok_cnt: 0 });
    const history = expectStatus(await server.root('GET', `/rules/${scope}/${dataset}/history`), 200).lines<{
      state: string;
    }>();
    expect(history[0]).to.include({ state: 'INJECT' });
    expect(history.at(-1)).to.include({ state: 'REPLICATING' });
    // The requests are another projection group's read models, which may still be writing them.
    await eventually(
      async () => (await server.root('GET', `/requests/${scope}/f9999/${b.rse}`)).status === 200,
      60_000,
      'the last request projected',
    );
    expect(expectStatus(await server.root('GET', `/requests/${scope}/f9999/${b.rse}`), 200).json()).to.include({
      state: 'QUEUED',
      rule_id: ruleId,
    });
  });
});
