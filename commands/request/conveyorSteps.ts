import type { PrepareRequest, RecordSourcesUnavailable } from '../../domain/request/preparer.ts';
import type { RecordTransferReport } from '../../domain/request/poller.ts';
import { requestStreamName, type ActiveRequest, type Request } from '../../domain/request/request.ts';
import { requestDecider, type RequestCommand } from '../../domain/request/requestDecider.ts';
import type { SubmitTransfer } from '../../domain/request/submitter.ts';
import type {
  RecordTransferLimitStats,
  ReleaseRequest,
  ReturnRequestToPreparing,
} from '../../domain/request/throttler.ts';
import { TRANSFER_LIMITS_STREAM } from '../../domain/request/transferLimit.ts';
import { transferLimitsDecider } from '../../domain/request/transferLimitDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import {
  handleCommands,
  lastPosition,
  loadAggregate,
  onStream,
  type CommandContext,
  type DecisionOf,
} from '../handleCommand.ts';

/**
 * The conveyor's steps on requests, one atomic multi-stream step per batch: whatever the daemons'
 * workflows decided, each request decides on its own stream whether it still applies (a request
 * another worker moved meanwhile decides nothing). A batch of a thousand requests is one read of
 * each stream and one append.
 */

export const loadRequest = (context: CommandContext, requestId: string): Promise<Request> =>
  loadAggregate(context, requestDecider, requestStreamName(requestId));

const onRequest = (requestId: string, command: RequestCommand): DecisionOf<typeof requestDecider> =>
  onStream(requestDecider, requestStreamName(requestId), command);

export type StepOutcome = Readonly<{ position: bigint | undefined; changed: number }>;

/** Runs one command per request, all in one step; how many requests changed. */
const stepOnRequests = async (
  context: CommandContext,
  commands: readonly Readonly<{ requestId: string; command: RequestCommand }>[],
  metadata: CommandMetadata,
): Promise<StepOutcome & { states: ActiveRequest[] }> => {
  if (commands.length === 0) return { position: undefined, changed: 0, states: [] };
  const outcomes = await handleCommands(
    context,
    commands.map(({ requestId, command }) => onRequest(requestId, command)),
    { metadata },
  );
  const changed = outcomes.filter((outcome) => outcome.events.length > 0);
  return {
    position: lastPosition(outcomes),
    changed: changed.length,
    states: changed
      .map((outcome) => outcome.newState)
      .filter((state): state is ActiveRequest => state.status === 'Active'),
  };
};

/** The preparer's choices: PREPARING requests become QUEUED or WAITING, or find no source. */
export const prepareRequests = (
  context: CommandContext,
  outputs: readonly (PrepareRequest | RecordSourcesUnavailable)[],
  metadata: CommandMetadata,
): Promise<StepOutcome> =>
  stepOnRequests(
    context,
    outputs.map((output) => ({
      requestId: output.data.requestId,
      command:
        output.type === 'PrepareRequest'
          ? {
              type: 'PrepareRequest',
              data: {
                sourceRseId: output.data.sourceRseId,
                sourceRse: output.data.sourceRse,
                transfertool: output.data.transfertool,
                waiting: output.data.waiting,
              },
              metadata,
            }
          : {
              type: 'RecordSourcesUnavailable',
              data: { state: output.data.state, reason: output.data.reason },
              metadata,
            },
    })),
    metadata,
  );

/** The throttler's releases and returns, in one step. */
export const throttleRequests = (
  context: CommandContext,
  outputs: readonly (ReleaseRequest | ReturnRequestToPreparing)[],
  metadata: CommandMetadata,
): Promise<StepOutcome> =>
  stepOnRequests(
    context,
    outputs.map((output) => ({
      requestId: output.data.requestId,
      command:
        output.type === 'ReleaseRequest'
          ? { type: 'ReleaseRequest', data: {}, metadata }
          : { type: 'ReturnRequestToPreparing', data: {}, metadata },
    })),
    metadata,
  );

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

/**
 * The submitter's first step: the chosen requests become SUBMITTING (or NO_SOURCES, ...). Answers
 * the requests this step moved to SUBMITTING, with their state: only those go to the tools, so a
 * request another submitter took meanwhile is not submitted twice.
 */
export const markRequestsSubmitting = async (
  context: CommandContext,
  outputs: readonly (SubmitTransfer | RecordSourcesUnavailable)[],
  metadata: CommandMetadata,
): Promise<StepOutcome & { submitting: ActiveRequest[] }> => {
  const outcome = await stepOnRequests(
    context,
    outputs.map((output) => ({
      requestId: output.data.requestId,
      command:
        output.type === 'SubmitTransfer'
          ? {
              type: 'MarkRequestSubmitting',
              data: {
                sources: output.data.sources,
                destUrl: output.data.destUrl,
                transfertool: output.data.transfertool,
              },
              metadata,
            }
          : {
              type: 'RecordSourcesUnavailable',
              data: { state: output.data.state, reason: output.data.reason },
              metadata,
            },
    })),
    metadata,
  );
  return {
    position: outcome.position,
    changed: outcome.changed,
    submitting: outcome.states.filter((state) => state.state === 'SUBMITTING'),
  };
};

export type SubmissionResult =
  | Readonly<{ requestId: string; externalId: string; externalHost: string }>
  | Readonly<{ requestId: string; failure: string }>;

/** The submitter's second step: what the tools answered. */
export const recordSubmissions = (
  context: CommandContext,
  results: readonly SubmissionResult[],
  metadata: CommandMetadata,
): Promise<StepOutcome> =>
  stepOnRequests(
    context,
    results.map((result) => ({
      requestId: result.requestId,
      command:
        'failure' in result
          ? { type: 'RecordSubmissionFailure', data: { reason: result.failure }, metadata }
          : {
              type: 'RecordSubmission',
              data: { externalId: result.externalId, externalHost: result.externalHost },
              metadata,
            },
    })),
    metadata,
  );

/** The poller's reports: DONE, FAILED or LOST, each counted only for the request's current job. */
export const recordTransferReports = (
  context: CommandContext,
  outputs: readonly RecordTransferReport[],
  metadata: CommandMetadata,
): Promise<StepOutcome> =>
  stepOnRequests(
    context,
    outputs.map(({ data }) => ({
      requestId: data.requestId,
      command: {
        type: 'RecordTransferReport',
        data: {
          externalId: data.externalId,
          outcome: data.outcome,
          reason: data.reason,
          source: data.source,
          startedAt: data.startedAt,
          finishedAt: data.finishedAt,
        },
        metadata,
      },
    })),
    metadata,
  );
