import { expect } from 'chai';
import { startProcess, type ServerProcess } from '../../bench/lib/serverProcess.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { request, type HttpResponse, type RequestOptions } from '../support/http.ts';
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
  const environment = {
    DMS_DATA_DIR: dir.path,
    PORT: '0',
    DMS_LOG_LEVEL: 'info',
    DMS_ROOT_USERNAME: 'crashroot',
    DMS_ROOT_PASSWORD: 'crash-secret',
    DMS_QUEUE_PREFIX: uniqueName('crash'),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  };
  let server: ServerProcess | undefined;
  after(async () => {
    await server?.stop();
    dir.dispose();
  });

  const start = async () => {
    server = await startProcess('bin/dms.ts', ['serve'], environment, 'API listening');
    const login = await request(server.url, 'GET', '/auth/userpass', { headers: { 'X-Svc-Username': 'crashroot', 'X-Svc-Password': 'crash-secret' } });
    expect(login.status, login.text).to.equal(200);
    const token = String(login.headers['x-svc-auth-token']);
    return (method: string, path: string, options: Omit<RequestOptions, 'token'> = {}): Promise<HttpResponse> => request(server!.url, method, path, { ...options, token });
  };
  const ok = (response: HttpResponse, status: number) => {
    expect(response.status, response.text).to.equal(status);
    return response;
  };
  /** SIGKILL: no shutdown, no finished jobs, whatever was in memory is gone. */
  const crash = async () => {
    const pid = server!.pid;
    process.kill(pid, 'SIGKILL');
    await eventually(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 10_000, 'the server gone');
    server = undefined;
  };

  it('finishes every transfer once after SIGKILL and a restart, no request lost', async () => {
    const files = Array.from({ length: 20 }, (_, index) => `f${index}`);
    let call = await start();
    // Stuck SUBMITTING requests are retried after 3 s instead of two hours.
    ok(await call('POST', '/config', { body: { 'conveyor-finisher': { submitting_timeout: 3 } } }), 201);
    ok(await call('POST', '/scopes/root/crash'), 201);
    const protocol = (host: string) => ({
      hostname: host,
      port: 1094,
      prefix: '/data',
      impl: 'rucio.rse.protocols.xrootd.Default',
      domains: { lan: { read: 1, write: 1, delete: 1 }, wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 } },
    });
    for (const rse of ['CRASH_A', 'CRASH_B']) {
      ok(await call('POST', `/rses/${rse}`, { body: {} }), 201);
      ok(await call('POST', `/rses/${rse}/protocols/root`, { body: protocol(`${rse.toLowerCase()}.example.org`) }), 201);
    }
    ok(await call('POST', '/rses/CRASH_A/distances/CRASH_B', { body: { distance: 1 } }), 201);
    // Each copy takes 3 s in the mock tool: long enough to be caught in flight.
    ok(await call('POST', '/rses/CRASH_B/attr/mock_delay_ms', { body: { value: '3000' } }), 201);
    ok(await call('POST', '/dids', { body: [{ scope: 'crash', name: 'ds', type: 'DATASET' }] }), 201);
    ok(await call('POST', '/dids/crash/ds/dids', { body: { rse: 'CRASH_A', dids: files.map((name) => ({ scope: 'crash', name, bytes: 100, adler32: '0cc737eb' })) } }), 201);
    const ruleResponse = ok(await call('POST', '/rules/', { body: { dids: [{ scope: 'crash', name: 'ds' }], copies: 1, rse_expression: 'CRASH_B' } }), 201);
    const [ruleId] = JSON.parse(ruleResponse.text) as string[];
    const inFlight = async () => ok(await call('GET', '/requests/list?src_rse=CRASH_A&dst_rse=CRASH_B&request_states=S,G'), 200).lines<{ state: string }>().length;
    await eventually(async () => (await inFlight()) > 0, 20_000, 'transfers in flight');

    await crash();
    call = await start();

    const rule = async () => ok(await call('GET', `/rules/${ruleId}`), 200).json<Record<string, unknown>>();
    await eventually(async () => (await rule()).state === 'OK', 90_000, 'the rule OK after the restart');
    expect(await rule()).to.include({ locks_ok_cnt: 20, locks_replicating_cnt: 0, locks_stuck_cnt: 0 });
    // Each file arrived exactly once; nothing is left active; what was lost was retried.
    const done = ok(await call('GET', '/requests/history/list?src_rse=CRASH_A&dst_rse=CRASH_B&request_states=D&limit=1000'), 200).lines<{ name: string }>();
    expect(done.map((request) => request.name).sort()).to.deep.equal([...files].sort());
    const active = ok(await call('GET', '/requests/list?src_rse=CRASH_A&dst_rse=CRASH_B&request_states=P,W,Q,G,S,D,F,L,A'), 200).lines();
    expect(active).to.deep.equal([]);
    const interrupted = ok(await call('GET', '/requests/history/list?src_rse=CRASH_A&dst_rse=CRASH_B&request_states=L,G&limit=1000'), 200).lines<{ state: string }>();
    expect(interrupted.length, 'requests interrupted by the crash, archived and retried').to.be.greaterThan(0);
    for (const name of files) {
      const replicas = ok(await call('GET', `/replicas/crash/${name}?all_states=true`), 200).lines<{ states: Record<string, string> }>();
      expect(replicas[0]!.states.CRASH_B).to.equal('AVAILABLE');
    }
  });
});
