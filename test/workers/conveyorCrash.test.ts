import { expect } from 'chai';
import { answered, killableServer } from '../support/killableServer.ts';
import { eventually } from '../support/eventually.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Crash safety of the conveyor (issue 10): a `dms serve` killed with SIGKILL while transfers are
 * in flight, then started again on the same data, finishes the work. The mock tool forgets its
 * jobs with the process, so they come back LOST and are retried; requests caught between
 * SUBMITTING and SUBMITTED are retried once past the bound. Every file arrives, once.
 */
describe('Roles: the conveyor survives a crash mid-transfer (rule 22)', function () {
  this.timeout(120_000);
  const dir = makeTempDir();
  const server = killableServer(dir.path);
  after(async () => {
    await server.stop();
    dir.dispose();
  });

  it('finishes every transfer once after SIGKILL and a restart, no request lost', async () => {
    const files = Array.from({ length: 20 }, (_, index) => `f${index}`);
    let call = await server.start();
    // Stuck SUBMITTING requests are retried after 3 s instead of two hours.
    answered(await call('POST', '/config', { body: { 'conveyor-finisher': { submitting_timeout: 3 } } }), 201);
    answered(await call('POST', '/scopes/root/crash'), 201);
    const protocol = (host: string) => ({
      hostname: host,
      port: 1094,
      prefix: '/data',
      impl: 'rucio.rse.protocols.xrootd.Default',
      domains: {
        lan: { read: 1, write: 1, delete: 1 },
        wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
      },
    });
    for (const rse of ['CRASH_A', 'CRASH_B']) {
      answered(await call('POST', `/rses/${rse}`, { body: {} }), 201);
      answered(
        await call('POST', `/rses/${rse}/protocols/root`, { body: protocol(`${rse.toLowerCase()}.example.org`) }),
        201,
      );
    }
    answered(await call('POST', '/rses/CRASH_A/distances/CRASH_B', { body: { distance: 1 } }), 201);
    // Each copy takes 3 s in the mock tool: long enough to be caught in flight.
    answered(await call('POST', '/rses/CRASH_B/attr/mock_delay_ms', { body: { value: '3000' } }), 201);
    answered(await call('POST', '/dids', { body: [{ scope: 'crash', name: 'ds', type: 'DATASET' }] }), 201);
    answered(
      await call('POST', '/dids/crash/ds/dids', {
        body: {
          rse: 'CRASH_A',
          dids: files.map((name) => ({ scope: 'crash', name, bytes: 100, adler32: '0cc737eb' })),
        },
      }),
      201,
    );
    const ruleResponse = answered(
      await call('POST', '/rules/', {
        body: { dids: [{ scope: 'crash', name: 'ds' }], copies: 1, rse_expression: 'CRASH_B' },
      }),
      201,
    );
    const [ruleId] = JSON.parse(ruleResponse.text) as string[];
    const inFlight = async () =>
      answered(await call('GET', '/requests/list?src_rse=CRASH_A&dst_rse=CRASH_B&request_states=S,G'), 200).lines<{
        state: string;
      }>().length;
    await eventually(async () => (await inFlight()) > 0, 20_000, 'transfers in flight');

    await server.crash();
    call = await server.start();

    const rule = async () => answered(await call('GET', `/rules/${ruleId}`), 200).json<Record<string, unknown>>();
    await eventually(async () => (await rule()).state === 'OK', 90_000, 'the rule OK after the restart');
    expect(await rule()).to.include({ locks_ok_cnt: 20, locks_replicating_cnt: 0, locks_stuck_cnt: 0 });
    // Each file arrived exactly once; nothing is left active; what was lost was retried. Requests
    // and replicas are other projection groups' read models than rules: they may show a moment later.
    const doneNames = async () =>
      answered(
        await call('GET', '/requests/history/list?src_rse=CRASH_A&dst_rse=CRASH_B&request_states=D&limit=1000'),
        200,
      )
        .lines<{ name: string }>()
        .map((request) => request.name)
        .sort();
    await eventually(async () => (await doneNames()).length >= files.length, 10_000, 'the done requests archived');
    expect(await doneNames()).to.deep.equal([...files].sort());
    const active = answered(
      await call('GET', '/requests/list?src_rse=CRASH_A&dst_rse=CRASH_B&request_states=P,W,Q,G,S,D,F,L,A'),
      200,
    ).lines();
    expect(active).to.deep.equal([]);
    const interrupted = answered(
      await call('GET', '/requests/history/list?src_rse=CRASH_A&dst_rse=CRASH_B&request_states=L,G&limit=1000'),
      200,
    ).lines<{ state: string }>();
    expect(interrupted.length, 'requests interrupted by the crash, archived and retried').to.be.greaterThan(0);
    const copyState = async (name: string) =>
      answered(await call('GET', `/replicas/crash/${name}?all_states=true`), 200).lines<{
        states: Record<string, string>;
      }>()[0]!.states.CRASH_B;
    for (const name of files) {
      await eventually(async () => (await copyState(name)) === 'AVAILABLE', 10_000, `${name} AVAILABLE on CRASH_B`);
      expect(await copyState(name)).to.equal('AVAILABLE');
    }
  });
});
