import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startProcess, type ServerProcess } from '../../bench/lib/serverProcess.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { request, type HttpResponse } from '../support/http.ts';
import { makeTempDir } from '../support/tempDir.ts';

const ROOT_PASSWORD = 'cluster-secret';

/** A new connection per request (`Connection: close`): the cluster hands each to the next worker. */
const CLOSE = { Connection: 'close' };

/** The API workers of a cluster primary: its children running the worker's entry point (apiWorkerMain.ts, or dist/apiWorker.js compiled). */
const workersOf = (primary: number): number[] =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(primary)], { encoding: 'utf8' })
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => pid > 0)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('apiWorker');
      } catch {
        return false;
      }
    });

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A counter's value in Prometheus text, summed over its label sets that contain `labels`. */
const counter = (text: string, name: string, labels = ''): number =>
  text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => line.includes(labels))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);

/**
 * `dms serve` with two API workers (DMS_API_WORKERS=2) over real processes: the primary writes
 * the log and projects, each worker serves the API and sends its appends to the primary.
 */
describe('dms serve with two API workers', function () {
  this.timeout(120_000);
  const dir = makeTempDir('dms-cluster-');
  let server: ServerProcess;
  let token: string;
  const call = (method: string, path: string, body?: unknown): Promise<HttpResponse> =>
    request(server.url, method, path, { token, headers: CLOSE, ...(body === undefined ? {} : { body }) });
  const createAccount = (name: string) => call('POST', `/accounts/${name}`, { type: 'USER', email: 'c@example.org' });

  before(async () => {
    server = await startProcess(
      'bin/dms.ts',
      ['serve'],
      {
        DMS_DATA_DIR: dir.path,
        PORT: '0',
        DMS_WORKERS: 'false',
        DMS_LOG_LEVEL: 'info',
        DMS_API_WORKERS: '2',
        DMS_ROOT_PASSWORD: ROOT_PASSWORD,
      },
      'API listening',
    );
    const login = await request(server.url, 'GET', '/auth/userpass', {
      headers: { 'X-Svc-Username': 'ddmlab', 'X-Svc-Password': ROOT_PASSWORD },
    });
    expect(login.status, login.text).to.equal(200);
    token = String(login.headers['x-svc-auth-token']);
  });
  after(async () => {
    await server?.stop();
    dir.dispose();
  });

  it('runs two workers beside the primary', () => {
    expect(workersOf(server.pid)).to.have.length(2);
  });

  it('reads each write on the next connection, which the other worker serves: read your writes across workers', async () => {
    for (let index = 0; index < 20; index += 1) {
      const name = uniqueName('ryw');
      expect((await createAccount(name)).status).to.equal(201);
      const read = await call('GET', `/accounts/${name}`);
      expect(read.status, read.text).to.equal(200);
      expect(read.json<{ account: string }>().account).to.equal(name);
    }
  });

  it('keeps concurrent writes from both workers, and refuses all but one of a name taken at once', async () => {
    const distinct = Array.from({ length: 40 }, () => uniqueName('many'));
    const contested = uniqueName('contested');
    const [answers, contest] = await Promise.all([
      Promise.all(distinct.map((name) => createAccount(name))),
      Promise.all(Array.from({ length: 10 }, () => createAccount(contested))),
    ]);
    expect(answers.map((answer) => answer.status)).to.deep.equal(distinct.map(() => 201));
    const statuses = contest.map((answer) => answer.status).sort();
    expect(statuses).to.deep.equal([201, ...Array.from({ length: 9 }, () => 409)]);
    for (const name of [...distinct, contested]) expect((await call('GET', `/accounts/${name}`)).status).to.equal(200);
  });

  it('keeps every file of large attaches into one dataset sent at once through both workers', async () => {
    const scope = uniqueName('sc').slice(0, 25);
    const rse = uniqueName('CL_DISK')
      .toUpperCase()
      .replace(/[^A-Z0-9_]/g, '_');
    expect((await call('POST', `/scopes/root/${scope}`)).status).to.equal(201);
    expect((await call('POST', `/rses/${rse}`, {})).status).to.equal(201);
    expect((await call('POST', '/dids', [{ scope, name: 'ds', type: 'DATASET' }])).status).to.equal(201);
    // Each attach rewrites the dataset's stream: the calls race for it from two processes.
    const attaches = await Promise.all(
      Array.from({ length: 8 }, (_, call_) =>
        call('POST', `/dids/${scope}/ds/dids`, {
          rse,
          dids: Array.from({ length: 250 }, (_, index) => ({
            scope,
            name: `f.${call_}.${index}`,
            bytes: 1000,
            adler32: '0cc737eb',
          })),
        }),
      ),
    );
    expect(attaches.map((answer) => answer.status)).to.deep.equal(attaches.map(() => 201));
    const dataset = await call('GET', `/dids/${scope}/ds?dynamic_depth=FILE`);
    expect(dataset.status, dataset.text).to.equal(200);
    expect(dataset.json<{ length: number }>().length).to.equal(2000);
  });

  it('serves the metrics of every process summed, whichever worker is asked', async () => {
    const name = uniqueName('metrics');
    expect((await createAccount(name)).status).to.equal(201);
    const scrapes = await Promise.all([0, 1, 2, 3].map(() => call('GET', '/metrics')));
    for (const scrape of scrapes) {
      expect(scrape.status).to.equal(200);
      // Requests were served by both workers; each scrape counts them all.
      expect(
        counter(scrape.text, 'dms_http_request_duration_seconds_count', 'route="/accounts/:account"'),
      ).to.be.at.least(81);
      // The primary's own: the commits of the log it writes, each holding one append or more.
      const commits = counter(scrape.text, 'dms_event_log_commits_total');
      expect(commits).to.be.greaterThan(0);
      expect(counter(scrape.text, 'dms_event_log_committed_appends_total')).to.be.at.least(commits);
    }
  });

  it('starts another worker for one killed in the middle of requests, losing nothing answered', async () => {
    const [victim] = workersOf(server.pid);
    const names = Array.from({ length: 30 }, () => uniqueName('kill'));
    const answers = Promise.all(
      names.map((name) =>
        createAccount(name).then(
          (answer) => answer.status,
          () => 'cut' as const,
        ),
      ),
    );
    process.kill(victim!, 'SIGKILL');
    const statuses = await answers;
    await eventually(
      () => !alive(victim!) && workersOf(server.pid).length === 2,
      20_000,
      'a new worker in place of the killed one',
    );
    // Every write answered 201 is there; the rest were cut with their connection, or not made.
    const answered = names.filter((_, index) => statuses[index] === 201);
    for (const name of answered) expect((await call('GET', `/accounts/${name}`)).status).to.equal(200);
    expect((await call('GET', '/ping')).status).to.equal(200);
  });
});
