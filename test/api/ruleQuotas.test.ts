import { expect } from 'chai';
import { newScope } from '../support/dids.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import {
  aDatasetOverHttp,
  globalLimitOverHttp,
  localLimitOverHttp,
  ruleJsonOverHttp,
  ruleOverHttp,
} from '../support/rules.ts';
import { rseWithProtocols } from './replicaSupport.ts';

/**
 * Quotas and usage over HTTP: who may place locks where (rule 12) and what the locks count
 * against their owner (rule 25). Each test has its own user, scope and RSEs: A holds the data,
 * B is the target.
 */
describe('API: rule quotas (rule 12)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  /** Datasets ds1 and ds2 of two 100-byte files each on A; an empty B; a plain user. */
  const world = async () => {
    const scope = await newScope(server);
    const a = (await rseWithProtocols(server)).rse;
    const b = (await rseWithProtocols(server)).rse;
    await aDatasetOverHttp(server, scope, 'ds1', [
      { name: 'f1', at: a },
      { name: 'f2', at: a },
    ]);
    await aDatasetOverHttp(server, scope, 'ds2', [
      { name: 'f3', at: a },
      { name: 'f4', at: a },
    ]);
    const user = await server.createUser();
    return { scope, a, b, user };
  };
  const ruleBody = (scope: string, name: string, rse: string, account: string, extra: object = {}) => ({
    dids: [{ scope, name }],
    copies: 1,
    rse_expression: rse,
    account,
    ...extra,
  });
  const addRule = (body: object, token: string) => server.call('POST', '/rules/', { body, token });

  it('refuses a user whose local limit on the target is spent with 409 InsufficientAccountLimit (rule 12)', async () => {
    const { scope, b, user } = await world();
    await localLimitOverHttp(server, user.account, b, 300);
    expectStatus(await addRule(ruleBody(scope, 'ds1', b, user.account), user.token), 201);
    expectError(
      await addRule(ruleBody(scope, 'ds2', b, user.account), user.token),
      409,
      'InsufficientAccountLimit',
      /insufficient quota/,
    );
  });

  it('refuses a user whose global limit over the target is spent, however large the local one (rule 12)', async () => {
    const { scope, a, b, user } = await world();
    await localLimitOverHttp(server, user.account, b, -1);
    await globalLimitOverHttp(server, user.account, `${a}|${b}`, 200);
    expectStatus(await addRule(ruleBody(scope, 'ds1', b, user.account), user.token), 201);
    expectError(await addRule(ruleBody(scope, 'ds2', b, user.account), user.token), 409, 'InsufficientAccountLimit');
  });

  it('refuses a rule larger than what is left of a global limit (rule 12)', async () => {
    const { scope, b, user } = await world();
    await localLimitOverHttp(server, user.account, b, -1);
    await globalLimitOverHttp(server, user.account, b, 150);
    expectError(await addRule(ruleBody(scope, 'ds1', b, user.account), user.token), 409, 'InsufficientAccountLimit');
  });

  it('refuses with RSEOverQuota when the target has less space left than the data (rule 12)', async () => {
    const { scope, b, user } = await world();
    await localLimitOverHttp(server, user.account, b, -1);
    expectStatus(
      await server.root('PUT', `/rses/${b}/limits`, { body: { name: 'MaxSpaceAvailable', value: 150 } }),
      200,
    );
    // Rucio's POST /rules/ does not map RSEOverQuota (a 500 there); it is answered like the other selection errors here.
    expectError(
      await addRule(ruleBody(scope, 'ds1', b, user.account), user.token),
      409,
      'RSEOverQuota',
      /insufficient space/,
    );
  });

  it('holds an admin to no quota (rule 12)', async () => {
    const { scope, b } = await world();
    const admin = await server.createUser({ admin: true });
    const ruleId = await ruleOverHttp(server, ruleBody(scope, 'ds1', b, admin.account), admin.token);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ account: admin.account, state: 'REPLICATING' });
  });

  it('holds nobody to quota on an RSE with the mock attribute (rule 12)', async () => {
    const { scope, b, user } = await world();
    expectStatus(await server.root('POST', `/rses/${b}/attr/mock`, { body: { value: true } }), 201);
    const ruleId = await ruleOverHttp(server, ruleBody(scope, 'ds1', b, user.account), user.token);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({
      account: user.account,
      state: 'REPLICATING',
      locks_replicating_cnt: 2,
    });
  });

  it('takes a rule asking for approval without quota, and approval waives the quota for good (rules 12 and 16)', async () => {
    const { scope, b, user } = await world();
    const ruleId = await ruleOverHttp(
      server,
      ruleBody(scope, 'ds1', b, user.account, { ask_approval: true }),
      user.token,
    );
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({
      state: 'WAITING_APPROVAL',
      ignore_account_limit: false,
    });
    expectStatus(await server.root('PUT', `/rules/${ruleId}`, { body: { options: { approve: true } } }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'INJECT', ignore_account_limit: true });
  });
});

describe('API: account usage from rule locks (rule 25)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const world = async () => {
    const scope = await newScope(server);
    const a = (await rseWithProtocols(server)).rse;
    const b = (await rseWithProtocols(server)).rse;
    await aDatasetOverHttp(server, scope, 'ds', [
      { name: 'f1', at: a },
      { name: 'f2', at: a, bytes: 300 },
    ]);
    const user = await server.createUser();
    await localLimitOverHttp(server, user.account, b, 10_000);
    return { scope, a, b, user };
  };
  const usage = async (account: string, suffix: string) =>
    expectStatus(await server.root('GET', `/accounts/${account}/usage/${suffix}`), 200).lines<
      Record<string, unknown>
    >();

  it('shows no usage before any rule, only the limit (rule 25)', async () => {
    const { b, user } = await world();
    expect(await usage(user.account, 'local')).to.deep.equal([
      {
        rse_id: (await server.root('GET', `/rses/${b}`)).json<{ id: string }>().id,
        rse: b,
        bytes: 0,
        files: 0,
        bytes_limit: 10_000,
        bytes_remaining: 10_000,
      },
    ]);
  });

  it("counts the bytes and files of a new rule's locks in the owner's local usage (rule 25)", async () => {
    const { scope, b, user } = await world();
    await ruleOverHttp(
      server,
      { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b, account: user.account },
      user.token,
    );
    const [line] = await usage(user.account, `local/${b}`);
    expect(line).to.include({ rse: b, bytes: 400, files: 2, bytes_limit: 10_000, bytes_remaining: 9_600 });
    expect(await usage(user.account, 'local')).to.deep.equal([line]);
    expect(await usage(user.account, '')).to.deep.equal([line]);
  });

  it("sums the usage over a global limit's expression (rule 25)", async () => {
    const { scope, a, b, user } = await world();
    await globalLimitOverHttp(server, user.account, `${a}|${b}`, 1_000);
    await ruleOverHttp(
      server,
      { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b, account: user.account },
      user.token,
    );
    const expected = { rse_expression: `${a}|${b}`, bytes: 400, files: 2, bytes_limit: 1_000, bytes_remaining: 600 };
    expect(await usage(user.account, 'global')).to.deep.equal([expected]);
    expect(await usage(user.account, `global/${encodeURIComponent(`${a}|${b}`)}`)).to.deep.equal([expected]);
  });

  it('counts a replica twice when two rules of one account lock it (rule 25)', async () => {
    const { scope, a, b, user } = await world();
    await localLimitOverHttp(server, user.account, a, 10_000);
    await ruleOverHttp(
      server,
      { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b, account: user.account },
      user.token,
    );
    await ruleOverHttp(
      server,
      { dids: [{ scope, name: 'ds' }], copies: 2, rse_expression: `${a}|${b}`, account: user.account },
      user.token,
    );
    const lines = await usage(user.account, 'local');
    expect(lines.map((line) => [line.rse, line.bytes, line.files]).sort()).to.deep.equal(
      [
        [a, 400, 2],
        [b, 800, 4],
      ].sort(),
    );
  });

  it('moves the usage to the new owner when a rule changes account (rule 25)', async () => {
    const { scope, b, user } = await world();
    const other = await server.createUser();
    const ruleId = await ruleOverHttp(
      server,
      { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b, account: user.account },
      user.token,
    );
    expectStatus(await server.root('PUT', `/rules/${ruleId}`, { body: { options: { account: other.account } } }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ account: other.account });
    expect((await usage(user.account, `local/${b}`))[0]).to.include({ bytes: 0, files: 0, bytes_remaining: 10_000 });
    expect((await usage(other.account, `local/${b}`))[0]).to.include({
      bytes: 400,
      files: 2,
      bytes_limit: 0,
      bytes_remaining: -400,
    });
    const locks = expectStatus(await server.root('GET', `/dids/${scope}/ds/rules`), 200).lines<{ account: string }>();
    expect(locks.map((rule) => rule.account)).to.deep.equal([other.account]);
  });

  it('refuses to move a rule to an account that does not exist, with 404 AccountNotFound', async () => {
    const { scope, b, user } = await world();
    const ruleId = await ruleOverHttp(
      server,
      { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b, account: user.account },
      user.token,
    );
    expectError(
      await server.root('PUT', `/rules/${ruleId}`, { body: { options: { account: 'nobody-here' } } }),
      404,
      'AccountNotFound',
    );
  });
});
