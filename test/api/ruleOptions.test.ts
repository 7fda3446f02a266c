import { expect } from 'chai';
import { newScope, path } from '../support/dids.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import {
  aDatasetOverHttp,
  datasetLocksOverHttp,
  locksOverHttp,
  ruleJsonOverHttp,
  ruleOverHttp,
} from '../support/rules.ts';
import { rseWithProtocols } from './replicaSupport.ts';

/** Seconds between a Rucio date (`Mon, 23 Nov 2026 10:00:00 UTC`) and now. */
const secondsFromNow = (date: unknown): number =>
  (Date.parse(String(date).replace(' UTC', ' GMT')) - Date.now()) / 1000;

/**
 * The rule routes over HTTP, one option or answer per test: refusals of POST /rules/, every
 * option of PUT /rules/{id} (behaviour reference §3.12), approval, reduction and move, the
 * analysis, and the listings of rules and locks. A dataset `ds` of two files lives on A; B and C
 * are empty.
 */
describe('API: rule refusals (rule 11)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const world = async () => {
    const scope = await newScope(server);
    const a = (await rseWithProtocols(server)).rse;
    const b = (await rseWithProtocols(server)).rse;
    await aDatasetOverHttp(server, scope, 'ds', [
      { name: 'f1', at: a },
      { name: 'f2', at: a },
    ]);
    return { scope, a, b };
  };
  const addRule = (body: object) => server.root('POST', '/rules/', { body });

  it('answers more copies than RSEs with 409 InsufficientTargetRSEs, in headers and body (rule 11)', async () => {
    const { scope, a, b } = await world();
    const response = await addRule({ dids: [{ scope, name: 'ds' }], copies: 3, rse_expression: `${a}|${b}` });
    expectError(
      response,
      409,
      'InsufficientTargetRSEs',
      /^Target RSE set not sufficient for number of copies\. \(3 copies requested, RSE set size 2\)$/,
    );
    expect(response.headers['exceptionmessage']).to.equal(
      'Target RSE set not sufficient for number of copies. (3 copies requested, RSE set size 2)',
    );
  });

  it('answers an expression selecting no RSE with 409 InvalidRSEExpression (rule 11)', async () => {
    const { scope } = await world();
    expectError(
      await addRule({ dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: 'NO_SUCH_SITE_ANYWHERE' }),
      409,
      'InvalidRSEExpression',
      /^RSE Expression resulted in an empty set\.$/,
    );
  });

  it('answers an expression that does not parse with 409 InvalidRSEExpression', async () => {
    const { scope, a } = await world();
    expectError(
      await addRule({ dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: `(${a}|` }),
      409,
      'InvalidRSEExpression',
      /parentheses/,
    );
  });

  it('refuses zero copies (rule 11)', async () => {
    const { scope, b } = await world();
    const response = await addRule({ dids: [{ scope, name: 'ds' }], copies: 0, rse_expression: b });
    expect(response.headers['exceptionclass']).to.equal('InvalidValueForKey');
    expect(response.status).to.equal(409);
  });

  it('refuses a second rule with the same DID, account, expression and copies with 409 DuplicateRule (rule 11)', async () => {
    const { scope, b } = await world();
    await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b });
    expectError(await addRule({ dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b }), 409, 'DuplicateRule');
  });

  it('takes the same DID and expression again with another number of copies (rule 11)', async () => {
    const { scope, a, b } = await world();
    await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: `${a}|${b}` });
    await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 2, rse_expression: `${a}|${b}` });
  });
});

describe('API: updating a rule (PUT /rules/{id})', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const world = async () => {
    const scope = await newScope(server);
    const a = (await rseWithProtocols(server)).rse;
    const b = (await rseWithProtocols(server)).rse;
    const c = (await rseWithProtocols(server)).rse;
    await aDatasetOverHttp(server, scope, 'ds', [
      { name: 'f1', at: a },
      { name: 'f2', at: a },
    ]);
    return { scope, a, b, c };
  };
  const update = (ruleId: string, options: object, token?: string) =>
    server.call('PUT', `/rules/${ruleId}`, { body: { options }, token: token ?? server.rootToken });
  const replicatingRule = async () => {
    const world_ = await world();
    return {
      ...world_,
      ruleId: await ruleOverHttp(server, {
        dids: [{ scope: world_.scope, name: 'ds' }],
        copies: 1,
        rse_expression: world_.b,
      }),
    };
  };

  it('sets the expiry from a lifetime in seconds', async () => {
    const { ruleId } = await replicatingRule();
    expectStatus(await update(ruleId, { lifetime: 7200 }), 200);
    expect(secondsFromNow((await ruleJsonOverHttp(server, ruleId)).expires_at)).to.be.within(7190, 7210);
  });

  it('clears the expiry with a null lifetime', async () => {
    const { scope, b } = await world();
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: b,
      lifetime: 3600,
    });
    expectStatus(await update(ruleId, { lifetime: null }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ expires_at: null });
  });

  it('locks a rule, which then cannot be deleted (rule 20)', async () => {
    const { ruleId } = await replicatingRule();
    expectStatus(await update(ruleId, { locked: true }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ locked: true });
    expectError(await server.root('DELETE', `/rules/${ruleId}`, { body: {} }), 401, 'UnsupportedOperation', /locked/);
  });

  it('unlocks a rule, which then can be deleted (rule 20)', async () => {
    const { scope, b } = await world();
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: b,
      locked: true,
    });
    expectStatus(await update(ruleId, { locked: false }), 200);
    expectStatus(await server.root('DELETE', `/rules/${ruleId}`, { body: {} }), 200);
    expect(secondsFromNow((await ruleJsonOverHttp(server, ruleId)).expires_at)).to.be.within(3590, 3610);
  });

  it('sets a rule STUCK, with the time it became so, for the repairer', async () => {
    const { ruleId } = await replicatingRule();
    expectStatus(await update(ruleId, { state: 'STUCK' }), 200);
    const rule = await ruleJsonOverHttp(server, ruleId);
    expect(rule).to.include({ state: 'STUCK' });
    expect(secondsFromNow(rule.stuck_at)).to.be.within(-10, 1);
  });

  it('suspends a rule, case-insensitively, and analyses it as SUSPENDED', async () => {
    const { ruleId } = await replicatingRule();
    expectStatus(await update(ruleId, { state: 'suspended' }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'SUSPENDED' });
    expect(expectStatus(await server.root('GET', `/rules/${ruleId}/analysis`), 200).json()).to.deep.equal({
      rule_error: 'This replication rule is SUSPENDED',
      transfers: [],
    });
  });

  it('resumes a SUSPENDED rule by setting it STUCK', async () => {
    const { ruleId } = await replicatingRule();
    expectStatus(await update(ruleId, { state: 'SUSPENDED' }), 200);
    expectStatus(await update(ruleId, { state: 'STUCK' }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'STUCK' });
  });

  it('ignores any other state silently, as Rucio does', async () => {
    const { ruleId } = await replicatingRule();
    expectStatus(await update(ruleId, { state: 'OK' }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'REPLICATING' });
  });

  it('changes the priority', async () => {
    const { ruleId } = await replicatingRule();
    expectStatus(await update(ruleId, { priority: 5 }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ priority: 5 });
  });

  it('refuses a priority outside 0..5 with 409 InputValidationError', async () => {
    const { ruleId } = await replicatingRule();
    expectError(await update(ruleId, { priority: 9 }), 409, 'InputValidationError');
  });

  it('sets the comment, activity, end of life, meta and purge_replicas', async () => {
    const { ruleId } = await replicatingRule();
    const options = {
      comment: 'for the analysis',
      activity: 'Express',
      eol_at: '2027-01-01T00:00:00',
      purge_replicas: true,
      meta: { project: 'p1' },
    };
    expectStatus(await update(ruleId, options), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({
      comments: 'for the analysis',
      activity: 'Express',
      eol_at: 'Fri, 01 Jan 2027 00:00:00 UTC',
      purge_replicas: true,
      meta: '{"project":"p1"}',
    });
  });

  it('refuses an end of life that is not a date with 409 InputValidationError', async () => {
    const { ruleId } = await replicatingRule();
    expectError(await update(ruleId, { eol_at: 'next spring' }), 409, 'InputValidationError', /not a date/);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ eol_at: null });
  });

  it('refuses an unknown option with 409 InputValidationError', async () => {
    const { ruleId } = await replicatingRule();
    expectError(
      await update(ruleId, { colour: 'red' }),
      409,
      'InputValidationError',
      /colour is not a valid option to set/,
    );
  });

  it('refuses a plain user with 401 AccessDenied', async () => {
    const { ruleId } = await replicatingRule();
    const user = await server.createUser();
    expectError(await update(ruleId, { locked: true }, user.token), 401, 'AccessDenied');
  });

  it('answers an unknown rule with 404 RuleNotFound', async () => {
    expectError(await update('f'.repeat(32), { locked: true }), 404, 'RuleNotFound');
  });

  it('links a child rule on the same DID, which keeps its parent from being deleted', async () => {
    const { scope, b, c } = await world();
    const parent = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b });
    const child = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: c });
    expectStatus(await update(parent, { child_rule_id: child }), 200);
    expect(await ruleJsonOverHttp(server, parent)).to.include({ child_rule_id: child });
    expectError(await server.root('DELETE', `/rules/${parent}`, { body: {} }), 401, 'UnsupportedOperation', /child/);
  });

  it('records no link to a child that is OK already', async () => {
    const { scope, a, b } = await world();
    const parent = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b });
    const child = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    expectStatus(await update(parent, { child_rule_id: child }), 200);
    expect(await ruleJsonOverHttp(server, parent)).to.include({ child_rule_id: null });
  });

  it('refuses a child rule on another DID with 409 InputValidationError', async () => {
    const { scope, a, b } = await world();
    await aDatasetOverHttp(server, scope, 'other', [{ name: 'g1', at: a }]);
    const parent = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b });
    const child = await ruleOverHttp(server, { dids: [{ scope, name: 'other' }], copies: 1, rse_expression: b });
    expectError(await update(parent, { child_rule_id: child }), 409, 'InputValidationError', /same dataset/);
  });

  it('dissolves a child link with a null child_rule_id, clearing the expiry', async () => {
    const { scope, b, c } = await world();
    const parent = await ruleOverHttp(server, {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: b,
      lifetime: 3600,
    });
    const child = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: c });
    expectStatus(await update(parent, { child_rule_id: child }), 200);
    expectStatus(await update(parent, { child_rule_id: null }), 200);
    expect(await ruleJsonOverHttp(server, parent)).to.include({ child_rule_id: null, expires_at: null });
  });

  it('refuses to dissolve a child link that does not exist with 409 InputValidationError', async () => {
    const { ruleId } = await replicatingRule();
    expectError(await update(ruleId, { child_rule_id: null }), 409, 'InputValidationError');
  });

  it('boosts a STUCK rule whose source has arrived: the repairer retries its locks at once (rule 18)', async () => {
    const { scope, b, c } = await world();
    // No copy on the only allowed source: the locks are STUCK, and so is the rule.
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: b,
      source_replica_expression: c,
    });
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({
      state: 'STUCK',
      error: 'MissingSourceReplica',
      locks_stuck_cnt: 2,
    });
    expectStatus(
      await server.root('POST', '/replicas', {
        body: {
          rse: c,
          files: [
            { scope, name: 'f1', bytes: 100, adler32: '0cc737eb' },
            { scope, name: 'f2', bytes: 100, adler32: '0cc737eb' },
          ],
        },
      }),
      201,
    );
    expectStatus(await update(ruleId, { boost_rule: true }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({
      state: 'REPLICATING',
      locks_replicating_cnt: 2,
      locks_stuck_cnt: 0,
    });
    expect(expectStatus(await server.root('GET', `/requests/${scope}/f1/${b}`), 200).json()).to.include({
      state: 'QUEUED',
      retry_count: 1,
    });
  });

  it("leaves a boosted rule STUCK while its source expression still finds no copy, as Rucio's repairer does (rule 18)", async () => {
    const { scope, b, c } = await world();
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: b,
      source_replica_expression: c,
    });
    expectStatus(await update(ruleId, { boost_rule: true }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'STUCK', locks_stuck_cnt: 2 });
  });
});

describe('API: approving and denying a rule (rule 16)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const waiting = async () => {
    const scope = await newScope(server);
    const a = (await rseWithProtocols(server)).rse;
    const b = (await rseWithProtocols(server)).rse;
    await aDatasetOverHttp(server, scope, 'ds', [{ name: 'f1', at: a }]);
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: b,
      ask_approval: true,
    });
    return { scope, a, b, ruleId };
  };
  const update = (ruleId: string, options: object, token?: string) =>
    server.call('PUT', `/rules/${ruleId}`, { body: { options }, token: token ?? server.rootToken });

  it('keeps a rule asking for approval WAITING_APPROVAL, without locks', async () => {
    const { ruleId } = await waiting();
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'WAITING_APPROVAL', locks_replicating_cnt: 0 });
    expect(await locksOverHttp(server, ruleId)).to.deep.equal([]);
  });

  it('approves through PUT with approve=true: the rule goes to the injector', async () => {
    const { ruleId } = await waiting();
    expectStatus(await update(ruleId, { approve: true }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'INJECT' });
  });

  it('denies through PUT with approve=false and a comment: the rule is gone from its DID', async () => {
    const { scope, ruleId } = await waiting();
    expectStatus(await update(ruleId, { approve: false, comment: 'not now' }), 200);
    expectError(await server.root('GET', `/rules/${ruleId}`), 404, 'RuleNotFound');
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/rules')), 200).lines()).to.deep.equal([]);
    const history = expectStatus(await server.root('GET', `/rules/${scope}/ds/history`), 200).lines<{
      state: string;
      cause: string;
    }>();
    expect(history.at(-1)).to.include({ state: 'DELETED', cause: 'denied by root' });
  });

  it('lets only admins approve, with 401 AccessDenied', async () => {
    const { ruleId } = await waiting();
    const user = await server.createUser();
    expectError(await update(ruleId, { approve: true }, user.token), 401, 'AccessDenied', /approve\/deny/);
  });

  it('does nothing when approving a rule that is not waiting', async () => {
    const { scope, a, b } = await waiting();
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: `${a}|${b}`,
    });
    expectStatus(await update(ruleId, { approve: true }), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'OK' });
  });
});

describe('API: reducing and moving a rule', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  /** ds (f1, f2) with replicas on both A and B; an empty C. */
  const world = async () => {
    const scope = await newScope(server);
    const a = (await rseWithProtocols(server)).rse;
    const b = (await rseWithProtocols(server)).rse;
    const c = (await rseWithProtocols(server)).rse;
    await aDatasetOverHttp(server, scope, 'ds', [
      { name: 'f1', at: a },
      { name: 'f2', at: a },
    ]);
    expectStatus(
      await server.root('POST', '/replicas', {
        body: { rse: b, files: ['f1', 'f2'].map((name) => ({ scope, name, bytes: 100, adler32: '0cc737eb' })) },
      }),
      201,
    );
    return { scope, a, b, c };
  };
  const post = (ruleId: string, verb: 'reduce' | 'move', body: object) =>
    server.root('POST', `/rules/${ruleId}/${verb}`, { body });

  it('reduces an OK rule to fewer copies away from the excluded RSEs, answering 201 with the new id, and deletes the old rule', async () => {
    const { scope, a, b } = await world();
    const old = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 2, rse_expression: `${a}|${b}` });
    const response = expectStatus(await post(old, 'reduce', { copies: 1, exclude_expression: b }), 201);
    const [reduced] = JSON.parse(response.text) as string[];
    expect(reduced).to.match(/^[0-9a-f]{32}$/);
    expectError(await server.root('GET', `/rules/${old}`), 404, 'RuleNotFound');
    expect(await ruleJsonOverHttp(server, reduced!)).to.include({
      state: 'OK',
      copies: 1,
      rse_expression: `(${a}|${b})\\(${b})`,
    });
    expect(await locksOverHttp(server, reduced!)).to.deep.equal([
      ['f1', a, 'OK'],
      ['f2', a, 'OK'],
    ]);
  });

  it('refuses to reduce a rule to as many copies with 409 RuleReplaceFailed', async () => {
    const { scope, a, b } = await world();
    const old = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 2, rse_expression: `${a}|${b}` });
    expectError(await post(old, 'reduce', { copies: 2 }), 409, 'RuleReplaceFailed');
  });

  it('refuses to reduce a rule that is not OK with 409 RuleReplaceFailed', async () => {
    const { scope, a, c } = await world();
    const old = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 2, rse_expression: `${a}|${c}` });
    expectError(await post(old, 'reduce', { copies: 1, exclude_expression: a }), 409, 'RuleReplaceFailed');
    expect(await ruleJsonOverHttp(server, old)).to.include({ copies: 2 });
  });

  it('answers the reduction of an unknown rule with 404 RuleNotFound', async () => {
    expectError(await post('e'.repeat(32), 'reduce', { copies: 1 }), 404, 'RuleNotFound');
  });

  it('moves a rule: 201 with the new id, the new rule replicating, the old one expiring with it as its child', async () => {
    const { scope, a, c } = await world();
    const old = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    const [moved] = JSON.parse(expectStatus(await post(old, 'move', { rse_expression: c }), 201).text) as string[];
    expect(await ruleJsonOverHttp(server, moved!)).to.include({
      state: 'REPLICATING',
      rse_expression: c,
      locks_replicating_cnt: 2,
    });
    const parent = await ruleJsonOverHttp(server, old);
    expect(parent).to.include({ child_rule_id: moved });
    expect(secondsFromNow(parent.expires_at)).to.be.below(1);
    expect(await datasetLocksOverHttp(server, scope, 'ds')).to.deep.equal(
      [
        [a, 'OK'],
        [c, 'REPLICATING'],
      ].sort(),
    );
  });

  it("moves a rule with an override of the new rule's options", async () => {
    const { scope, a, c } = await world();
    const old = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    const [moved] = JSON.parse(
      expectStatus(
        await post(old, 'move', { rse_expression: c, override: { activity: 'Express', comment: 'moved' } }),
        201,
      ).text,
    ) as string[];
    expect(await ruleJsonOverHttp(server, moved!)).to.include({ activity: 'Express', comments: 'moved' });
  });

  it('leaves no link when the moved rule is OK at once: the old rule simply expires', async () => {
    const { scope, a, b } = await world();
    const old = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    const [moved] = JSON.parse(expectStatus(await post(old, 'move', { rse_expression: b }), 201).text) as string[];
    expect(await ruleJsonOverHttp(server, moved!)).to.include({ state: 'OK' });
    expect(await ruleJsonOverHttp(server, old)).to.include({ child_rule_id: null });
  });

  it('moves a rule with notify and subscription_id overridden, as move_rule allows', async () => {
    const { scope, a, c } = await world();
    const old = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    const [moved] = JSON.parse(
      expectStatus(
        await post(old, 'move', { rse_expression: c, override: { notify: 'Y', subscription_id: 'abc' } }),
        201,
      ).text,
    ) as string[];
    expect(await ruleJsonOverHttp(server, moved!)).to.include({ notification: 'YES', subscription_id: 'abc' });
  });

  it('refuses to override the DIDs or an option move_rule does not know, changing nothing', async () => {
    const { scope, a, c } = await world();
    const old = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    expectError(
      await post(old, 'move', { rse_expression: c, override: { dids: [{ scope, name: 'ds' }] } }),
      409,
      'UnsupportedOperation',
      /Not allowed to override option dids/,
    );
    expectError(
      await post(old, 'move', { rse_expression: c, override: { priority: 1 } }),
      409,
      'UnsupportedOperation',
      /Non-valid override option priority/,
    );
    expectError(await post(old, 'move', { rse_expression: c, override: { copies: 'two' } }), 400, 'InvalidObject');
    expect(await ruleJsonOverHttp(server, old)).to.include({ child_rule_id: null, state: 'OK' });
  });

  it('refuses to move a rule that has a child with 409 RuleReplaceFailed', async () => {
    const { scope, a, c } = await world();
    const old = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    expectStatus(await post(old, 'move', { rse_expression: c }), 201);
    expectError(await post(old, 'move', { rse_expression: c }), 409, 'RuleReplaceFailed');
  });
});

describe('API: reading rules and locks', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  const world = async () => {
    const scope = await newScope(server);
    const a = (await rseWithProtocols(server)).rse;
    const b = (await rseWithProtocols(server)).rse;
    const c = (await rseWithProtocols(server)).rse;
    await aDatasetOverHttp(server, scope, 'ds', [
      { name: 'f1', at: a },
      { name: 'f2', at: a },
    ]);
    return { scope, a, b, c };
  };

  it("analyses an OK and a REPLICATING rule with Rucio's sentences", async () => {
    const { scope, a, b } = await world();
    const ok = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    const replicating = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b });
    expect(expectStatus(await server.root('GET', `/rules/${ok}/analysis`), 200).json()).to.deep.equal({
      rule_error: 'This replication rule is OK',
      transfers: [],
    });
    expect(expectStatus(await server.root('GET', `/rules/${replicating}/analysis`), 200).json()).to.deep.equal({
      rule_error: 'This replication rule is currently REPLICATING',
      transfers: [],
    });
  });

  it('analyses a STUCK rule lock by lock: attempts, last error and where the file could come from', async () => {
    const { scope, a, b, c } = await world();
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: b,
      source_replica_expression: c,
    });
    const analysis = expectStatus(await server.root('GET', `/rules/${ruleId}/analysis`), 200).json<{
      rule_error: string;
      transfers: Record<string, unknown>[];
    }>();
    expect(analysis.rule_error).to.equal('MissingSourceReplica');
    const bId = expectStatus(await server.root('GET', `/rses/${b}`), 200).json<{ id: string }>().id;
    expect(analysis.transfers.map((transfer) => transfer.name).sort()).to.deep.equal(['f1', 'f2']);
    expect(analysis.transfers[0]).to.deep.include({
      scope,
      rse: b,
      rse_id: bId,
      attempts: 0,
      last_error: null,
      last_source: null,
      last_time: null,
      sources: [[a, true]],
    });
  });

  it('answers the analysis of an unknown rule with 404 RuleNotFound', async () => {
    expectError(await server.root('GET', `/rules/${'d'.repeat(32)}/analysis`), 404, 'RuleNotFound');
  });

  it("lists a rule's replica locks with scope, name, RSE, state and rule id", async () => {
    const { scope, b } = await world();
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b });
    const bId = expectStatus(await server.root('GET', `/rses/${b}`), 200).json<{ id: string }>().id;
    const locks = expectStatus(await server.root('GET', `/rules/${ruleId}/locks`), 200).lines<
      Record<string, unknown>
    >();
    expect(locks.map((lock) => lock.name).sort()).to.deep.equal(['f1', 'f2']);
    expect(locks[0]).to.deep.equal({
      scope,
      name: locks[0]!.name,
      rse_id: bId,
      rse: b,
      state: 'REPLICATING',
      rule_id: ruleId,
    });
  });

  it('lists the rules an account owns, with filters, and none for an account without rules', async () => {
    const { scope, a, b } = await world();
    const user = await server.createUser();
    await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    const mine = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b });
    const rules = expectStatus(
      await server.root('GET', `/accounts/root/rules?scope=${scope}&rse_expression=${b}`),
      200,
    ).lines<{ id: string; account: string; bytes: number }>();
    expect(rules.map((rule) => [rule.id, rule.account, rule.bytes])).to.deep.equal([[mine, 'root', 200]]);
    expect(expectStatus(await server.root('GET', `/accounts/${user.account}/rules`), 200).lines()).to.deep.equal([]);
  });

  it('lists the rules on a DID, and answers a DID that does not exist with 404', async () => {
    const { scope, b } = await world();
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b });
    expect(
      expectStatus(await server.root('GET', path(scope, 'ds', '/rules')), 200)
        .lines<{ id: string }>()
        .map((rule) => rule.id),
    ).to.deep.equal([ruleId]);
    expectError(await server.root('GET', path(scope, 'nothing', '/rules')), 404, 'DataIdentifierNotFound');
  });

  it('lists the rules holding a lock on a file through its dataset (associated rules)', async () => {
    const { scope, b, c } = await world();
    const onB = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b });
    const onC = await ruleOverHttp(server, { dids: [{ scope, name: 'f1' }], copies: 1, rse_expression: c });
    expect(
      expectStatus(await server.root('GET', path(scope, 'f1', '/associated_rules')), 200)
        .lines<{ id: string }>()
        .map((rule) => rule.id)
        .sort(),
    ).to.deep.equal([onB, onC].sort());
    expect(
      expectStatus(await server.root('GET', path(scope, 'f2', '/associated_rules')), 200)
        .lines<{ id: string }>()
        .map((rule) => rule.id),
    ).to.deep.equal([onB]);
  });

  it('lists the dataset locks of every dataset below a container in bulk', async () => {
    const { scope, a, b } = await world();
    await aDatasetOverHttp(server, scope, 'ds2', [{ name: 'g1', at: a }]);
    expectStatus(await server.root('POST', path(scope, 'cont'), { body: { type: 'CONTAINER' } }), 201);
    expectStatus(
      await server.root('POST', path(scope, 'cont', '/dids'), {
        body: {
          dids: [
            { scope, name: 'ds' },
            { scope, name: 'ds2' },
          ],
        },
      }),
      201,
    );
    await ruleOverHttp(server, { dids: [{ scope, name: 'cont' }], copies: 1, rse_expression: b });
    const locks = expectStatus(
      await server.root('POST', '/locks/bulk_locks_for_dids', {
        body: { dids: [{ scope, name: 'cont', type: 'container' }] },
      }),
      200,
    ).lines<{ name: string; rse: string }>();
    expect(locks.map((lock) => [lock.name, lock.rse]).sort()).to.deep.equal([
      ['ds', b],
      ['ds2', b],
    ]);
  });

  it('lists the dataset locks on an RSE', async () => {
    const { scope, b } = await world();
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b });
    const locks = expectStatus(await server.root('GET', `/locks/${b}?did_type=dataset`), 200).lines<
      Record<string, unknown>
    >();
    expect(locks).to.have.length(1);
    expect(locks[0]).to.include({
      scope,
      name: 'ds',
      rse: b,
      rule_id: ruleId,
      account: 'root',
      state: 'REPLICATING',
      length: null,
      bytes: null,
      accessed_at: null,
    });
  });

  it('soft-deletes a rule asked to purge its replicas: it expires within the hour with purge_replicas set (rule 20)', async () => {
    const { scope, a } = await world();
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    expectStatus(await server.root('DELETE', `/rules/${ruleId}`, { body: { purge_replicas: true } }), 200);
    const rule = await ruleJsonOverHttp(server, ruleId);
    expect(rule).to.include({ purge_replicas: true, state: 'OK' });
    expect(secondsFromNow(rule.expires_at)).to.be.within(3590, 3610);
  });

  it('refuses a DELETE without a body with 400, as Rucio requires one', async () => {
    const { scope, a } = await world();
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    expect((await server.root('DELETE', `/rules/${ruleId}`)).status).to.equal(400);
  });

  it('lets only admins delete a rule, with 401 AccessDenied', async () => {
    const { scope, a } = await world();
    const user = await server.createUser();
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a });
    expectError(
      await server.call('DELETE', `/rules/${ruleId}`, { body: {}, token: user.token }),
      401,
      'AccessDenied',
      /can not remove this replication rule/,
    );
  });
});
