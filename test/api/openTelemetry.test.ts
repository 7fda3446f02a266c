import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startProcess, type ServerProcess } from '../../bench/lib/serverProcess.ts';
import { uniqueName } from '../support/events.ts';
import { eventually } from '../support/eventually.ts';
import { request } from '../support/http.ts';
import { expectStatus, ROOT_PASSWORD, ROOT_USERNAME } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/** A span as OTLP/JSON carries it (ids in hex), with the resource attributes of its process. */
type ReceivedSpan = Readonly<{
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  links: readonly Readonly<{ traceId: string; spanId: string }>[];
  attributes: Readonly<Record<string, unknown>>;
  component: unknown;
}>;

type AnyValue = Readonly<{ stringValue?: string; intValue?: string | number; arrayValue?: unknown }>;
type KeyValue = Readonly<{ key: string; value: AnyValue }>;
type ExportRequest = Readonly<{
  resourceSpans?: readonly Readonly<{
    resource?: Readonly<{ attributes?: readonly KeyValue[] }>;
    scopeSpans?: readonly Readonly<{
      spans?: readonly Readonly<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        links?: readonly Readonly<{ traceId: string; spanId: string }>[];
        attributes?: readonly KeyValue[];
      }>[];
    }>[];
  }>[];
}>;

const valueOf = (value: AnyValue): unknown => value.stringValue ?? value.intValue ?? value.arrayValue;
const attributesOf = (list: readonly KeyValue[] = []): Record<string, unknown> =>
  Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

/**
 * An OpenTelemetry collector in the test's process: a real HTTP server on loopback that receives
 * OTLP/HTTP exports (`POST /v1/traces`, JSON: what @opentelemetry/exporter-trace-otlp-http sends)
 * and keeps every span it decodes.
 */
const startCollector = async (): Promise<{ url: string; spans: ReceivedSpan[]; server: Server }> => {
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scopeSpans of resourceSpans.scopeSpans ?? [])
          for (const span of scopeSpans.spans ?? [])
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind,
              links: span.links ?? [],
              attributes: attributesOf(span.attributes),
              component: resource['dms.component'],
            });
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, server };
};

const SERVER_KIND = 2;
const CONSUMER_KIND = 5;

/**
 * Item 4 of issue 33: with OTEL_EXPORTER_OTLP_ENDPOINT set, `dms serve` (compiled, as operators
 * run it: its API workers, its projection thread, its daemons) exports spans for the request, the
 * command it issued, the projection batch that applied its events and the daemon job they set
 * off, all in the trace of the request's `traceparent`.
 */
describe('OpenTelemetry: the spans of one request, read back from a collector', function () {
  this.timeout(120_000);
  const dir = makeTempDir('otel-');
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let dms: ServerProcess | undefined;

  before(async () => {
    collector = await startCollector();
    dms = await startProcess(
      'bin/dms.ts',
      ['serve'],
      {
        DMS_DATA_DIR: dir.path,
        PORT: '0',
        DMS_LOG_LEVEL: 'info',
        DMS_ROOT_USERNAME: ROOT_USERNAME,
        DMS_ROOT_PASSWORD: ROOT_PASSWORD,
        DMS_QUEUE_PREFIX: uniqueName('otel'),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        // Batches leave every 100 ms rather than every 5 s, so the test waits less.
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
      'API listening',
    );
  });
  after(async () => {
    await dms?.stop();
    await new Promise((resolve) => collector.server.close(resolve));
    dir.dispose();
  });

  it('exports the request, its command, the projection batch and the daemon job in the caller’s trace', async () => {
    const url = dms!.url;
    const login = expectStatus(
      await request(url, 'GET', '/auth/userpass', {
        headers: { 'X-Svc-Username': ROOT_USERNAME, 'X-Svc-Password': ROOT_PASSWORD },
      }),
      200,
    );
    const token = String(login.headers['x-svc-auth-token']);
    const scope = uniqueName('s.');
    expectStatus(await request(url, 'POST', `/scopes/root/${scope}`, { token }), 201);
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const created = expectStatus(
      await request(url, 'POST', `/dids/${scope}/traced`, {
        token,
        headers: { traceparent: `00-${traceId}-${callerSpan}-01` },
        body: { type: 'DATASET' },
      }),
      201,
    );
    expect(created.headers['x-trace-id']).to.equal(traceId);

    const inTrace = () => collector.spans.filter((span) => span.traceId === traceId);
    // The transmogrifier reacts to every new dataset: its job continues the request's trace.
    await eventually(
      () =>
        inTrace().some((span) => span.name === 'job transmogrifier') &&
        inTrace().some((span) => span.kind === SERVER_KIND) &&
        collector.spans.some((span) => span.links.some((link) => link.traceId === traceId)),
      60_000,
      'the request, the daemon job and the projection batch exported',
    );
    const spans = inTrace();
    const requestSpan = spans.find((span) => span.kind === SERVER_KIND);
    expect(requestSpan, 'the request span').to.deep.include({
      parentSpanId: callerSpan,
      name: 'POST /dids/*scope_name',
      component: 'api-worker',
    });
    expect(requestSpan!.attributes).to.deep.include({ 'http.response.status_code': 201, 'dms.account': 'root' });
    const command = spans.find((span) => span.name.startsWith('command ') && span.parentSpanId === requestSpan!.spanId);
    expect(command, 'the command span, child of the request').to.not.equal(undefined);
    const job = spans.find((span) => span.name === 'job transmogrifier')!;
    // The job's parent is the span that appended the event it reacts to: the request's command.
    expect(job).to.deep.include({ kind: CONSUMER_KIND, parentSpanId: command!.spanId, component: 'serve' });
    const batch = collector.spans.find((span) => span.links.some((link) => link.traceId === traceId))!;
    expect(batch.name).to.match(/^projection batch /);
    expect(batch.component).to.equal('projector-thread');
    expect(batch.links.map((link) => ({ traceId: link.traceId, spanId: link.spanId }))).to.deep.include({
      traceId,
      spanId: command!.spanId,
    });
  });
});
