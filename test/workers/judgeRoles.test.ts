import { expect } from 'chai';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { newScope, path } from '../support/dids.ts';
import { addReplicas, fileItem, rseWithProtocols } from '../api/replicaSupport.ts';

/**
 * The judge as a user meets it: a server with its workers running, and rules that change without
 * anyone asking.
 */
describe('Roles: the judge at work (rules 16, 19, 20)', function () {
  this.timeout(30_000);
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ roles: { workers: true } });
    expectStatus(await server.root('POST', '/config', { body: { 'judge-cleaner': { interval: 1 }, 'judge-repairer': { interval: 1, delta: 0 } } }), 201);
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
    expectStatus(await server.root('POST', path(scope, dataset, '/dids'), { body: { dids: [{ scope, name: 'f1' }, { scope, name: 'f2' }] } }), 201);
    return { scope, dataset, a, b };
  };
  const addRule = async (body: object) => (JSON.parse(expectStatus(await server.root('POST', '/rules/', { body }), 201).text) as string[])[0]!;
  const ruleOf = async (ruleId: string) => (await server.root('GET', `/rules/${ruleId}`)).json<Record<string, unknown>>();

  it('injects an asynchronous rule without anyone acting', async () => {
    const { scope, dataset, b } = await world();
    const ruleId = await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, asynchronous: true });
    await eventually(async () => (await ruleOf(ruleId)).state === 'REPLICATING', 10_000, 'the rule injected');
    expect(await ruleOf(ruleId)).to.include({ locks_replicating_cnt: 2 });
  });

  it('locks a file attached to a dataset under a rule', async () => {
    const { scope, dataset, a, b } = await world();
    const ruleId = await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse });
    await addReplicas(server, a.rse, [fileItem(scope, 'f3')]);
    expectStatus(await server.root('POST', path(scope, dataset, '/dids'), { body: { dids: [{ scope, name: 'f3' }] } }), 201);
    await eventually(async () => (await ruleOf(ruleId)).locks_replicating_cnt === 3, 10_000, 'the new file locked');
    expectStatus(await server.root('GET', `/requests/${scope}/f3/${b.rse}`), 200);
  });

  it('deletes a rule once it expires, and its locks with it', async () => {
    const { scope, dataset, b } = await world();
    const ruleId = await addRule({ dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, lifetime: 1 });
    await eventually(async () => (await server.root('GET', `/rules/${ruleId}`)).status === 404, 15_000, 'the expired rule deleted');
    expectError(await server.root('GET', `/rules/${ruleId}`), 404, 'RuleNotFound');
    expect(expectStatus(await server.root('GET', `/rules/${ruleId}/locks`), 200).text).to.equal('');
    expectError(await server.root('GET', `/requests/${scope}/f1/${b.rse}`), 404, 'RequestNotFound');
  });
});
