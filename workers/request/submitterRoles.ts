import { isoOf } from '../../infra/clock.ts';
import { recordSubmissions } from '../../commands/request/conveyorSteps.ts';
import { markRequestsSubmitting, type RequestFile } from '../../commands/request/submissionStep.ts';
import { settingValue, SETTINGS, type Setting } from '../../domain/config/settings.ts';
import type { RequestType } from '../../domain/request/request.ts';
import { stager, submitter } from '../../domain/request/submitter.ts';
import type { Topology } from '../../domain/request/topology.ts';
import {
  candidateReplicas,
  loadTopology,
  pageMarkOf,
  queuedRequests,
  requestStreams,
  selectionRequestOf,
  type PageMark,
} from '../../projections/request/conveyorQueries.ts';
import type { RequestDocument } from '../../projections/request/requests.ts';
import { skippedOf, stepOf, withoutSkipped, type ScheduledRole, type SkippedItem } from '../role.ts';
import { submitToTools } from './transferJobs.ts';

/**
 * The submitter and the stager (Rucio's stager is its submitter for STAGEIN requests), as
 * scheduled roles: a page of QUEUED requests of their type at a time (those waiting for the copy
 * before them on a multihop path left out), the workflow's choices marked SUBMITTING in one
 * atomic step (with the paths of multihop requests), the tools asked in bulk, and their answers
 * recorded in a second step.
 */

const fileOf = (document: RequestDocument): RequestFile => ({
  scope: document.scope,
  name: document.name,
  bytes: document.bytes,
  md5: document.md5,
  adler32: document.adler32,
});

const submissionRole = (
  workflow: typeof submitter,
  requestType: RequestType,
  interval: Setting<number>,
  chunkSize: Setting<number>,
): ScheduledRole => ({
  kind: 'scheduled',
  name: workflow.name,
  interval,
  settings: [chunkSize, SETTINGS.conveyorBringOnline],
  async run(trigger, context) {
    const sections = await context.settings();
    const chunk = settingValue(sections, chunkSize);
    const pathTools = new Set(context.transferTools.names().filter((name) => context.transferTools.runsPaths(name)));
    const skipped: SkippedItem[] = [];
    let done = 0;
    let mark: PageMark | undefined;
    let topology: Topology | undefined;
    for (let page = 0; ; page += 1) {
      const documents = await queuedRequests(context.readModels, requestType, chunk, mark);
      if (documents.length === 0) break;
      mark = pageMarkOf(documents, 'requested_at');
      topology ??= await loadTopology(context.readModels, sections);
      const outputs = workflow.decide(
        { now: isoOf(context.clock) },
        {
          topology,
          requests: documents.map((document) => ({
            ...selectionRequestOf(document),
            requestedAt: document.requested_at,
            ...(document.attributes.is_intermediate_hop === true ? { intermediateHop: true } : {}),
          })),
          replicas: await candidateReplicas(context.readModels, documents),
          pathTools,
        },
      );
      skipped.push(...skippedOf(outputs));
      // 1. SUBMITTING first (with the paths of multihop requests): a crash after this leaves a
      // request the finisher retries, never a job nobody knows of.
      const streams = requestStreams(documents);
      const marked = await markRequestsSubmitting(
        context.commands,
        withoutSkipped(outputs),
        streams,
        stepOf(workflow.name, trigger, `mark-${page}`, context.clock),
        new Map(documents.map((document) => [document.id, fileOf(document)])),
      );
      // 2. The tools, in bulk; 3. what they answered.
      const results = await submitToTools(context, marked.submitting, topology, marked.paths, sections);
      // The hops this step queued are in their initial request's batch.
      const allStreams = new Map(streams);
      for (const request of marked.submitting)
        if (request.transferHop && !allStreams.has(request.record.id))
          allStreams.set(request.record.id, streams.get(request.transferHop.initialRequestId)!);
      await recordSubmissions(
        context.commands,
        results,
        allStreams,
        stepOf(workflow.name, trigger, `submitted-${page}`, context.clock),
      );
      done += marked.changed;
    }
    return { done, skipped };
  },
});

export const submitterRole = submissionRole(
  submitter,
  'TRANSFER',
  SETTINGS.submitterInterval,
  SETTINGS.submitterChunkSize,
);

/** Rucio's conveyor-stager: brings files on tape online into the staging areas that asked for them. */
export const stagerRole = submissionRole(stager, 'STAGEIN', SETTINGS.stagerInterval, SETTINGS.stagerChunkSize);
