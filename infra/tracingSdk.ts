import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { hostname } from 'node:os';
import { threadId } from 'node:worker_threads';

/**
 * The OpenTelemetry SDK, loaded only when traces are exported (infra/tracing.ts): a tracer
 * provider whose batches go over OTLP/HTTP to `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter reads
 * the standard variables itself: the endpoint, headers, timeout, protocol), and the context
 * manager that carries the active span across `await`. Returns what stops it, after sending what
 * it still holds.
 */
export const registerTracing = (component: string): (() => Promise<void>) => {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': process.env.OTEL_SERVICE_NAME || 'dms',
      'service.instance.id': `${hostname()}/${process.pid}/${threadId}`,
      'dms.component': component,
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  trace.setGlobalTracerProvider(provider);
  return async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  };
};
