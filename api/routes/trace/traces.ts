import { SETTINGS, settingValue, type ConfigSections } from '../../../domain/config/settings.ts';
import { RucioError, ValueError } from '../../../domain/shared/errors.ts';
import { readOfTrace } from '../../../domain/trace/kronos.ts';
import { TraceBuffer } from '../../../infra/traces/traceBuffer.ts';
import { dateOf } from '../../../infra/clock.ts';
import { configSection } from '../../../projections/config/configQueries.ts';
import { sendText } from '../../http.ts';
import { jsonObjectBody, jsonValueBody } from '../../params.ts';
import { convertedBy } from '../../routeInput.ts';
import { z } from 'zod';
import { RateLimiter, type RatePolicy } from '../../rateLimit.ts';
import type { RouteOptions, RouteTable } from '../../route.ts';
import type { JsonBody } from '../../routeInput.ts';
import type { AppContext, Services } from '../../services.ts';

/**
 * The largest trace body taken (a client posts one trace per file, a pilot a few): bodies to the
 * trace routes are bounded by this as they are read (api/app.ts), far below DMS_MAX_BODY_BYTES.
 */
export const TRACE_BODY_BYTES = 1024 * 1024;
export const TRACE_PATHS: ReadonlySet<string> = new Set(['/traces/', '/nongrid_traces/']);

/** Too many traces from one address: they are refused until its bucket fills again. */
export class TooManyRequests extends RucioError {
  static readonly exceptionClass = 'TooManyRequests';
  static readonly httpStatus = 429;
  constructor(message = 'Too many traces') {
    super('TooManyRequests', message, 429);
  }
}

const OCTET = 'application/octet-stream';

const ratePolicy = async (services: Services): Promise<RatePolicy> => {
  const section = await configSection(services.readModels, 'trace');
  const sections: ConfigSections = section ? { trace: section.options } : {};
  return {
    ratePerSecond: settingValue(sections, SETTINGS.traceRatePerAddress),
    burst: settingValue(sections, SETTINGS.traceBurstPerAddress),
  };
};

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A trace object, or a list of them: the list of traces. */
const tracesOf = (body: unknown): Readonly<Record<string, unknown>>[] => {
  const traces = Array.isArray(body) ? body : [body];
  if (!traces.every(isObject))
    throw new ValueError(
      'Invalid JSON data. Please provide a single trace as a JSON object or a list of trace objects.',
    );
  return traces;
};

const tracesBody = jsonValueBody(
  convertedBy(
    z
      .unknown()
      .describe(
        'A trace object, or a list of them (Rucio’s trace documents: eventType, clientState, scope, filename, remoteSite, ...).',
      ),
    tracesOf,
  ),
  'trace',
);

const nonGridTraceBody = jsonObjectBody({}, { description: 'A trace object.' });

/**
 * `/traces/` and `/nongrid_traces/` (Rucio's traces.py and nongrid_traces.py): what clients tell
 * of their transfers, posted without a token as Rucio takes them (the client sends none, and
 * ignores the answer). Bodies are bounded (TRACE_BODY_BYTES) and so is each client address's
 * rate (`trace.rate_per_address` and `trace.burst_per_address` traces, behind DMS_TRUST_PROXY
 * the forwarded client's address). A trace that reports a read (domain/trace/kronos.ts) waits
 * for kronos, which records the replica's and the DID's access; every trace is logged (at debug;
 * non-grid ones at info), as Rucio writes them to its trace log.
 */
export const registerTraceRoutes = (routes: RouteTable, services: Services): void => {
  const buffer = new TraceBuffer(services.readModels.store);
  const limiter = new RateLimiter(services.clock);
  const admit = async (ctx: AppContext, traces: number): Promise<void> => {
    if (!limiter.take(ctx.ip, traces, await ratePolicy(services)))
      throw new TooManyRequests(`Too many traces from ${ctx.ip}; send fewer, later.`);
  };
  const options = <B>(summary: string, body: JsonBody<B>) =>
    ({
      auth: false,
      summary,
      body,
      success: { status: 201, type: OCTET, description: 'Created' },
      raises: [ValueError, TooManyRequests],
    }) satisfies RouteOptions<unknown, unknown, B>;

  routes.post(
    '/traces/',
    options(
      'Takes client traces (downloads, uploads, touches, pilots’ reads), without a token; reads set the replicas’ and DIDs’ access times.',
      tracesBody,
    ),
    async (ctx, { body: traces }) => {
      await admit(ctx, Math.max(1, traces.length));
      const now = dateOf(services.clock);
      const reads = traces.flatMap((trace) => {
        ctx.state.logger.debug({ trace, traceIp: ctx.ip }, 'trace');
        const read = readOfTrace(trace, now.toISOString());
        return read ? [read] : [];
      });
      await buffer.add(reads, now);
      sendText(ctx, 'Created', 201, OCTET);
    },
  );

  routes.post(
    '/nongrid_traces/',
    options('Takes a non-grid (xAOD) trace, without a token, and logs it.', nonGridTraceBody),
    async (ctx, { body: trace }) => {
      await admit(ctx, 1);
      ctx.state.logger.info(
        { trace, ip: ctx.ip, timeentry: Math.floor(services.clock.now() / 1000) },
        'non-grid trace',
      );
      sendText(ctx, 'Created', 201, OCTET);
    },
  );
};
