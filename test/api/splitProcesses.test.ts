import { expect } from 'chai';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { waitUntil } from '../infra/eventStore.contract.ts';
import { uniqueName } from '../support/events.ts';
import { ROOT_PASSWORD, ROOT_USERNAME } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

const DMS = join(import.meta.dirname, '..', '..', 'bin', 'dms');
const WRITES = 3;

type Started = Readonly<{ child: ChildProcessWithoutNullStreams; lines: Record<string, unknown>[] }>;

/** A `dms` process of the scaled-out mode, its JSON log lines collected. */
const start = (role: string, environment: NodeJS.ProcessEnv, args: readonly string[] = []): Started => {
  const child = spawn(DMS, [role, ...args], { env: environment, stdio: 'pipe' });
  const lines: Record<string, unknown>[] = [];
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const complete = buffer.split('\n');
    buffer = complete.pop()!;
    for (const line of complete) if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr.pipe(process.stderr);
  return { child, lines };
};

const logged = async (process: Started, message: string): Promise<Record<string, unknown>> => {
  await waitUntil(() => process.lines.some((line) => line.msg === message), 30_000);
  return process.lines.find((line) => line.msg === message)!;
};

/** One sample of a metric from a process's metrics port, 0 when absent. */
const sample = async (metricsUrl: string, name: string, labels: string): Promise<number> => {
  const text = await (await fetch(metricsUrl)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
};

/**
 * `dms api` beside `dms projector` on one data directory: the API answers a write once the
 * projector has applied it, and hears of that from the projector's announcement over the shared
 * Redis (REDIS_URL, set for the whole test run); the projector hears of the write the same way.
 */
describe('API and projector as separate processes', () => {
  /** `projectors`: the groups of each `dms projector --groups` to start; default one projector of every group. */
  const run = async (
    prefixes: { api: string; projector: string },
    projectors: readonly (readonly string[])[] = [[]],
  ) => {
    const dir = makeTempDir();
    const environment = (prefix: string): NodeJS.ProcessEnv => ({
      ...process.env,
      DMS_DATA_DIR: dir.path,
      PORT: '0',
      DMS_METRICS_PORT: '0',
      DMS_LOG_LEVEL: 'info',
      DMS_ROOT_PASSWORD: ROOT_PASSWORD,
      DMS_QUEUE_PREFIX: prefix,
    });
    // The projector starts only once the API has written root: the API must not listen before
    // the read models show root, or the first login's token would be refused (401) at its first use.
    const api = start('api', environment(prefixes.api));
    const started: Started[] = [];
    try {
      await logged(api, 'created the root account and its userpass identity');
      for (const groups of projectors)
        started.push(
          start('projector', environment(prefixes.projector), groups.length > 0 ? ['--groups', groups.join(',')] : []),
        );
      const projector = started[0]!;
      const url = String((await logged(api, 'API listening')).url);
      const login = await fetch(`${url}/auth/userpass`, {
        headers: { 'X-Svc-Username': ROOT_USERNAME, 'X-Svc-Password': ROOT_PASSWORD },
      });
      expect(login.status).to.equal(200);
      const token = login.headers.get('x-svc-auth-token')!;
      const root = await fetch(`${url}/accounts/root`, { headers: { 'X-Svc-Auth-Token': token } });
      expect(root.status, 'the token of the first login is accepted').to.equal(200);
      const apiMetrics = String((await logged(api, 'metrics listening')).url);
      const projectorMetrics = String((await logged(projector, 'metrics listening')).url);
      const waits = (endedBy: string) =>
        sample(apiMetrics, 'dms_read_your_writes_waits_total', `ended_by="${endedBy}"`);
      const heard = () => sample(projectorMetrics, 'dms_position_signals_total', 'signal="appended",event="received"');
      // From here: the start's own wait for root (which a slow start of the projectors may end by
      // its timeout, the API then listening anyway) is not one of the writes'.
      const before = {
        signal: await waits('signal'),
        checkpoints: await waits('checkpoints'),
        timeout: await waits('timeout'),
        heard: await heard(),
      };

      for (let index = 0; index < WRITES; index += 1) {
        const account = uniqueName('split');
        const created = await fetch(`${url}/accounts/${account}`, {
          method: 'POST',
          headers: { 'X-Svc-Auth-Token': token },
          body: JSON.stringify({ type: 'USER', email: 'split@example.org' }),
        });
        expect(created.status).to.equal(201);
        const read = await fetch(`${url}/accounts/${account}`, { headers: { 'X-Svc-Auth-Token': token } });
        expect(read.status, 'the API answered only once the projector had applied the write').to.equal(200);
      }

      return {
        endedBySignal: (await waits('signal')) - before.signal,
        endedByCheckpoints: (await waits('checkpoints')) - before.checkpoints,
        timedOut: (await waits('timeout')) - before.timeout,
        projectorHeard: (await heard()) - before.heard,
      };
    } finally {
      const children = [api.child, ...started.map((one) => one.child)];
      const exited = children.map((child) => new Promise((resolve) => child.once('exit', resolve)));
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(exited);
      dir.dispose();
    }
  };

  it('reads its writes, each wait ended by the signals over Redis', async function () {
    this.timeout(90_000);
    const prefix = uniqueName('split');
    const outcome = await run({ api: prefix, projector: prefix });

    // Each write is announced to the projector, and its wait ended by the projector's announcement
    // or, where that came after the fallback look (a loaded machine), by the checkpoints.
    expect(outcome.projectorHeard).to.be.at.least(WRITES);
    expect(outcome.endedBySignal).to.be.at.least(1);
    expect(outcome.endedBySignal + outcome.endedByCheckpoints).to.equal(WRITES);
    expect(outcome.timedOut).to.equal(0);
  });

  it('reads its writes with the projection groups spread over two `dms projector --groups` processes', async function () {
    this.timeout(90_000);
    const prefix = uniqueName('split');
    // Accounts are the general group's: the first projector has none of the groups a write touches.
    const outcome = await run({ api: prefix, projector: prefix }, [
      ['audit', 'dids', 'replicas'],
      ['rules', 'transfers', 'general'],
    ]);

    expect(outcome.endedBySignal + outcome.endedByCheckpoints).to.equal(WRITES);
    expect(outcome.timedOut).to.equal(0);
  });

  it('refuses a projector of a group the layout does not have, naming the known ones', async function () {
    this.timeout(30_000);
    const dir = makeTempDir();
    try {
      const projector = start('projector', { ...process.env, DMS_DATA_DIR: dir.path }, ['--groups', 'dids,nosuch']);
      let stderr = '';
      projector.child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const status = await new Promise((resolve) => projector.child.once('exit', resolve));
      expect(status).to.equal(2);
      expect(stderr).to.contain('unknown projection groups: nosuch');
      expect(stderr).to.contain('audit, dids, replicas, rules, transfers, general');
    } finally {
      dir.dispose();
    }
  });

  it('still reads its writes when every signal is lost, by the stored checkpoints', async function () {
    this.timeout(90_000);
    // Two prefixes: the processes share the stores but publish and listen on different channels.
    const outcome = await run({ api: uniqueName('split-api'), projector: uniqueName('split-projector') });

    expect(outcome.projectorHeard).to.equal(0);
    expect(outcome.endedBySignal).to.equal(0);
    expect(outcome.endedByCheckpoints).to.equal(WRITES);
    expect(outcome.timedOut).to.equal(0);
  });
});
