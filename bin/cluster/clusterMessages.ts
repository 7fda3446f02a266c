import type { AppendFailure } from '../../infra/eventstore/forwardedAppends.ts';
import type { AppendResult, StreamAppend } from '../../infra/eventstore/eventStore.ts';
import { isRecord } from '../../infra/typeGuards.ts';
import type { ProcessMetrics } from '../../api/metrics/serviceMetrics.ts';
import type { ProgressReport } from '../../projections/runtime/progressRelay.ts';

/**
 * What the primary and the API workers of `dms serve` tell each other over the cluster's IPC
 * channel, with Node's `advanced` serialization (structured clone: bigints and nested data cross
 * as they are). Every message carries `dms` naming its kind, so that other users of the channel
 * (prom-client listens on it in workers) are told apart; a request carries an `id` its answer
 * repeats.
 */

/** From a worker. */
export type WorkerMessage =
  /** The worker listens on the channel: send it `start`. */
  | { dms: 'hello' }
  /** The worker could not start (its port in use, say); it exits. */
  | { dms: 'start-failed'; portInUse: boolean; message: string }
  /** A decision's appends, to be written in the primary's next group commit. */
  | { dms: 'append'; id: number; appends: readonly StreamAppend[] }
  /** `GET /metrics` on this worker: the cluster's metrics, summed. */
  | { dms: 'metrics'; id: number }
  /** This worker's metrics, answering `collect-metrics`. */
  | { dms: 'metrics-json'; id: number; metrics: ProcessMetrics }
  /** The worker serves the API at `url`. */
  | { dms: 'listening'; url: string };

/** From the primary. */
export type PrimaryMessage =
  /** The worker's configuration (the primary's own) and where the projections stand. */
  | { dms: 'start'; config: unknown; progress: ProgressReport }
  | { dms: 'progress'; report: ProgressReport }
  | { dms: 'appended'; id: number; results: readonly AppendResult[] }
  | { dms: 'append-failed'; id: number; failure: AppendFailure }
  | { dms: 'metrics-text'; id: number; text: string }
  | { dms: 'metrics-failed'; id: number; message: string }
  | { dms: 'collect-metrics'; id: number }
  /** Finish what is in flight, then exit (the primary is stopping). */
  | { dms: 'stop' };

/** The kind of a message of ours, or undefined for anything else on the channel. */
export const dmsMessageKind = (message: unknown): string | undefined =>
  isRecord(message) && typeof message.dms === 'string' ? message.dms : undefined;
