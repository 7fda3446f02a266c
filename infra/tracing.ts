import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';

/**
 * One trace per request. Every API request gets a correlation id, the trace id of W3C Trace
 * Context (32 lower-case hex digits): the one of the `traceparent` header it came with, or one
 * made here. It goes into the request's log lines and the envelope of every event the request
 * appends (`metadata.correlationId`); the reactor hands it with each job it enqueues, so daemon
 * work set off by those events appends and logs under the same id (workers/workerHost.ts), and
 * `GET /audit/traces/{id}/events` lists everything one request caused.
 *
 * OpenTelemetry spans (requests, commands, projection batches, daemon jobs) are made only when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: `startTracing`
 * then loads the SDK (tracingSdk.ts, a chunk of its own in the build) and exports over OTLP/HTTP.
 * Unset, nothing but the API's no-op is loaded and `inSpan` runs its work directly: correlation
 * ids cost a UUID per request and nothing else.
 */

/** A position in a trace: its id and, when known, the span that is the parent of what follows. */
export type TraceContext = Readonly<{ traceId: string; spanId?: string }>;

let stop: (() => Promise<void>) | undefined;

/** Whether spans are made and exported in this process (or thread). */
export const tracingOn = (): boolean => stop !== undefined;

/** Whether the environment asks for traces to be exported. */
export const tracingConfigured = (env: NodeJS.ProcessEnv = process.env): boolean =>
  Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) &&
  env.OTEL_SDK_DISABLED !== 'true' &&
  env.OTEL_TRACES_EXPORTER !== 'none';

/**
 * Starts exporting spans when the environment asks for it (see above); does nothing otherwise,
 * or when this process or thread already does. `component` names what runs here (`api`,
 * `worker`, `projector`...), as a resource attribute beside the service's name.
 */
export const startTracing = async (component: string): Promise<void> => {
  if (stop || !tracingConfigured()) return;
  const { registerTracing } = await import('./tracingSdk.ts');
  stop = registerTracing(component);
};

/** Sends the spans still buffered and stops making them. */
export const stopTracing = async (): Promise<void> => {
  const stopping = stop;
  stop = undefined;
  await stopping?.();
};

const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The trace a `traceparent` header names (W3C Trace Context): version 00 exactly as specified,
 * a later version read by its first four fields; undefined for anything else (an all-zero id,
 * the version ff, upper-case digits), which the caller replaces with a trace of its own, as the
 * specification asks.
 */
export const parseTraceparent = (header: unknown): TraceContext | undefined => {
  if (typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, , rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId: traceId!, spanId: spanId! };
};

/** A new trace id: a random UUID's 32 hex digits (never all zero). */
export const newTraceId = (): string => randomUUID().replaceAll('-', '');

/** Whether a text is a trace id: 32 lower-case hex digits, not all zero. */
export const isTraceId = (text: string): boolean => /^[0-9a-f]{32}$/.test(text) && text !== ZERO_TRACE;

/**
 * The `traceparent` of a trace, to hand it on (a job enqueued for an event): its span, or when
 * none is known, `spanFallback` (16 hex digits derived from what is handed on).
 */
export const traceparentOf = (trace: TraceContext, spanFallback: string): string =>
  `00-${trace.traceId}-${trace.spanId ?? spanFallback}-01`;

/** The span id the work running now is inside, when spans are made. */
export const activeSpanId = (): string | undefined => (stop ? trace.getActiveSpan()?.spanContext().spanId : undefined);

export type SpanSpec = Readonly<{
  kind?: 'server' | 'consumer' | 'internal';
  attributes?: Attributes;
  /**
   * The trace this work continues (a request's `traceparent`, a job's event); default: the span
   * active here, or a new trace.
   */
  parent?: TraceContext;
  /** Traces this work serves without being their child (a projection batch's events). */
  links?: readonly TraceContext[];
}>;

const KINDS = { server: SpanKind.SERVER, consumer: SpanKind.CONSUMER, internal: SpanKind.INTERNAL } as const;

/**
 * Runs `work` in a span named `name` when spans are made, ending it when the work ends (an
 * error recorded on it); without them, runs `work` with no span, at no other cost.
 */
export const inSpan = async <T>(
  name: string,
  spec: SpanSpec,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> => {
  if (!stop) return work(undefined);
  const parent = spec.parent
    ? trace.setSpanContext(ROOT_CONTEXT, {
        traceId: spec.parent.traceId,
        // A parent span nobody exported (written while tracing was off) still ties the trace.
        spanId: spec.parent.spanId ?? spec.parent.traceId.slice(0, 16),
        traceFlags: TraceFlags.SAMPLED,
        isRemote: true,
      })
    : context.active();
  const links: Link[] = (spec.links ?? []).map((linked) => ({
    context: {
      traceId: linked.traceId,
      spanId: linked.spanId ?? linked.traceId.slice(0, 16),
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    },
  }));
  const tracer = trace.getTracer('dms');
  return tracer.startActiveSpan(
    name,
    { kind: KINDS[spec.kind ?? 'internal'], ...(spec.attributes ? { attributes: spec.attributes } : {}), links },
    parent,
    async (span) => {
      try {
        return await work(span);
      } catch (error) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        throw error;
      } finally {
        span.end();
      }
    },
  );
};
