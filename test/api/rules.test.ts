import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { newScope, path } from '../support/dids.ts';
import { addReplicas, fileItem, rseWithProtocols } from './replicaSupport.ts';

/**
 * The rules area over HTTP, as a user of the Python client sees it: a dataset with its replicas on
 * one RSE, and rules to another.
 */
describe('API: replication rules', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  /** A dataset of two files with replicas on a new RSE A, and an empty RSE B. */
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
  const addRule = (body: object, token?: string) =>
    server.call('POST', '/rules/', { body, token: token ?? server.rootToken });

  it('answers a new rule with its id, as a JSON list under the text content type', async () => {
    const { scope, dataset, b } = await world();
    const response = expectStatus(
      await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, account: 'root' }),
      201,
    );
    expect(response.headers['content-type']).to.equal('text/html; charset=utf-8');
    const [ruleId] = JSON.parse(response.text) as string[];
    expect(ruleId).to.match(/^[0-9a-f]{32}$/);
  });

  it('makes a rule on a dataset whose files are elsewhere REPLICATING, with locks and queued requests (rule 14)', async () => {
    const { scope, dataset, b } = await world();
    const [ruleId] = JSON.parse(
      expectStatus(
        await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, account: 'root' }),
        201,
      ).text,
    ) as string[];
    const rule = expectStatus(await server.root('GET', `/rules/${ruleId}`), 200).json<Record<string, unknown>>();
    expectError(
      await server.root('GET', `/rules/${ruleId}`, { body: { estimate_ttc: true } }),
      500,
      'NotImplemented',
      /^estimate_ttc is not implemented$/,
    );
    expectStatus(await server.root('GET', `/rules/${ruleId}`, { body: { estimate_ttc: false } }), 200);
    expect(rule).to.include({
      state: 'REPLICATING',
      locks_replicating_cnt: 2,
      locks_ok_cnt: 0,
      copies: 1,
      rse_expression: b.rse,
      grouping: 'DATASET',
      account: 'root',
    });
    expect(rule.created_at).to.match(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} UTC$/);
    const locks = expectStatus(await server.root('GET', `/rules/${ruleId}/locks`), 200).lines<{
      name: string;
      state: string;
      rse: string;
    }>();
    expect(locks.map((lock) => [lock.name, lock.state, lock.rse]).sort()).to.deep.equal([
      ['f1', 'REPLICATING', b.rse],
      ['f2', 'REPLICATING', b.rse],
    ]);
    const request = expectStatus(await server.root('GET', `/requests/${scope}/f1/${b.rse}`), 200).json<
      Record<string, unknown>
    >();
    expect(request).to.include({
      state: 'QUEUED',
      request_type: 'TRANSFER',
      rule_id: ruleId,
      dest_rse: b.rse,
      scope,
      name: 'f1',
    });
    const replicas = expectStatus(
      await server.root('POST', '/replicas/list', { body: { dids: [{ scope, name: 'f1' }], all_states: true } }),
      200,
    ).lines<{ states: Record<string, string> }>();
    expect(replicas[0]!.states[b.rse]).to.equal('COPYING');
  });

  it('makes a rule on data already at the RSE OK at once (rule 13)', async () => {
    const { scope, dataset, a } = await world();
    const [ruleId] = JSON.parse(
      expectStatus(await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: a.rse }), 201).text,
    ) as string[];
    expect(expectStatus(await server.root('GET', `/rules/${ruleId}`), 200).json()).to.include({
      state: 'OK',
      locks_ok_cnt: 2,
    });
    expectError(await server.root('GET', `/requests/${scope}/f1/${a.rse}`), 404, 'RequestNotFound');
  });

  it('refuses too many copies, a bad expression and a duplicate with 409 (rule 11)', async () => {
    const { scope, dataset, b } = await world();
    const did = { scope, name: dataset };
    expectError(await addRule({ dids: [did], copies: 2, rse_expression: b.rse }), 409, 'InsufficientTargetRSEs');
    expectError(
      await addRule({ dids: [did], copies: 1, rse_expression: 'NO_SUCH_RSE_ANYWHERE' }),
      409,
      'InvalidRSEExpression',
    );
    expectError(await addRule({ dids: [did], copies: 1, rse_expression: '(((' }), 409, 'InvalidRSEExpression');
    expectStatus(await addRule({ dids: [did], copies: 1, rse_expression: b.rse }), 201);
    expectError(await addRule({ dids: [did], copies: 1, rse_expression: b.rse }), 409, 'DuplicateRule');
    expectError(
      await addRule({ dids: [did], copies: 1, rse_expression: b.rse, grouping: 'SOMETIMES' }),
      409,
      'InvalidObject',
    );
    expectError(
      await addRule({ dids: [did], copies: 1, rse_expression: b.rse, grouping: 'dataset' }),
      409,
      'InvalidObject',
      /^Problem validating rule: grouping: Invalid option: expected one of "ALL"\|"DATASET"\|"NONE"$/,
    );
    expectError(
      await addRule({ dids: [{ scope, name: 'nothing-here' }], copies: 1, rse_expression: b.rse }),
      404,
      'DataIdentifierNotFound',
    );
  });

  it('refuses a user without quota on the target with InsufficientAccountLimit (rule 12)', async () => {
    const { scope, dataset, b } = await world();
    const user = await server.createUser();
    expectError(
      await addRule(
        { dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, account: user.account },
        user.token,
      ),
      409,
      'InsufficientAccountLimit',
    );
    expectStatus(
      await server.root('POST', `/accountlimits/local/${user.account}/${b.rse}`, { body: { bytes: 10_000 } }),
      201,
    );
    expectStatus(
      await addRule(
        { dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, account: user.account },
        user.token,
      ),
      201,
    );
    const usage = expectStatus(await server.root('GET', `/accounts/${user.account}/usage/local/${b.rse}`), 200).lines<{
      bytes: number;
      files: number;
    }>();
    expect(usage[0]).to.include({ bytes: 200, files: 2 });
  });

  it('puts an asynchronous rule in INJECT (rule 16)', async () => {
    const { scope, dataset, b } = await world();
    const [ruleId] = JSON.parse(
      expectStatus(
        await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, asynchronous: true }),
        201,
      ).text,
    ) as string[];
    expect(expectStatus(await server.root('GET', `/rules/${ruleId}`), 200).json()).to.include({
      state: 'INJECT',
      locks_replicating_cnt: 0,
    });
  });

  it('lists rules by DID, by account and by filter, and the rules locking a file', async () => {
    const { scope, dataset, a, b } = await world();
    const [onB] = JSON.parse(
      expectStatus(await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse }), 201).text,
    ) as string[];
    const [onA] = JSON.parse(
      expectStatus(await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: a.rse }), 201).text,
    ) as string[];
    const ofDid = expectStatus(await server.root('GET', path(scope, dataset, '/rules')), 200).lines<{
      id: string;
      bytes: number;
    }>();
    expect(ofDid.map((rule) => rule.id).sort()).to.deep.equal([onA, onB].sort());
    expect(ofDid[0]!.bytes).to.equal(200);
    const ok = expectStatus(await server.root('GET', `/rules/?scope=${scope}&state=O`), 200).lines<{ id: string }>();
    expect(ok.map((rule) => rule.id)).to.deep.equal([onA]);
    const mine = expectStatus(await server.root('GET', `/accounts/root/rules?scope=${scope}`), 200).lines<{
      id: string;
    }>();
    expect(mine).to.have.length(2);
    const associated = expectStatus(await server.root('GET', path(scope, 'f1', '/associated_rules')), 200).lines<{
      id: string;
    }>();
    expect(associated.map((rule) => rule.id).sort()).to.deep.equal([onA, onB].sort());
  });

  it('answers the rules locking a file with the bytes of the DID each rule is on, as list_associated_rules_for_file does', async () => {
    const { scope, dataset, b } = await world();
    const [ruleId] = JSON.parse(
      expectStatus(await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse }), 201).text,
    ) as string[];
    const associated = expectStatus(await server.root('GET', path(scope, 'f1', '/associated_rules')), 200).lines<{
      id: string;
      name: string;
      bytes: number;
    }>();
    // The dataset's two files of 100 bytes, not the file's own size: `rucio list-rules --file` prints it.
    expect(associated).to.have.length(1);
    expect(associated[0]).to.include({ id: ruleId, name: dataset, bytes: 200 });
  });

  it('updates, soft-deletes, and refuses to delete a locked rule with 401 (rule 20)', async () => {
    const { scope, dataset, b } = await world();
    const [ruleId] = JSON.parse(
      expectStatus(await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse }), 201).text,
    ) as string[];
    expectStatus(
      await server.root('PUT', `/rules/${ruleId}`, { body: { options: { locked: true, comment: 'keep it' } } }),
      200,
    );
    expect(expectStatus(await server.root('GET', `/rules/${ruleId}`), 200).json()).to.include({
      locked: true,
      comments: 'keep it',
    });
    expectError(await server.root('DELETE', `/rules/${ruleId}`, { body: {} }), 401, 'UnsupportedOperation');
    expectError(
      await server.root('PUT', `/rules/${ruleId}`, { body: { options: { colour: 'red' } } }),
      409,
      'InputValidationError',
    );
    expectStatus(await server.root('PUT', `/rules/${ruleId}`, { body: { options: { locked: false } } }), 200);
    expectStatus(await server.root('DELETE', `/rules/${ruleId}`, { body: { purge_replicas: true } }), 200);
    const rule = expectStatus(await server.root('GET', `/rules/${ruleId}`), 200).json<{
      expires_at: string;
      purge_replicas: boolean;
    }>();
    expect(rule.purge_replicas).to.equal(true);
    expect(Date.parse(rule.expires_at.replace(' UTC', ' GMT')) - Date.now()).to.be.within(3_500_000, 3_610_000);
  });

  it("tells the history of a DID's rules with who did what", async () => {
    const { scope, dataset, b } = await world();
    const user = await server.createUser({ admin: true });
    const [ruleId] = JSON.parse(
      expectStatus(await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse }), 201).text,
    ) as string[];
    expectStatus(
      await server.call('PUT', `/rules/${ruleId}`, { body: { options: { state: 'SUSPENDED' } }, token: user.token }),
      200,
    );
    const history = expectStatus(await server.root('GET', `/rules/${scope}/${dataset}/history`), 200).lines<{
      state: string;
      by: string;
      rule_id: string;
    }>();
    expect(history.map((row) => [row.state, row.by])).to.deep.equal([
      ['REPLICATING', 'root'],
      ['SUSPENDED', user.account],
    ]);
    expect(expectStatus(await server.root('GET', `/rules/${ruleId}/analysis`), 200).json()).to.deep.equal({
      rule_error: 'This replication rule is SUSPENDED',
      transfers: [],
    });
  });

  it('records the creation row of the history with the locks the creation made, as Rucio writes it after apply_rule', async () => {
    const { scope, dataset, b } = await world();
    expectStatus(await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse }), 201);
    const [created] = expectStatus(await server.root('GET', `/rules/${scope}/${dataset}/history`), 200).lines<{
      state: string;
      locks_replicating_cnt: number;
      locks_ok_cnt: number;
    }>();
    expect(created).to.include({ state: 'REPLICATING', locks_ok_cnt: 0 });
    expect(created!.locks_replicating_cnt).to.be.greaterThan(0);
  });

  it('answers the shadowed GET /rules/{id}/history with 400, as Rucio does', async () => {
    expectError(await server.root('GET', `/rules/${'a'.repeat(32)}/history`), 400, 'ValueError');
    expectError(await server.root('GET', `/rules/${'a'.repeat(32)}`), 404, 'RuleNotFound');
  });
});

describe('API: locks', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('lists dataset locks by RSE, by dataset and in bulk, with did_type=dataset required', async () => {
    const scope = await newScope(server);
    const a = await rseWithProtocols(server);
    const b = await rseWithProtocols(server);
    expectStatus(await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET' } }), 201);
    await addReplicas(server, a.rse, [fileItem(scope, 'f1')]);
    expectStatus(
      await server.root('POST', path(scope, 'ds', '/dids'), { body: { dids: [{ scope, name: 'f1' }] } }),
      201,
    );
    const [ruleId] = JSON.parse(
      expectStatus(
        await server.root('POST', '/rules/', {
          body: { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: b.rse },
        }),
        201,
      ).text,
    ) as string[];
    const byRse = expectStatus(await server.root('GET', `/locks/${b.rse}?did_type=dataset`), 200).lines<
      Record<string, unknown>
    >();
    expect(byRse).to.have.length(1);
    expect(byRse[0]).to.include({
      scope,
      name: 'ds',
      rse: b.rse,
      rule_id: ruleId,
      state: 'REPLICATING',
      account: 'root',
    });
    expect(expectStatus(await server.root('GET', `/locks/${scope}/ds?did_type=dataset`), 200).lines()).to.have.length(
      1,
    );
    expect(
      expectStatus(
        await server.root('POST', '/locks/bulk_locks_for_dids', {
          body: { dids: [{ scope, name: 'ds', type: 'dataset' }] },
        }),
        200,
      ).lines(),
    ).to.have.length(1);
    expectError(await server.root('GET', `/locks/${b.rse}`), 400, 'ValueError', /Wrong did_type/);
    expectError(
      await server.root('POST', '/locks/bulk_locks_for_dids', { body: {} }),
      400,
      'ValueError',
      /Use "dids" keyword/,
    );
    // The dataset closed: its locks now carry its size.
    expectStatus(await server.root('PUT', path(scope, 'ds', '/status'), { body: { open: false } }), 200);
    expect(expectStatus(await server.root('GET', `/locks/${scope}/ds?did_type=dataset`), 200).lines()[0]).to.include({
      length: 1,
      bytes: 100,
    });
  });
});

describe('API: rules given with new DIDs', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('adds the rule in the same step as the dataset and its content', async () => {
    const scope = await newScope(server);
    const a = await rseWithProtocols(server);
    const b = await rseWithProtocols(server);
    const body = {
      type: 'DATASET',
      rse: a.rse,
      dids: [fileItem(scope, 'f1'), fileItem(scope, 'f2')],
      rules: [{ copies: 1, rse_expression: b.rse, account: 'root' }],
    };
    expectStatus(await server.root('POST', path(scope, 'ds'), { body }), 201);
    const [rule] = expectStatus(await server.root('GET', path(scope, 'ds', '/rules')), 200).lines<
      Record<string, unknown>
    >();
    expect(rule).to.include({ state: 'REPLICATING', locks_replicating_cnt: 2, rse_expression: b.rse });
  });

  it('creates nothing when a rule is refused', async () => {
    const scope = await newScope(server);
    const body = [
      { scope, name: 'ok-ds', type: 'DATASET' },
      { scope, name: 'ruled-ds', type: 'DATASET', rules: [{ copies: 1, rse_expression: 'NO_SUCH_RSE_HERE' }] },
    ];
    expectError(await server.root('POST', '/dids', { body }), 400, 'InvalidRSEExpression');
    expectError(await server.root('GET', path(scope, 'ok-ds')), 404, 'DataIdentifierNotFound');
  });

  it('holds an empty dataset on the chosen RSE, with a dataset lock and an OK rule', async () => {
    const scope = await newScope(server);
    const b = await rseWithProtocols(server);
    expectStatus(
      await server.root('POST', '/dids', {
        body: [{ scope, name: 'empty', type: 'DATASET', rules: [{ copies: 1, rse_expression: b.rse }] }],
      }),
      201,
    );
    const [rule] = expectStatus(await server.root('GET', path(scope, 'empty', '/rules')), 200).lines<
      Record<string, unknown>
    >();
    expect(rule).to.include({ state: 'OK' });
    expect(
      expectStatus(await server.root('GET', `/locks/${scope}/empty?did_type=dataset`), 200).lines(),
    ).to.have.length(1);
  });
});

describe('API: rule notifications (rule 17)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  it('records RULE_OK and DATASETLOCK_OK for a rule with notify=Y that is OK, listable by admins only', async () => {
    const scope = await newScope(server);
    const a = await rseWithProtocols(server);
    expectStatus(await server.root('POST', path(scope, 'ds'), { body: { type: 'DATASET' } }), 201);
    await addReplicas(server, a.rse, [fileItem(scope, 'f1')]);
    expectStatus(
      await server.root('POST', path(scope, 'ds', '/dids'), { body: { dids: [{ scope, name: 'f1' }] } }),
      201,
    );
    const [ruleId] = JSON.parse(
      expectStatus(
        await server.root('POST', '/rules/', {
          body: { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a.rse, notify: 'Y' },
        }),
        201,
      ).text,
    ) as string[];
    const messages = expectStatus(await server.root('GET', '/admin/messages'), 200).lines<{
      event_type: string;
      payload: { rule_id: string };
    }>();
    expect(
      messages.filter((message) => message.payload.rule_id === ruleId).map((message) => message.event_type),
    ).to.deep.equal(['RULE_OK', 'DATASETLOCK_OK']);
    const user = await server.createUser();
    expectError(await server.call('GET', '/admin/messages', { token: user.token }), 401, 'AccessDenied');
  });
});
