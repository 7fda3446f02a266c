import { integer, number, DAY } from '../config/settingKinds.ts';

/** The `/config` options of traces and of kronos (domain/trace/kronos.ts). */
export const TRACE_SETTINGS = {
  /**
   * Kronos (Rucio's `tracer-kronos` section): seconds between cycles (Rucio reads its broker
   * continuously; its dataset thread sleeps 60 s) and traces per batch (Rucio's `chunksize`).
   * Each batch records one event per replica and per dataset it read, however many traces.
   */
  kronosInterval: number('tracer-kronos', 'interval', 10, 0.1, DAY),
  kronosChunkSize: integer('tracer-kronos', 'chunksize', 1000, 1, 100_000),
  /**
   * Traces posted without a token (`POST /traces/`, `/nongrid_traces/`): how many one client
   * address may post per second on average, and at once (Rucio: no bound).
   */
  traceRatePerAddress: number('trace', 'rate_per_address', 100, 0.1, 1_000_000),
  traceBurstPerAddress: number('trace', 'burst_per_address', 2000, 1, 10_000_000),
} as const;
