import type { PrepareRequest } from '../../domain/request/preparer.ts';
import type { RecordSourcesUnavailable } from '../../domain/request/sourceSelection.ts';
import type { RecordTransferReport } from '../../domain/request/poller.ts';
import { requestIdsOf } from '../../domain/request/request.ts';
import type { ActiveRequest, RequestBatch } from '../../domain/request/requestBatch.ts';
import { requestDecider, type RequestCommand } from '../../domain/request/requestDecider.ts';
import type {
  RecordTransferLimitStats,
  ReleaseRequest,
  ReturnRequestToPreparing,
} from '../../domain/request/throttler.ts';
import { TRANSFER_LIMITS_STREAM } from '../../domain/request/transferLimit.ts';
import { transferLimitsDecider } from '../../domain/request/transferLimitDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { handleCommands, lastPosition, loadAggregate, onStream, type CommandContext } from '../handleCommand.ts';

/**
 * The conveyor's steps on requests, one atomic multi-stream step per page: whatever the daemons'
 * workflows decided, each batch stream decides whether it still applies to each of its requests
 * (a request another worker moved meanwhile is left out), and records the requests it moves as one
 * event per kind of move. A page of a thousand requests of a few batches is a read of each batch
 * and a few events (docs/architecture.md, "Event granularity").
 *
 * The daemons find requests in the read model, which records each request's stream: `streams`
 * maps the ids a step names to them.
 */

/** The batch stream of each request a step names, by request id. */
export type RequestStreams = ReadonlyMap<string, string>;

export const loadRequestBatch = (context: CommandContext, streamName: string): Promise<RequestBatch> =>
  loadAggregate(context, requestDecider, streamName);

export type StepOutcome = Readonly<{ position: bigint | undefined; changed: number }>;

const streamOf = (streams: RequestStreams, requestId: string): string => {
  const stream = streams.get(requestId);
  if (stream === undefined) throw new Error(`No stream known for request ${requestId}`);
  return stream;
};

/**
 * Items grouped by the stream of their request, each group made into its commands by `commands`;
 * all in one step. Answers how many requests moved, and the requests the step's events name with
 * their new state.
 */
const stepOnBatches = async <I extends Readonly<{ requestId: string }>>(
  context: CommandContext,
  items: readonly I[],
  streams: RequestStreams,
  commands: (items: readonly I[]) => RequestCommand[],
  metadata: CommandMetadata,
): Promise<StepOutcome & { moved: ActiveRequest[] }> => {
  const byStream = new Map<string, I[]>();
  for (const item of items) {
    const stream = streamOf(streams, item.requestId);
    const group = byStream.get(stream);
    if (group) group.push(item);
    else byStream.set(stream, [item]);
  }
  if (byStream.size === 0) return { position: undefined, changed: 0, moved: [] };
  const outcomes = await handleCommands(
    context,
    [...byStream].map(([stream, group]) => onStream(requestDecider, stream, commands(group))),
    { metadata },
  );
  const moved: ActiveRequest[] = [];
  let changed = 0;
  for (const outcome of outcomes) {
    const ids = new Set(outcome.events.flatMap(requestIdsOf));
    changed += ids.size;
    for (const id of ids) {
      const request = outcome.newState.requests.get(id);
      if (request?.status === 'Active') moved.push(request);
    }
  }
  return { position: lastPosition(outcomes), changed, moved };
};

/** The commands for items of two kinds, each kind one command when it has items. */
const split = <A, B>(
  items: readonly (A | B)[],
  isA: (item: A | B) => item is A,
  makeA: (items: A[]) => RequestCommand,
  makeB: (items: B[]) => RequestCommand,
): RequestCommand[] => {
  const as = items.filter(isA);
  const bs = items.filter((item): item is B => !isA(item));
  return [...(as.length > 0 ? [makeA(as)] : []), ...(bs.length > 0 ? [makeB(bs)] : [])];
};

/** The preparer's choices: PREPARING requests become QUEUED or WAITING, or find no source. */
export const prepareRequests = async (
  context: CommandContext,
  outputs: readonly (PrepareRequest | RecordSourcesUnavailable)[],
  streams: RequestStreams,
  metadata: CommandMetadata,
): Promise<StepOutcome> => {
  type Prepared = PrepareRequest['data'] & { kind: 'prepared' };
  type Sourceless = RecordSourcesUnavailable['data'] & { kind: 'sourceless' };
  const { position, changed } = await stepOnBatches(
    context,
    outputs.map((output): Prepared | Sourceless =>
      output.type === 'PrepareRequest' ? { ...output.data, kind: 'prepared' } : { ...output.data, kind: 'sourceless' },
    ),
    streams,
    (items) =>
      split<Prepared, Sourceless>(
        items,
        (item): item is Prepared => item.kind === 'prepared',
        (prepared) => ({
          type: 'PrepareRequests',
          data: {
            requests: prepared.map(({ requestId, sourceRseId, sourceRse, transfertool, waiting }) => ({
              requestId,
              sourceRseId,
              sourceRse,
              transfertool,
              waiting,
            })),
          },
          metadata,
        }),
        (sourceless) => ({
          type: 'RecordSourcesUnavailable',
          data: { requests: sourceless.map(({ requestId, state, reason }) => ({ requestId, state, reason })) },
          metadata,
        }),
      ),
    metadata,
  );
  return { position, changed };
};

/** The throttler's releases and returns, in one step. */
export const throttleRequests = async (
  context: CommandContext,
  outputs: readonly (ReleaseRequest | ReturnRequestToPreparing)[],
  streams: RequestStreams,
  metadata: CommandMetadata,
): Promise<StepOutcome> => {
  type Release = { requestId: string; release: true };
  type Return = { requestId: string; release: false };
  const { position, changed } = await stepOnBatches(
    context,
    outputs.map((output): Release | Return =>
      output.type === 'ReleaseRequest'
        ? { requestId: output.data.requestId, release: true }
        : { requestId: output.data.requestId, release: false },
    ),
    streams,
    (items) =>
      split<Release, Return>(
        items,
        (item): item is Release => item.release,
        (released) => ({
          type: 'ReleaseRequests',
          data: { requests: released.map(({ requestId }) => ({ requestId })) },
          metadata,
        }),
        (returned) => ({
          type: 'ReturnRequestsToPreparing',
          data: { requests: returned.map(({ requestId }) => ({ requestId })) },
          metadata,
        }),
      ),
    metadata,
  );
  return { position, changed };
};

/** What the throttler observed under each limit, recorded where it changed. */
export const recordTransferLimitStats = async (
  context: CommandContext,
  outputs: readonly RecordTransferLimitStats[],
  metadata: CommandMetadata,
): Promise<StepOutcome> => {
  if (outputs.length === 0) return { position: undefined, changed: 0 };
  const [outcome] = await handleCommands(context, [
    onStream(
      transferLimitsDecider,
      TRANSFER_LIMITS_STREAM,
      outputs.map((output) => ({ type: 'RecordTransferLimitStats' as const, data: output.data, metadata })),
    ),
  ]);
  return { position: outcome!.position, changed: outcome!.events.length };
};

export type SubmissionResult =
  | Readonly<{ requestId: string; externalId: string; externalHost: string }>
  | Readonly<{ requestId: string; failure: string }>;

/** The submitter's second step: what the tools answered. */
export const recordSubmissions = async (
  context: CommandContext,
  results: readonly SubmissionResult[],
  streams: RequestStreams,
  metadata: CommandMetadata,
): Promise<StepOutcome> => {
  type Accepted = Readonly<{ requestId: string; externalId: string; externalHost: string }>;
  type Refused = Readonly<{ requestId: string; failure: string }>;
  const { position, changed } = await stepOnBatches(
    context,
    results,
    streams,
    (items) =>
      split<Accepted, Refused>(
        items,
        (item): item is Accepted => !('failure' in item),
        (accepted) => ({
          type: 'RecordSubmissions',
          data: {
            requests: accepted.map(({ requestId, externalId, externalHost }) => ({
              requestId,
              externalId,
              externalHost,
            })),
          },
          metadata,
        }),
        (refused) => ({
          type: 'RecordSubmissionFailures',
          data: { requests: refused.map(({ requestId, failure }) => ({ requestId, reason: failure })) },
          metadata,
        }),
      ),
    metadata,
  );
  return { position, changed };
};

/** The poller's reports: DONE, FAILED or LOST, each counted only for the request's current job. */
export const recordTransferReports = async (
  context: CommandContext,
  outputs: readonly RecordTransferReport[],
  streams: RequestStreams,
  metadata: CommandMetadata,
): Promise<StepOutcome> => {
  const { position, changed } = await stepOnBatches(
    context,
    outputs.map((output) => output.data),
    streams,
    (reports) => [
      {
        type: 'RecordTransferReports',
        data: {
          requests: reports.map((report) => ({
            requestId: report.requestId,
            externalId: report.externalId,
            outcome: report.outcome,
            reason: report.reason,
            source: report.source,
            startedAt: report.startedAt,
            finishedAt: report.finishedAt,
            ...(report.stagingStartedAt !== undefined ? { stagingStartedAt: report.stagingStartedAt } : {}),
            ...(report.stagingFinishedAt !== undefined ? { stagingFinishedAt: report.stagingFinishedAt } : {}),
          })),
        },
        metadata,
      },
    ],
    metadata,
  );
  return { position, changed };
};
