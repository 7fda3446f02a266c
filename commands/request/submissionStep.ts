import { didStreamName } from '../../domain/did/did.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import { tombstoneFromDelay } from '../../domain/replica/replicaRegistration.ts';
import { requestIdsOf } from '../../domain/request/request.ts';
import type { ActiveRequest } from '../../domain/request/requestBatch.ts';
import { requestDecider, type RequestCommand } from '../../domain/request/requestDecider.ts';
import type { SubmitTransfer } from '../../domain/request/submitter.ts';
import type { RecordSourcesUnavailable } from '../../domain/request/sourceSelection.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import {
  handleCommands,
  lastPosition,
  onStream,
  outcomeOn,
  type CommandContext,
  type DecidedStates,
} from '../handleCommand.ts';
import type { RequestStreams, StepOutcome } from './conveyorSteps.ts';

/**
 * The submitter's first step: the chosen requests become SUBMITTING (or NO_SOURCES, ...), in one
 * atomic step, before any tool is asked. A request on a multihop path first gets its path
 * (transferHops.ts) in the same step: each intermediate replica, COPYING with its tombstone, on
 * the file's stream, then the hops queued in the request's batch; the copies the workflow submits
 * now become SUBMITTING, the others wait QUEUED for the copy before them. A path whose
 * intermediate replica cannot be made now (another transfer brings it, or it is there already)
 * is left out, its request QUEUED for a later cycle.
 *
 * Answers the requests this step moved to SUBMITTING, with their state: only those go to the
 * tools, so a request another submitter took meanwhile is not submitted twice; and the copies of
 * each path submitted together, which go to their tool as one job.
 */

/** The file of a request, as its intermediate replicas record it. */
export type RequestFile = Readonly<{
  scope: string;
  name: string;
  bytes: number;
  md5: string | null;
  adler32: string | null;
}>;

export type SubmissionStep = StepOutcome & {
  submitting: ActiveRequest[];
  /** The copies submitted together as one job, by the initial request's id: the path's copies in order. */
  paths: Map<string, string[]>;
};

type Path = NonNullable<SubmitTransfer['data']['path']>;

export const markRequestsSubmitting = async (
  context: CommandContext,
  outputs: readonly (SubmitTransfer | RecordSourcesUnavailable)[],
  streams: RequestStreams,
  metadata: CommandMetadata,
  /** The file of each request on a multihop path (its intermediate replicas need its size and checksums). */
  files: ReadonlyMap<string, RequestFile> = new Map(),
): Promise<SubmissionStep> => {
  const streamOf = (requestId: string): string => {
    const stream = streams.get(requestId);
    if (stream === undefined) throw new Error(`No stream known for request ${requestId}`);
    return stream;
  };
  const byStream = new Map<string, (SubmitTransfer | RecordSourcesUnavailable)[]>();
  for (const output of outputs) {
    const stream = streamOf(output.data.requestId);
    byStream.set(stream, [...(byStream.get(stream) ?? []), output]);
  }
  if (byStream.size === 0) return { position: undefined, changed: 0, submitting: [], paths: new Map() };

  // 1. The intermediate replicas of every path, on the files' streams.
  const replicas = new Map<string, DidStreamCommand[]>();
  for (const output of outputs) {
    if (output.type !== 'SubmitTransfer' || !output.data.path) continue;
    const file = files.get(output.data.requestId);
    if (!file) throw new Error(`No file known for request ${output.data.requestId}`);
    const stream = didStreamName(file.scope, file.name);
    for (const hop of output.data.path.hops)
      replicas.set(stream, [
        ...(replicas.get(stream) ?? []),
        {
          type: 'AddIntermediateReplica',
          data: {
            scope: file.scope,
            name: file.name,
            rse: hop.destRse,
            rseId: hop.destRseId,
            bytes: file.bytes,
            md5: file.md5,
            adler32: file.adler32,
            tombstone: tombstoneFromDelay(hop.tombstoneDelay, metadata.now),
            request: { id: hop.id, stream: streamOf(output.data.requestId) },
          },
          metadata,
        },
      ]);
  }
  /** Whether every intermediate replica of a path waits for its hop once the files are decided. */
  const pathReady = (decided: DecidedStates, requestId: string, path: Path): boolean => {
    const file = files.get(requestId)!;
    const replicasOf = decided.stateOf(didStreamDecider, didStreamName(file.scope, file.name))?.replicas;
    return path.hops.every((hop) => replicasOf?.get(hop.destRseId)?.pendingRequest?.id === hop.id);
  };

  // 2. Per batch: the paths that can be made, then what becomes SUBMITTING (or has no source).
  const paths = new Map<string, string[]>();
  const batchCommands =
    (group: readonly (SubmitTransfer | RecordSourcesUnavailable)[]) =>
    (decided: DecidedStates): RequestCommand[] => {
      const queued: { initialRequestId: string; path: Path }[] = [];
      const submitting: {
        requestId: string;
        sources: SubmitTransfer['data']['sources'];
        destUrl: string;
        transfertool: string;
      }[] = [];
      const sourceless: RecordSourcesUnavailable['data'][] = [];
      for (const output of group) {
        if (output.type === 'RecordSourcesUnavailable') {
          sourceless.push(output.data);
          continue;
        }
        const { requestId, sources, destUrl, transfertool, path } = output.data;
        if (!path) {
          submitting.push({ requestId, sources, destUrl, transfertool });
          continue;
        }
        if (!pathReady(decided, requestId, path)) continue;
        queued.push({ initialRequestId: requestId, path });
        const copies = [
          ...path.hops.map((hop) => ({
            requestId: hop.id,
            sources: [hop.source],
            destUrl: hop.destUrl,
            transfertool: hop.transfertool,
          })),
          { requestId, sources, destUrl, transfertool },
        ].slice(0, Math.max(1, path.submitNow));
        submitting.push(...copies);
        if (copies.length > 1)
          paths.set(
            requestId,
            copies.map((copy) => copy.requestId),
          );
      }
      return [
        ...(queued.length > 0
          ? [
              {
                type: 'QueueRequestHops' as const,
                data: {
                  paths: queued.map(({ initialRequestId, path }) => ({
                    initialRequestId,
                    path: path.rses,
                    hops: path.hops.map((hop, index) => ({
                      id: hop.id,
                      destRseId: hop.destRseId,
                      destRse: hop.destRse,
                      sourceRse: index === 0 ? hop.source.rse : path.hops[index - 1]!.destRse,
                    })),
                  })),
                },
                metadata,
              },
            ]
          : []),
        ...(submitting.length > 0
          ? [{ type: 'MarkRequestsSubmitting' as const, data: { requests: submitting }, metadata }]
          : []),
        ...(sourceless.length > 0
          ? [
              {
                type: 'RecordSourcesUnavailable' as const,
                data: { requests: sourceless.map(({ requestId, state, reason }) => ({ requestId, state, reason })) },
                metadata,
              },
            ]
          : []),
      ];
    };

  const outcomes = await handleCommands(
    context,
    [
      ...[...replicas].map(([stream, commands]) => onStream(didStreamDecider, stream, commands)),
      ...[...byStream].map(([stream, group]) => onStream(requestDecider, stream, batchCommands(group))),
    ],
    { metadata },
  );
  const submitting: ActiveRequest[] = [];
  let changed = 0;
  for (const stream of byStream.keys()) {
    const outcome = outcomeOn(outcomes, requestDecider, stream);
    if (!outcome) continue;
    const ids = new Set(outcome.events.flatMap(requestIdsOf));
    changed += ids.size;
    for (const id of ids) {
      const request = outcome.newState.requests.get(id);
      if (request?.status === 'Active' && request.state === 'SUBMITTING') submitting.push(request);
    }
  }
  // A path whose copies another submitter took meanwhile is not submitted as one job.
  const submittingIds = new Set(submitting.map((request) => request.record.id));
  for (const [initialRequestId, copies] of paths)
    if (!copies.every((id) => submittingIds.has(id))) paths.delete(initialRequestId);
  return { position: lastPosition(outcomes), changed, submitting, paths };
};
