import { expect } from 'chai';
import { newScope } from '../support/dids.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { aDatasetOverHttp, locksOverHttp, ruleJsonOverHttp, ruleOverHttp } from '../support/rules.ts';
import { rseWithProtocols } from './replicaSupport.ts';

/**
 * Rucio's `update_replicas_states` (PUT /replicas) is where a finished transfer lands: a replica
 * set AVAILABLE turns every lock on it OK, one set UNAVAILABLE turns them STUCK, and the rules
 * follow (behaviour reference §2.1, §3.7).
 */
describe('API: replica states and the rules locking them (rules 17 and 18)', () => {
  let server: TestServer;
  before(async () => (server = await startTestServer()));
  after(async () => server.stop());

  /** ds (f1, f2) on A, under a rule to the empty B: REPLICATING. */
  const replicating = async () => {
    const scope = await newScope(server);
    const a = (await rseWithProtocols(server)).rse;
    const b = (await rseWithProtocols(server)).rse;
    await aDatasetOverHttp(server, scope, 'ds', [
      { name: 'f1', at: a },
      { name: 'f2', at: a },
    ]);
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: 'ds' }],
      copies: 1,
      rse_expression: b,
      notify: 'Y',
    });
    return { scope, b, ruleId };
  };
  const setStates = (rse: string, files: object[]) => server.root('PUT', '/replicas', { body: { rse, files } });

  it('makes the rule OK once its copies are set AVAILABLE, with RULE_OK (rule 17)', async () => {
    const { scope, b, ruleId } = await replicating();
    expectStatus(await setStates(b, [{ scope, name: 'f1', state: 'A' }]), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({
      state: 'REPLICATING',
      locks_ok_cnt: 1,
      locks_replicating_cnt: 1,
    });
    expectStatus(await setStates(b, [{ scope, name: 'f2', state: 'A' }]), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({
      state: 'OK',
      locks_ok_cnt: 2,
      locks_replicating_cnt: 0,
    });
    expect(await locksOverHttp(server, ruleId)).to.deep.equal([
      ['f1', b, 'OK'],
      ['f2', b, 'OK'],
    ]);
    const messages = expectStatus(await server.root('GET', '/admin/messages'), 200).lines<{
      event_type: string;
      payload: { rule_id: string };
    }>();
    expect(
      messages.filter((message) => message.payload.rule_id === ruleId).map((message) => message.event_type),
    ).to.deep.equal(['RULE_OK', 'DATASETLOCK_OK']);
  });

  it('makes the rule STUCK when a copy is set UNAVAILABLE (rule 18)', async () => {
    const { scope, b, ruleId } = await replicating();
    expectStatus(await setStates(b, [{ scope, name: 'f1', state: 'U' }]), 200);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({
      state: 'STUCK',
      locks_stuck_cnt: 1,
      locks_replicating_cnt: 1,
    });
  });
});
