import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';
import type { SourcelessState, SubmittedSource } from './request.ts';
import { selectSources, type CandidateReplica, type SelectionRequest } from './sourceSelection.ts';
import type { Topology } from './topology.ts';

/**
 * The conveyor-submitter (behaviour rules 22 and 23): for each QUEUED request, the sources, the
 * destination URL and the tool of its transfer. A source the preparer chose is tried first while
 * the request is younger than six hours (Rucio's `requested_source_only` pass), then every
 * source. The worker marks the chosen requests SUBMITTING, hands them to their tools in bulk and
 * records what the tools answer.
 */

export type SubmitTransfer = WorkflowOutput<
  'SubmitTransfer',
  { requestId: string; sources: readonly SubmittedSource[]; destUrl: string; transfertool: string }
>;
export type RecordSourcesUnavailable = WorkflowOutput<
  'RecordSourcesUnavailable',
  { requestId: string; state: SourcelessState; reason: string }
>;

export type QueuedRequest = SelectionRequest & Readonly<{ requestedAt: string }>;

export type SubmitterFacts = Readonly<{
  topology: Topology;
  requests: readonly QueuedRequest[];
  /** The AVAILABLE replicas of each request's file, by request id. */
  replicas: ReadonlyMap<string, readonly CandidateReplica[]>;
}>;

/** How long the preparer's choice of source is kept to (Rucio: 6 hours). */
export const PREFERRED_SOURCE_HOURS = 6;

export const submitter: Workflow<
  Readonly<{ now: string }>,
  SubmitterFacts,
  SubmitTransfer | RecordSourcesUnavailable | Skipped
> = {
  name: 'conveyor-submitter',
  decide: ({ now }, { topology, requests, replicas }) => {
    const recent = Date.parse(now) - PREFERRED_SOURCE_HOURS * 3_600_000;
    return requests.map((request): SubmitTransfer | RecordSourcesUnavailable | Skipped => {
      if (request.requestType !== 'TRANSFER')
        return {
          type: 'Skipped',
          data: { what: request.id, reason: `${request.requestType} requests wait for the stager, which is not built` },
        };
      const preferredSourceRseId = Date.parse(request.requestedAt) >= recent ? request.preferredSourceRseId : null;
      const selection = selectSources(topology, { ...request, preferredSourceRseId }, replicas.get(request.id) ?? []);
      switch (selection.kind) {
        case 'blocked':
          return { type: 'Skipped', data: { what: request.id, reason: selection.reason } };
        case 'unavailable':
          return {
            type: 'RecordSourcesUnavailable',
            data: { requestId: request.id, state: selection.state, reason: selection.reason },
          };
        case 'selected':
          return {
            type: 'SubmitTransfer',
            data: {
              requestId: request.id,
              sources: selection.sources,
              destUrl: selection.destUrl,
              transfertool: selection.transfertool,
            },
          };
      }
    });
  },
};
