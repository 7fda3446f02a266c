import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { path } from '../support/dids.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { rseWithProtocols } from '../api/replicaSupport.ts';
import { ManualClock } from '../support/clock.ts';

const TRANSMOGRIFIER = { workers: true, daemonRoles: ['transmogrifier', 'transmogrifier-retroactive'] };

type Rule = {
  id: string;
  subscription_id: string | null;
  scope: string;
  name: string;
  rse_expression: string;
  copies: number;
  account: string;
  state: string;
  activity: string;
  comments: string | null;
};

/**
 * The transmogrifier as a user meets it (behaviour reference §7): a server with its workers
 * running, subscriptions added through the API, and datasets that get their rules without anyone
 * asking.
 */
describe('Roles: the transmogrifier at work (§7)', function () {
  this.timeout(60_000);
  let server: TestServer;
  let rse: string;
  let otherRse: string;
  // Running, as the daemons expect between their cycles; a test jumps it over a subscription's lifetime.
  const clock = new ManualClock({ running: true });
  before(async () => {
    server = await startTestServer({ roles: TRANSMOGRIFIER, clock });
    expectStatus(
      await server.root('POST', '/config', { body: { 'transmogrifier-retroactive': { interval: 1 } } }),
      201,
    );
    server = await server.restart();
    ({ rse } = await rseWithProtocols(server));
    ({ rse: otherRse } = await rseWithProtocols(server));
  });
  after(async () => server.stop());

  const newScope = async (prefix: string) => {
    const scope = uniqueName(prefix);
    expectStatus(await server.root('POST', `/scopes/root/${scope}`), 201);
    return scope;
  };
  const subscribe = async (
    name: string,
    filter: object,
    extra: object = {},
    rules: object[] = [{ copies: 1, rse_expression: rse }],
  ) =>
    expectStatus(
      await server.root('POST', `/subscriptions/root/${name}`, {
        body: {
          options: { filter, replication_rules: rules, comments: 'auto', lifetime: null, retroactive: false, ...extra },
        },
      }),
      201,
    ).text;
  const collection = async (scope: string, name: string, type = 'DATASET', meta: object = {}) =>
    expectStatus(await server.root('POST', path(scope, name), { body: { type, meta } }), 201);
  const rulesOf = async (scope: string, name: string) =>
    expectStatus(await server.root('GET', path(scope, name, '/rules')), 200).lines<Rule>();
  const settle = async () => {
    // Jobs for DIDs created so far are done when a DID created now has been processed.
    const scope = await newScope('settle.');
    const marker = uniqueName('marker');
    const id = await subscribe(uniqueName('settle'), { scope: [scope] });
    await collection(scope, marker);
    await eventually(
      async () => (await rulesOf(scope, marker)).some((rule) => rule.subscription_id === id),
      15_000,
      'the marker dataset processed',
    );
  };

  it("gives each new dataset of a scope the subscription's rule within seconds, and none to the others", async () => {
    const scope = await newScope('mc16_');
    const otherScope = await newScope('data.');
    const name = uniqueName('aods');
    const id = await subscribe(name, {
      scope: [`${scope.replace('.', '\\.')}`],
      did_type: ['DATASET'],
      excluded_pattern: '.*_tmp$',
      datatype: ['AOD'],
    });
    await collection(scope, 'matching', 'DATASET', { datatype: 'AOD' });
    await collection(scope, 'wrong_datatype', 'DATASET', { datatype: 'ESD' });
    await collection(scope, 'excluded_tmp', 'DATASET', { datatype: 'AOD' });
    await collection(scope, 'a_container', 'CONTAINER', { datatype: 'AOD' });
    await collection(otherScope, 'other_scope', 'DATASET', { datatype: 'AOD' });
    await eventually(
      async () => (await rulesOf(scope, 'matching')).length === 1,
      10_000,
      "the matching dataset's rule",
    );
    const [rule] = await rulesOf(scope, 'matching');
    expect(rule).to.include({
      subscription_id: id,
      account: 'root',
      rse_expression: rse,
      copies: 1,
      state: 'OK',
      activity: 'default',
      comments: 'auto',
    });
    await settle();
    for (const [inScope, dataset] of [
      [scope, 'wrong_datatype'],
      [scope, 'excluded_tmp'],
      [scope, 'a_container'],
      [otherScope, 'other_scope'],
    ] as const) {
      expect(await rulesOf(inScope, dataset), dataset).to.deep.equal([]);
    }
    // Processed DIDs lose their `is_new` flag.
    const fresh = expectStatus(await server.root('GET', '/dids/new?type=dataset'), 200).lines<{
      scope: string;
      name: string;
    }>();
    expect(fresh.filter((did) => did.scope === scope)).to.deep.equal([]);
    expect(
      expectStatus(await server.root('GET', `/subscriptions/root/${name}/rules`), 200)
        .lines<Rule>()
        .map((line) => line.name),
    ).to.deep.equal(['matching']);
  });

  it('makes one rule per RSE for a split_rule subscription, and one per RSE of the expression for copies "*"', async () => {
    const scope = await newScope('split.');
    await subscribe(uniqueName('split'), { scope: [scope], split_rule: true }, {}, [
      { copies: 2, rse_expression: `${rse}|${otherRse}` },
    ]);
    await collection(scope, 'ds');
    await eventually(async () => (await rulesOf(scope, 'ds')).length === 2, 10_000, 'two split rules');
    expect((await rulesOf(scope, 'ds')).map((rule) => [rule.rse_expression, rule.copies]).sort()).to.deep.equal(
      [
        [rse, 1],
        [otherRse, 1],
      ].sort(),
    );
    const wildScope = await newScope('wild.');
    await subscribe(uniqueName('wild'), { scope: [wildScope] }, {}, [
      { copies: '*', rse_expression: `${rse}|${otherRse}` },
    ]);
    await collection(wildScope, 'ds');
    await eventually(async () => (await rulesOf(wildScope, 'ds')).length === 1, 10_000, 'the wildcard rule');
    expect((await rulesOf(wildScope, 'ds'))[0]).to.include({ copies: 2, rse_expression: `${rse}|${otherRse}` });
  });

  it('makes no rule for a dry-run subscription, and records what it would have made for admins', async () => {
    const scope = await newScope('dry.');
    const id = await subscribe(uniqueName('dry'), { scope: [scope] }, { dry_run: true });
    await collection(scope, 'ds');
    await eventually(
      async () =>
        expectStatus(await server.root('GET', `/admin/subscriptions/dry_runs?subscription_id=${id}`), 200).lines()
          .length === 1,
      10_000,
      'the dry run recorded',
    );
    const [record] = expectStatus(
      await server.root('GET', `/admin/subscriptions/dry_runs?subscription_id=${id}`),
      200,
    ).lines<{ scope: string; name: string; rules: { copies: number; rse_expression: string }[] }>();
    expect(record).to.deep.include({ scope, name: 'ds' });
    expect(record!.rules).to.have.length(1);
    expect(record!.rules[0]).to.include({ copies: 1, rse_expression: rse });
    expect(await rulesOf(scope, 'ds')).to.deep.equal([]);
  });

  it('covers the datasets that existed before a retroactive subscription, which then becomes ACTIVE', async () => {
    const scope = await newScope('retro.');
    for (const name of ['old1', 'old2', 'old3']) await collection(scope, name);
    const id = expectStatus(
      await server.root('POST', `/subscriptions/root/${uniqueName('retro')}`, {
        body: {
          options: {
            filter: { scope: [scope] },
            replication_rules: [{ copies: 1, rse_expression: rse }],
            comments: null,
            lifetime: null,
            retroactive: true,
          },
        },
      }),
      201,
    ).text;
    await collection(scope, 'new1');
    await eventually(
      async () =>
        (await Promise.all(['old1', 'old2', 'old3', 'new1'].map((name) => rulesOf(scope, name)))).every(
          (rules) => rules.length === 1,
        ),
      15_000,
      'every dataset covered',
    );
    await eventually(
      async () =>
        expectStatus(await server.root('GET', `/subscriptions/id/${id}`), 200).json<{ state: string }>().state ===
        'ACTIVE',
      10_000,
      'the subscription ACTIVE',
    );
  });

  it('stops a subscription whose lifetime is over: INACTIVE, and no rules for datasets created afterwards', async () => {
    const scope = await newScope('brief.');
    const name = uniqueName('brief');
    // A minute, in days.
    const id = await subscribe(name, { scope: [scope] }, { lifetime: 60 / 86_400 });
    clock.advance(61_000);
    await eventually(
      async () =>
        expectStatus(await server.root('GET', `/subscriptions/id/${id}`), 200).json<{ state: string }>().state ===
        'INACTIVE',
      15_000,
      'the subscription INACTIVE',
    );
    await collection(scope, 'late');
    await settle();
    expect(await rulesOf(scope, 'late')).to.deep.equal([]);
  });
});
