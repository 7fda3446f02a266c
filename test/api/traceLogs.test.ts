import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { newScope, path } from '../support/dids.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { rseWithProtocols } from './replicaSupport.ts';

type LogLine = Readonly<Record<string, unknown>>;

/**
 * Item 4 of issue 33, in the logs: the trace id of a request is on its log lines and on those of
 * the daemon work its events set off, so one `grep` over every process's log finds its story.
 */
describe("Logs: one request's trace id on its lines and its daemons' lines", function () {
  this.timeout(120_000);
  const logged: LogLine[] = [];
  let server: TestServer;
  before(
    async () =>
      (server = await startTestServer({
        roles: { workers: true },
        logger: pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as LogLine) }),
      })),
  );
  after(async () => server.stop());

  it("logs the request and the transmogrifier's job it set off under the request's trace id", async () => {
    const scope = await newScope(server);
    const rse = await rseWithProtocols(server);
    expectStatus(
      await server.root('POST', `/subscriptions/root/${uniqueName('sub')}`, {
        body: {
          options: {
            filter: { scope: [scope], did_type: ['DATASET'] },
            replication_rules: [{ copies: 1, rse_expression: rse.rse }],
            comments: 'logs the trace',
            lifetime: null,
            retroactive: false,
          },
        },
      }),
      201,
    );
    const trace = randomBytes(16).toString('hex');
    const requestId = uniqueName('req');
    expectStatus(
      await server.root('POST', path(scope, 'logged'), {
        headers: { traceparent: `00-${trace}-${randomBytes(8).toString('hex')}-01`, 'X-Request-Id': requestId },
        body: { type: 'DATASET' },
      }),
      201,
    );
    await eventually(
      () => logged.some((line) => line.daemon === 'transmogrifier' && line.traceId === trace),
      30_000,
      "the transmogrifier's line in the request's trace",
    );
    const requestLine = logged.find((line) => line.requestId === requestId && line.method === 'POST');
    expect(requestLine).to.deep.include({ traceId: trace, status: 201 });
    const daemonLine = logged.find((line) => line.daemon === 'transmogrifier' && line.traceId === trace)!;
    expect(daemonLine).to.deep.include({ msg: 'role cycle' });
    expect(daemonLine.done).to.be.greaterThan(0);
    // Another request's lines carry their own trace, not this one.
    expectStatus(await server.root('GET', '/accounts/root'), 200);
    const other = logged.find((line) => line.method === 'GET' && line.url === '/accounts/root');
    expect(other?.traceId)
      .to.be.a('string')
      .that.matches(/^[0-9a-f]{32}$/)
      .and.not.equal(trace);
  });
});
