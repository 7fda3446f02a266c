import type { Skipped, Workflow, WorkflowOutput } from '../shared/workflow.ts';
import {
  withoutSource,
  type CandidateReplica,
  type RecordSourcesUnavailable,
  type SelectionRequest,
} from './sourceSelection.ts';
import { selectSourcesFor } from './stageinSelection.ts';
import type { Topology } from './topology.ts';
import { applicableLimits, type BoundLimit } from './transferLimitBinding.ts';

/**
 * The conveyor-preparer (Rucio's preparer, behaviour rules 23 and 24): for each PREPARING request,
 * the source the submitter will use and the transfer tool, and whether a transfer limit applies
 * to that link (the request then WAITs for the throttler) or not (QUEUED). A request without a
 * usable source ends NO_SOURCES, ONLY_TAPE_SOURCES or MISMATCH_SCHEME; one whose destination
 * cannot take writes stays PREPARING. Transfers and STAGEIN requests alike; a multihop path's
 * source is its first copy's, its tool the request's own copy's.
 */

export type PrepareRequest = WorkflowOutput<
  'PrepareRequest',
  { requestId: string; sourceRseId: string; sourceRse: string; transfertool: string; waiting: boolean }
>;

export type PreparingRequest = SelectionRequest & Readonly<{ activity: string }>;

export type PreparerFacts = Readonly<{
  topology: Topology;
  limits: readonly BoundLimit[];
  requests: readonly PreparingRequest[];
  /** The AVAILABLE replicas of each request's file, by request id. */
  replicas: ReadonlyMap<string, readonly CandidateReplica[]>;
}>;

export const preparer: Workflow<
  Readonly<{ now: string }>,
  PreparerFacts,
  PrepareRequest | RecordSourcesUnavailable | Skipped
> = {
  name: 'conveyor-preparer',
  decide: (_input, { topology, limits, requests, replicas }) =>
    requests.map((request): PrepareRequest | RecordSourcesUnavailable | Skipped => {
      if (request.requestType !== 'TRANSFER' && request.requestType !== 'STAGEIN')
        return {
          type: 'Skipped',
          data: { what: request.id, reason: `${request.requestType} requests are not the preparer’s` },
        };
      const selection = selectSourcesFor(
        topology,
        { ...request, preferredSourceRseId: null },
        replicas.get(request.id) ?? [],
      );
      switch (selection.kind) {
        case 'blocked':
        case 'unavailable':
          return withoutSource(request.id, selection);
        case 'selected': {
          // A multihop path starts at its first copy's source (Rucio's preparer records that one).
          const source = selection.hops?.[0]?.source ?? selection.sources[0]!;
          const waiting = applicableLimits(limits, source.rseId, request.destRseId, request.activity).length > 0;
          return {
            type: 'PrepareRequest',
            data: {
              requestId: request.id,
              sourceRseId: source.rseId,
              sourceRse: source.rse,
              transfertool: selection.transfertool,
              waiting,
            },
          };
        }
      }
    }),
};
