import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';
import type { RequestType, SubmittedSource } from './request.ts';
import {
  withoutSource,
  type CandidateReplica,
  type RecordSourcesUnavailable,
  type SelectionRequest,
  type SourceSelection,
} from './sourceSelection.ts';
import { selectSourcesFor } from './stageinSelection.ts';
import type { Topology } from './topology.ts';
import { hopIdOf } from './transferHops.ts';

/**
 * The conveyor-submitter and the conveyor-stager (behaviour rules 22 and 23; Rucio's stager is its
 * submitter for STAGEIN requests): for each QUEUED request, the sources, the destination URL and
 * the tool of its transfer. A source the preparer chose is tried first while the request is
 * younger than six hours (Rucio's `requested_source_only` pass), then every source. The worker
 * marks the chosen requests SUBMITTING, hands them to their tools in bulk and records what the
 * tools answer.
 *
 * A request whose best path passes through other RSEs (transferPaths.ts) gets its intermediate
 * hops (transferHops.ts): the copies of the path are submitted in order, the first ones together
 * when one tool runs them as one job (FTS's multihop jobs, `pathTools`), otherwise one at a time,
 * each copy waiting for the one before it.
 */

/** A copy of a multihop path before the request's own, as the submitter queues it. */
export type PathCopy = Readonly<{
  id: string;
  destRseId: string;
  destRse: string;
  source: SubmittedSource;
  destUrl: string;
  transfertool: string;
  /** Seconds its intermediate replica is kept (`multihop_tombstone_delay`). */
  tombstoneDelay: number | string;
}>;

export type SubmitTransfer = WorkflowOutput<
  'SubmitTransfer',
  {
    requestId: string;
    sources: readonly SubmittedSource[];
    destUrl: string;
    transfertool: string;
    /**
     * Multihop: the path's RSEs and the copies before the request's own; `submitNow` copies of the
     * whole path (the hops, then the request itself) go to their tool now, as one job.
     */
    path?: Readonly<{ rses: readonly string[]; hops: readonly PathCopy[]; submitNow: number }>;
  }
>;

export type QueuedRequest = SelectionRequest &
  Readonly<{
    requestedAt: string;
    /** A copy on the way to another request's destination: it takes a direct path only. */
    intermediateHop?: boolean;
  }>;

export type SubmitterFacts = Readonly<{
  topology: Topology;
  requests: readonly QueuedRequest[];
  /** The AVAILABLE replicas of each request's file, by request id. */
  replicas: ReadonlyMap<string, readonly CandidateReplica[]>;
  /** The tools that run several copies of a path as one job (fts3); others take one copy at a time. */
  pathTools?: ReadonlySet<string>;
}>;

/** How long the preparer's choice of source is kept to (Rucio: 6 hours). */
export const PREFERRED_SOURCE_HOURS = 6;

type SubmissionOutput = SubmitTransfer | RecordSourcesUnavailable | Skipped;

/** The copies of a path submitted at once: the first, and those after it with the same tool when that tool runs paths. */
const copiesSubmittedNow = (tools: readonly string[], pathTools: ReadonlySet<string>): number => {
  const first = tools[0]!;
  if (!pathTools.has(first)) return 1;
  let count = 1;
  while (count < tools.length && tools[count] === first) count += 1;
  return count;
};

const outputOf = (
  topology: Topology,
  request: QueuedRequest,
  selection: SourceSelection,
  pathTools: ReadonlySet<string>,
): SubmissionOutput => {
  switch (selection.kind) {
    case 'blocked':
    case 'unavailable':
      return withoutSource(request.id, selection);
    case 'selected': {
      const { sources, destUrl, transfertool, hops } = selection;
      if (!hops) return { type: 'SubmitTransfer', data: { requestId: request.id, sources, destUrl, transfertool } };
      if (request.intermediateHop)
        return {
          type: 'RecordSourcesUnavailable',
          data: { requestId: request.id, state: 'NO_SOURCES', reason: 'an intermediate hop takes a direct path only' },
        };
      const copies = hops.map((hop, index) => ({
        id: hopIdOf(request.id, index),
        destRseId: hop.destRseId,
        destRse: hop.destRse,
        source: hop.source,
        destUrl: hop.destUrl,
        transfertool: hop.transfertool,
        tombstoneDelay: topology.multihopTombstoneDelay(topology.rse(hop.destRseId)!),
      }));
      const rses = [hops[0]!.source.rse, ...hops.map((hop) => hop.destRse), topology.rse(request.destRseId)!.rse];
      const submitNow = copiesSubmittedNow([...hops.map((hop) => hop.transfertool), transfertool], pathTools);
      return {
        type: 'SubmitTransfer',
        data: { requestId: request.id, sources, destUrl, transfertool, path: { rses, hops: copies, submitNow } },
      };
    }
  }
};

/** The submitter for one type of request. */
const submission = (
  name: string,
  requestType: RequestType,
): Workflow<Readonly<{ now: string }>, SubmitterFacts, SubmissionOutput> => ({
  name,
  decide: ({ now }, { topology, requests, replicas, pathTools }) => {
    const recent = Date.parse(now) - PREFERRED_SOURCE_HOURS * 3_600_000;
    return requests.map((request): SubmissionOutput => {
      if (request.requestType !== requestType)
        return {
          type: 'Skipped',
          data: {
            what: request.id,
            reason:
              request.requestType === 'STAGEIN'
                ? 'STAGEIN requests are the stager’s'
                : `${request.requestType} requests are not the ${name}’s`,
          },
        };
      const preferredSourceRseId = Date.parse(request.requestedAt) >= recent ? request.preferredSourceRseId : null;
      const selection = selectSourcesFor(
        topology,
        { ...request, preferredSourceRseId },
        replicas.get(request.id) ?? [],
      );
      return outputOf(topology, request, selection, pathTools ?? new Set());
    });
  },
});

export const submitter = submission('conveyor-submitter', 'TRANSFER');

/** Rucio's conveyor-stager: the submitter of STAGEIN requests, whose jobs bring files online where they are. */
export const stager = submission('conveyor-stager', 'STAGEIN');
