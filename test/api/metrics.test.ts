import { expect } from 'chai';
import { join } from 'node:path';
import { MeteredEventStore } from '../../api/metrics/meteredEventStore.ts';
import { isLoopbackAddress } from '../../api/metrics/metricsRoutes.ts';
import { ServiceMetrics } from '../../api/metrics/serviceMetrics.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { eventually } from '../support/eventually.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { request } from '../support/http.ts';
import { expectError, expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/** The value of one sample of Prometheus's text format, or undefined when it is absent. */
const sample = (text: string, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined => {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const given = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1], pair[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => given[key] === value)) return Number(match[3]);
  }
  return undefined;
};

describe('GET /metrics', () => {
  describe('on the API port, from this machine (DMS_METRICS=loopback, the default)', () => {
    let server: TestServer;
    const scrape = async () => {
      const response = expectStatus(await server.call('GET', '/metrics'), 200);
      expect(response.headers['content-type']).to.match(/^text\/plain; version=0\.0\.4/);
      return response.text;
    };
    before(async () => (server = await startTestServer()));
    after(async () => server?.stop());

    it('counts and times requests by method, route pattern and status, without a token', async () => {
      const { account } = await server.createUser();
      expectStatus(await server.root('GET', `/accounts/${account}`), 200);
      await server.root('GET', `/accounts/${uniqueName('nobody')}`);
      await server.call('GET', '/no/such/route');
      const text = await scrape();
      expect(
        sample(text, 'dms_http_request_duration_seconds_count', {
          method: 'GET',
          route: '/accounts/:account',
          status: '200',
        }),
      ).to.be.at.least(1);
      expect(
        sample(text, 'dms_http_request_duration_seconds_count', {
          method: 'GET',
          route: '/accounts/:account',
          status: '404',
        }),
      ).to.be.at.least(1);
      expect(
        sample(text, 'dms_http_request_duration_seconds_count', { method: 'GET', route: '(none)', status: '404' }),
      ).to.be.at.least(1);
      expect(
        sample(text, 'dms_http_request_duration_seconds_bucket', {
          method: 'POST',
          route: '/accounts/:account',
          status: '201',
          le: '+Inf',
        }),
      ).to.be.at.least(1);
      expect(text, 'raw paths never become labels').not.to.include(`route="/accounts/${account}"`);
    });

    it('times a streamed answer until its end', async () => {
      expectStatus(await server.root('GET', '/accounts'), 200);
      expect(
        sample(await scrape(), 'dms_http_request_duration_seconds_count', {
          method: 'GET',
          route: '/accounts',
          status: '200',
        }),
      ).to.be.at.least(1);
    });

    it('counts event appends and the events they wrote', async () => {
      const before = await scrape();
      const appended = sample(before, 'dms_event_appends_total', { outcome: 'appended' }) ?? 0;
      const events = sample(before, 'dms_events_appended_total') ?? 0;
      await server.createUser();
      const after = await scrape();
      expect(sample(after, 'dms_event_appends_total', { outcome: 'appended' })).to.be.above(appended);
      expect(sample(after, 'dms_events_appended_total')).to.be.above(events);
      expect(sample(after, 'dms_event_append_duration_seconds_count', { outcome: 'appended' })).to.be.at.least(1);
    });

    it('gives each projection’s lag behind the head of the log, read from its checkpoint', async () => {
      await server.createUser();
      let text = '';
      await eventually(async () => {
        text = await scrape();
        return sample(text, 'dms_projection_lag_events', { projection: 'accounts' }) === 0;
      }, 5000);
      const head = sample(text, 'dms_event_store_head_position');
      expect(head).to.be.above(0);
      expect(sample(text, 'dms_projection_checkpoint', { projection: 'accounts' })).to.equal(head);
      expect(sample(text, 'dms_projection_failed', { projection: 'accounts' })).to.equal(0);
    });

    it('counts logins by method and outcome, and gives the process’s own metrics', async () => {
      await server.login('nobody-at-all', 'wrong').catch(() => undefined);
      const text = await scrape();
      expect(sample(text, 'dms_logins_total', { method: 'userpass', outcome: 'succeeded' })).to.be.at.least(1);
      expect(sample(text, 'process_cpu_user_seconds_total')).to.be.above(0);
      expect(sample(text, 'nodejs_eventloop_lag_seconds')).to.be.a('number');
    });
  });

  it('is refused to other clients with DMS_METRICS=loopback (behind a trusted proxy, the forwarded address counts)', async () => {
    const server = await startTestServer({ environment: { DMS_TRUST_PROXY: 'true' } });
    try {
      expectError(
        await server.call('GET', '/metrics', { headers: { 'X-Forwarded-For': '192.0.2.7' } }),
        403,
        'AccessDenied',
        /DMS_METRICS=loopback/,
      );
      expectStatus(await server.call('GET', '/metrics', { headers: { 'X-Forwarded-For': '127.0.0.1' } }), 200);
    } finally {
      await server.stop();
    }
  });

  it('is served to anyone with DMS_METRICS=open and not at all with off', async () => {
    const open = await startTestServer({ environment: { DMS_TRUST_PROXY: 'true', DMS_METRICS: 'open' } });
    try {
      expectStatus(await open.call('GET', '/metrics', { headers: { 'X-Forwarded-For': '192.0.2.7' } }), 200);
    } finally {
      await open.stop();
    }
    const off = await startTestServer({ environment: { DMS_METRICS: 'off' } });
    try {
      expectError(await off.call('GET', '/metrics'), 404, 'NotFound');
    } finally {
      await off.stop();
    }
  });

  it('counts an append refused for a concurrent write as a conflict, apart from the appended ones', async () => {
    const dir = makeTempDir();
    const metrics = new ServiceMetrics();
    const store = new MeteredEventStore(new SqliteEventStore(join(dir.path, 'events.sqlite')), metrics);
    try {
      await store.appendToStream('test-1', [newEvent('Happened'), newEvent('Happened')], 'no_stream');
      await store.appendToStream('test-1', [newEvent('Happened')], 'no_stream').catch(() => undefined);
      const text = await metrics.text();
      expect(sample(text, 'dms_event_appends_total', { outcome: 'appended' })).to.equal(1);
      expect(sample(text, 'dms_event_appends_total', { outcome: 'conflict' })).to.equal(1);
      expect(sample(text, 'dms_events_appended_total')).to.equal(2);
    } finally {
      await store.close();
      dir.dispose();
    }
  });

  it('tells loopback addresses from others', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])
      expect(isLoopbackAddress(address), address).to.equal(true);
    for (const address of ['10.0.0.1', '::ffff:10.0.0.1', '192.0.2.7', '::2', 'localhost', ''])
      expect(isLoopbackAddress(address), address).to.equal(false);
  });

  it('is served on a port of its own with DMS_METRICS_PORT, with the daemon roles’ queues and jobs', async function () {
    this.timeout(30_000);
    const server = await startTestServer({
      environment: { DMS_METRICS_PORT: '0', DMS_METRICS: 'off' },
      roles: { workers: true },
    });
    try {
      const url = server.runtime.metricsUrl!;
      expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await request(url, 'GET', '/other')).status).to.equal(404);
      let text = '';
      // The conveyor's scheduled roles run every second.
      await eventually(async () => {
        text = (await request(url, 'GET', '/metrics')).text;
        return (sample(text, 'dms_jobs_total', { queue: 'conveyor-poller', outcome: 'completed' }) ?? 0) > 0;
      }, 20_000);
      expect(sample(text, 'dms_job_duration_seconds_count', { queue: 'conveyor-poller' })).to.be.at.least(1);
      expect(sample(text, 'dms_queue_jobs', { queue: 'judge-injector', state: 'waiting' })).to.be.a('number');
      expect(sample(text, 'dms_queue_jobs', { queue: 'conveyor-poller', state: 'delayed' })).to.be.a('number');
      expectError(await server.call('GET', '/metrics'), 404, 'NotFound');
    } finally {
      await server.stop();
    }
  });
});
