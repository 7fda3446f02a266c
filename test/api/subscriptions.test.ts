import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { newScope, path } from '../support/dids.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { localLimitOverHttp } from '../support/rules.ts';
import { rseWithProtocols } from './replicaSupport.ts';

type SubscriptionLine = Record<string, unknown> & {
  id: string;
  name: string;
  account: string;
  state: string;
  filter: string;
  replication_rules: string;
};

/**
 * The /subscriptions routes over HTTP (rest-api-reference §1.24, behaviour reference §7), without
 * workers: what is stored, listed and refused. The transmogrifier's work is in
 * test/workers/transmogrifierRoles.test.ts.
 */
describe('API: subscriptions (§7)', function () {
  this.timeout(30_000);
  let server: TestServer;
  let admin: { account: string; token: string };
  let user: { account: string; token: string };
  let rse: string;
  before(async () => {
    server = await startTestServer();
    admin = await server.createUser({ admin: true });
    user = await server.createUser();
    ({ rse } = await rseWithProtocols(server));
  });
  after(async () => server.stop());

  const options = (extra: object = {}) => ({
    options: {
      filter: { scope: ['mc16_.*'], did_type: ['DATASET'] },
      replication_rules: [{ copies: 1, rse_expression: rse }],
      comments: 'for tests',
      lifetime: null,
      retroactive: false,
      ...extra,
    },
  });
  const add = async (account: string, name: string, body: object = options(), token = server.rootToken) =>
    server.call('POST', `/subscriptions/${account}/${name}`, { body, token });
  const addOk = async (account: string, name: string, body: object = options()) => {
    const response = expectStatus(await add(account, name, body), 201);
    expect(response.headers['content-type']).to.match(/^text\/html/);
    return response.text;
  };
  const byId = async (id: string) =>
    expectStatus(await server.root('GET', `/subscriptions/id/${id}`), 200).json<SubscriptionLine>();
  const head = async () => server.runtime.services.commands.eventStore.headPosition();

  describe('POST /subscriptions/{account}/{name}', () => {
    it('answers the new id as text, and stores the subscription ACTIVE with its filter and rules as JSON texts', async () => {
      const name = uniqueName('sub');
      const id = await addOk('root', name, options({ priority: 1, lifetime: 2, comments: 'Daily AODs' }));
      expect(id).to.match(/^[0-9a-f]{32}$/);
      const subscription = await byId(id);
      expect(subscription).to.include({
        id,
        name,
        account: 'root',
        state: 'ACTIVE',
        policyid: 1,
        retroactive: false,
        dry_run: false,
        comments: 'Daily AODs',
        expired_at: null,
      });
      expect(JSON.parse(subscription.filter)).to.deep.equal({ scope: ['mc16_.*'], did_type: ['DATASET'] });
      expect(subscription.filter).to.equal('{"scope": ["mc16_.*"], "did_type": ["DATASET"]}');
      expect(JSON.parse(subscription.replication_rules)).to.deep.equal([{ copies: 1, rse_expression: rse }]);
      // A lifetime is a number of days (§7): two days from now, in Rucio's date format.
      const lifetime = Date.parse(String(subscription.lifetime));
      expect(lifetime - Date.now()).to.be.within(2 * 86_400_000 - 60_000, 2 * 86_400_000 + 60_000);
    });

    it('makes a retroactive subscription NEW, and takes priority 3 when none is given', async () => {
      const id = await addOk('root', uniqueName('sub'), options({ retroactive: true }));
      expect(await byId(id)).to.include({ state: 'NEW', retroactive: true, policyid: 3 });
    });

    it('refuses a second subscription of the same name for the account (SubscriptionDuplicate), not for another account (§7)', async () => {
      const name = uniqueName('sub');
      await addOk('root', name);
      const before = await head();
      expectError(
        await add('root', name),
        409,
        'SubscriptionDuplicate',
        new RegExp(`Subscription '${name}' owned by 'root' already exists!`),
      );
      expect(await head()).to.equal(before);
      await addOk(admin.account, name);
      expect(
        expectStatus(await server.root('GET', `/subscriptions/name/${name}`), 200)
          .lines<SubscriptionLine>()
          .map((line) => line.account)
          .sort(),
      ).to.deep.equal([admin.account, 'root'].sort());
    });

    it('is for admins only (§9 add_subscription)', async () => {
      expectError(await add(user.account, uniqueName('sub'), options(), user.token), 401, 'AccessDenied');
      await addOk(user.account, uniqueName('sub'), options());
      expectStatus(await add(user.account, uniqueName('sub'), options(), admin.token), 201);
    });

    it('refuses an account that does not exist', async () => {
      expectError(await add(uniqueName('ghost'), uniqueName('sub')), 404, 'AccountNotFound');
    });

    it('refuses bad filters, rules and options with clear errors, and writes nothing', async () => {
      const cases: [object, number, string, RegExp?][] = [
        [{}, 400, 'KeyError', /'options' not defined/],
        [{ options: [] }, 400, 'TypeError'],
        [
          { options: { filter: {}, replication_rules: [{ copies: 1, rse_expression: rse }], comments: null } },
          400,
          'KeyError',
          /'lifetime' not defined/,
        ],
        [options({ filter: 'mc16' }), 400, 'InvalidObject', /filter should be a dict/],
        [options({ filter: null }), 400, 'InvalidObject', /filter should be a dict/],
        [
          options({ filter: { pattern: '(unclosed' } }),
          400,
          'InvalidObject',
          /pattern "\(unclosed" is not a valid regular expression/,
        ],
        [
          options({ filter: { pattern: '(?P<p>mc)_(?P=p)', excluded_pattern: 'x' } }),
          400,
          'InvalidObject',
          /pattern .* backreference .* linear time/,
        ],
        [options({ filter: { datatype: ['(?!RAW)'] } }), 400, 'InvalidObject', /datatype .* lookaround/],
        [options({ filter: { scope: 'mc16' } }), 400, 'InvalidObject', /scope must be an array/],
        [options({ filter: { did_type: ['FOLDER'] } }), 400, 'InvalidObject', /did_type "FOLDER" is none of/],
        [options({ filter: { account: ['Not An Account'] } }), 400, 'InvalidObject', /is not an account name/],
        [
          options({ filter: { colour: ['red'] } }),
          400,
          'InvalidObject',
          /"colour" is neither a filter option nor a DID metadata column/,
        ],
        [options({ filter: { split_rule: 'yes' } }), 400, 'InvalidObject', /split_rule must be a boolean/],
        [options({ replication_rules: [] }), 400, 'InvalidObject', /You must specify a rule/],
        [options({ replication_rules: { copies: 1 } }), 400, 'InvalidObject', /replication_rules should be a list/],
        [
          options({ replication_rules: [{ copies: 1 }] }),
          400,
          'InvalidObject',
          /rule 1: rse_expression must be a non-empty string/,
        ],
        [
          options({ replication_rules: [{ copies: 0, rse_expression: rse }] }),
          400,
          'InvalidObject',
          /copies must be a whole number of at least 1/,
        ],
        [options({ replication_rules: [{ copies: 1, rse_expression: '((' }] }), 400, 'InvalidObject', /rse_expression/],
        [
          options({ replication_rules: [{ copies: 1, rse_expression: rse, activity: 'Sightseeing' }] }),
          400,
          'InvalidObject',
          /not a known activity/,
        ],
        [
          options({ replication_rules: [{ copies: 1, rse_expression: rse, chained_idx: 1 }] }),
          400,
          'InvalidObject',
          /chained subscriptions are not supported/,
        ],
        [
          options({ replication_rules: [{ copies: 1, rse_expression: rse, copiez: 2 }] }),
          400,
          'InvalidObject',
          /unknown option "copiez"/,
        ],
        [options({ lifetime: -1 }), 400, 'InvalidObject', /lifetime must be a number of days/],
        [options({ lifetime: '7' }), 400, 'InvalidObject', /lifetime must be a number of days/],
        [options({ retroactive: 'maybe' }), 400, 'TypeError', /'retroactive' must be a boolean type/],
        [options({ priority: 1.5 }), 400, 'InvalidObject', /priority must be a whole number/],
        [options({ comments: 5 }), 400, 'InvalidObject', /comments must be a string/],
      ];
      const before = await head();
      for (const [body, status, exceptionClass, message] of cases) {
        const response = await add('root', uniqueName('bad'), body);
        expect(response.status, `${JSON.stringify(body)}: ${response.text}`).to.equal(status);
        expectError(response, status, exceptionClass, message);
      }
      expectError(await add('root', 'x'.repeat(65)), 400, 'InvalidObject', /longer than 64/);
      expect(await head(), 'no refused request wrote anything').to.equal(before);
    });
  });

  describe('GET', () => {
    it('lists all, by account, by account and name, by name, by id; 404 SubscriptionNotFound when nothing matches', async () => {
      const owner = await server.createUser();
      const [first, second] = [uniqueName('a'), uniqueName('b')];
      const firstId = await addOk(owner.account, first);
      await addOk(owner.account, second);
      const byAccount = expectStatus(
        await server.call('GET', `/subscriptions/${owner.account}`, { token: user.token }),
        200,
      );
      expect(byAccount.headers['content-type']).to.equal('application/x-json-stream');
      expect(byAccount.lines<SubscriptionLine>().map((line) => line.name)).to.deep.equal([first, second]);
      expect(
        expectStatus(await server.root('GET', `/subscriptions/${owner.account}/${first}`), 200)
          .lines<SubscriptionLine>()
          .map((line) => line.id),
      ).to.deep.equal([firstId]);
      expect(
        expectStatus(await server.root('GET', `/subscriptions/name/${second}`), 200).lines<SubscriptionLine>(),
      ).to.have.length(1);
      expect(
        expectStatus(await server.root('GET', '/subscriptions/'), 200)
          .lines<SubscriptionLine>()
          .map((line) => line.id),
      ).to.include(firstId);
      expect(
        expectStatus(await server.root('GET', `/subscriptions/${owner.account.slice(0, 6)}*`), 200)
          .lines<SubscriptionLine>()
          .map((line) => line.name),
      ).to.include.members([first, second]);
      expect((await server.root('GET', '/subscriptions')).status).to.equal(308);
      expectError(
        await server.root('GET', `/subscriptions/${owner.account}/nothing`),
        404,
        'SubscriptionNotFound',
        new RegExp(`account '${owner.account}' named 'nothing' not found`),
      );
      expectError(await server.root('GET', `/subscriptions/${uniqueName('nobody')}`), 404, 'SubscriptionNotFound');
      expectError(
        await server.root('GET', `/subscriptions/name/${uniqueName('nothing')}`),
        404,
        'SubscriptionNotFound',
      );
      expectError(await server.root('GET', `/subscriptions/id/${'0'.repeat(32)}`), 404, 'SubscriptionNotFound');
      expectError(await server.root('GET', '/subscriptions/id/not-an-id'), 404, 'SubscriptionNotFound');
      expectError(
        await server.root('GET', `/subscriptions/${owner.account}`, { headers: { Accept: 'application/json' } }),
        406,
        'UnsupportedRequestedContentType',
      );
    });
  });

  describe('PUT /subscriptions/{account}/{name}', () => {
    it('changes the options given, leaves the subscription UPDATED and answers 201 as Rucio (§7)', async () => {
      const name = uniqueName('sub');
      const id = await addOk('root', name);
      const response = expectStatus(
        await server.root('PUT', `/subscriptions/root/${name}`, {
          body: {
            options: {
              filter: { pattern: 'data18.*' },
              comments: 'changed',
              lifetime: 1,
              priority: 0,
              replication_rules: null,
              dry_run: true,
            },
          },
        }),
        201,
      );
      expect(response.json()).to.equal('Created');
      const updated = await byId(id);
      expect(updated).to.include({ state: 'UPDATED', comments: 'changed', policyid: 0, dry_run: false });
      expect(JSON.parse(updated.filter)).to.deep.equal({ pattern: 'data18.*' });
      expect(JSON.parse(updated.replication_rules)).to.deep.equal([{ copies: 1, rse_expression: rse }]);
      expect(Date.parse(String(updated.lifetime)) - Date.now()).to.be.within(86_400_000 - 60_000, 86_400_000 + 60_000);
    });

    it('makes a subscription INACTIVE with state I, and an update brings it back (UPDATED), as Rucio', async () => {
      const name = uniqueName('sub');
      const id = await addOk('root', name);
      expectStatus(await server.root('PUT', `/subscriptions/root/${name}`, { body: { options: { state: 'I' } } }), 201);
      const inactive = await byId(id);
      expect(inactive.state).to.equal('INACTIVE');
      expect(inactive.expired_at).to.be.a('string');
      expectStatus(
        await server.root('PUT', `/subscriptions/root/${name}`, { body: { options: { comments: 'again' } } }),
        201,
      );
      expect((await byId(id)).state).to.equal('UPDATED');
    });

    it('refuses unknown subscriptions (404), non-admins (401), bad states and filters (400), changing nothing', async () => {
      const name = uniqueName('sub');
      await addOk('root', name);
      const before = await head();
      expectError(
        await server.root('PUT', `/subscriptions/root/${uniqueName('none')}`, { body: { options: { comments: 'x' } } }),
        404,
        'SubscriptionNotFound',
      );
      expectError(
        await server.call('PUT', `/subscriptions/root/${name}`, {
          body: { options: { comments: 'x' } },
          token: user.token,
        }),
        401,
        'AccessDenied',
      );
      expectError(
        await server.root('PUT', `/subscriptions/root/${name}`, { body: { options: { state: 'PAUSED' } } }),
        400,
        'InvalidObject',
        /Invalid subscription state: PAUSED/,
      );
      expectError(
        await server.root('PUT', `/subscriptions/root/${name}`, { body: { options: { filter: { pattern: '[' } } } }),
        400,
        'InvalidObject',
        /not a valid regular expression/,
      );
      expectError(await server.root('PUT', `/subscriptions/root/${name}`, { body: {} }), 400, 'KeyError');
      expect(await head()).to.equal(before);
    });
  });

  describe('rules of a subscription', () => {
    it('lists the rules made for a subscription (with a state filter), and counts them per state for the subscription and its account', async () => {
      const owner = await server.createUser();
      await localLimitOverHttp(server, owner.account, rse, 1e12);
      const name = uniqueName('sub');
      const id = await addOk(owner.account, name);
      const scope = await newScope(server);
      const ruleIds: string[] = [];
      for (const dataset of ['ds1', 'ds2']) {
        expectStatus(await server.root('POST', path(scope, dataset), { body: { type: 'DATASET' } }), 201);
        const response = expectStatus(
          await server.root('POST', '/rules/', {
            body: {
              dids: [{ scope, name: dataset }],
              copies: 1,
              rse_expression: rse,
              account: owner.account,
              subscription_id: id,
            },
          }),
          201,
        );
        ruleIds.push(...(JSON.parse(response.text) as string[]));
      }
      const rules = expectStatus(await server.root('GET', `/subscriptions/${owner.account}/${name}/rules`), 200).lines<{
        id: string;
        subscription_id: string;
        state: string;
      }>();
      expect(rules.map((rule) => rule.id).sort()).to.deep.equal([...ruleIds].sort());
      expect(rules.every((rule) => rule.subscription_id === id && rule.state === 'OK')).to.equal(true);
      expect(
        expectStatus(await server.root('GET', `/subscriptions/${owner.account}/${name}/rules?state=O`), 200).lines(),
      ).to.have.length(2);
      expect(
        expectStatus(await server.root('GET', `/subscriptions/${owner.account}/${name}/rules?state=STUCK`), 200).text,
      ).to.equal('');
      const counts = expectStatus(
        await server.root('GET', `/subscriptions/${owner.account}/${name}/rules/states`),
        200,
      ).lines();
      expect(counts).to.deep.equal([{ account: owner.account, name, state: 'OK', count: 2 }]);
      expect(
        expectStatus(await server.root('GET', `/subscriptions/${owner.account}/rules/states`), 200).lines(),
      ).to.deep.equal(counts);
      expectError(
        await server.root('GET', `/subscriptions/${owner.account}/nothing/rules`),
        404,
        'SubscriptionNotFound',
      );
      // The subscription's last_processed follows the rules made for it.
      expect((await byId(id)).last_processed).to.be.a('string');
    });
  });

  describe('GET /admin/subscriptions/dry_runs', () => {
    it('is for admins', async () => {
      expectStatus(await server.call('GET', '/admin/subscriptions/dry_runs', { token: admin.token }), 200);
      expectError(
        await server.call('GET', '/admin/subscriptions/dry_runs', { token: user.token }),
        401,
        'AccessDenied',
      );
    });
  });
});
