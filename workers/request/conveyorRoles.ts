import { isoOf } from '../../infra/clock.ts';
import { pickFtsServer } from '../../infra/transfer/fts3TransferTool.ts';
import { finishRequests } from '../../commands/request/requestFinishing.ts';
import {
  markRequestsSubmitting,
  prepareRequests,
  recordSubmissions,
  recordTransferLimitStats,
  recordTransferReports,
  throttleRequests,
  type SubmissionResult,
} from '../../commands/request/conveyorSteps.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { finisher } from '../../domain/request/finisher.ts';
import { jobsToPoll, poller, type ToolReport } from '../../domain/request/poller.ts';
import { preparer } from '../../domain/request/preparer.ts';
import { REQUEST_EVENT_TYPES, type ActiveRequest } from '../../domain/request/request.ts';
import { submitter } from '../../domain/request/submitter.ts';
import { throttler, type RecordTransferLimitStats } from '../../domain/request/throttler.ts';
import type { Topology } from '../../domain/request/topology.ts';
import { localRootOf } from '../../domain/rse/lfn2pfn.ts';
import { bindLimits } from '../../domain/request/transferLimits.ts';
import type { TransferEndpoint, TransferJob } from '../../infra/transfer/transferTool.ts';
import {
  candidateReplicas,
  finishedRequestOf,
  FINISHER_STATES,
  loadTopology,
  pageMarkOf,
  requestsInState,
  requestStreams,
  selectionRequestOf,
  submittedRequestOf,
  throttledRequests,
  transferLimits,
  type PageMark,
} from '../../projections/request/conveyorQueries.ts';
import {
  eventRole,
  messageOf,
  skippedOf,
  stepOf,
  withoutSkipped,
  type ScheduledRole,
  type SkippedItem,
} from '../role.ts';
import type { WorkerContext } from '../workerContext.ts';

/**
 * Rucio's conveyor as roles: the preparer, throttler, submitter, poller and finisher run on
 * schedules and work through what the read models show, a page at a time; the canceller reacts to
 * cancelled requests. Each page is one workflow decision (domain/request/) and one atomic step of
 * commands, issued as root with the job and the page as their cause, so a job run again appends
 * nothing twice. Only the submitter, poller and canceller talk to transfer tools.
 */

export const preparerRole: ScheduledRole = {
  kind: 'scheduled',
  name: preparer.name,
  interval: SETTINGS.preparerInterval,
  settings: [SETTINGS.preparerChunkSize],
  async run(trigger, context) {
    const sections = await context.settings();
    const chunk = settingValue(sections, SETTINGS.preparerChunkSize);
    const skipped: SkippedItem[] = [];
    let done = 0;
    let mark: PageMark | undefined;
    let topology: Topology | undefined;
    for (let page = 0; ; page += 1) {
      const documents = await requestsInState(context.readModels, 'PREPARING', 'requested_at', chunk, mark);
      if (documents.length === 0) break;
      mark = pageMarkOf(documents, 'requested_at');
      topology ??= await loadTopology(context.readModels, sections);
      const limits = bindLimits(topology, await transferLimits(context.readModels));
      const outputs = preparer.decide(
        { now: isoOf(context.clock) },
        {
          topology,
          limits,
          requests: documents.map((document) => ({ ...selectionRequestOf(document), activity: document.activity })),
          replicas: await candidateReplicas(context.readModels, documents),
        },
      );
      skipped.push(...skippedOf(outputs));
      done += (
        await prepareRequests(
          context.commands,
          withoutSkipped(outputs),
          requestStreams(documents),
          stepOf(preparer.name, trigger, `prepare-${page}`, context.clock),
        )
      ).changed;
    }
    return { done, skipped };
  },
};

export const throttlerRole: ScheduledRole = {
  kind: 'scheduled',
  name: throttler.name,
  interval: SETTINGS.throttlerInterval,
  async run(trigger, context) {
    const limits = await transferLimits(context.readModels);
    const { requests, streams } = await throttledRequests(context.readModels, limits.length > 0);
    if (requests.length === 0 && limits.length === 0) return { done: 0, skipped: [] };
    const topology = await loadTopology(context.readModels, await context.settings());
    const outputs = throttler.decide(
      { now: isoOf(context.clock) },
      { topology, limits: bindLimits(topology, limits), requests },
    );
    const moves = outputs.filter(
      (output): output is Exclude<(typeof outputs)[number], RecordTransferLimitStats> =>
        output.type !== 'RecordTransferLimitStats',
    );
    const stats = outputs.filter(
      (output): output is RecordTransferLimitStats => output.type === 'RecordTransferLimitStats',
    );
    const moved = await throttleRequests(
      context.commands,
      moves,
      streams,
      stepOf(throttler.name, trigger, 'release', context.clock),
    );
    // The counts go in a step of their own, caused by what they are, so a job run again with
    // other counts records them rather than taking them for the first run's.
    const statsCause = stats
      .map((output) => `${output.data.id}:${output.data.transfers}:${output.data.waitings}`)
      .join(',');
    await recordTransferLimitStats(
      context.commands,
      stats,
      stepOf(throttler.name, trigger, `stats-${statsCause}`, context.clock),
    );
    return { done: moved.changed, skipped: [] };
  },
};

/** The request attributes a tool gets (Rucio's JSON keys), with the `mock_*` settings of the destination RSE. */
const jobAttributes = (request: ActiveRequest, topology: Topology): Record<string, unknown> => {
  const { attributes } = request.record;
  const mock = Object.fromEntries(
    Object.entries(topology.rse(request.record.destRseId)?.attributes ?? {}).filter(([key]) => key.startsWith('mock_')),
  );
  const typed = Object.fromEntries(
    Object.entries(mock).map(([key, value]) => [
      key,
      typeof value === 'string' && value !== '' && !Number.isNaN(Number(value)) ? Number(value) : value,
    ]),
  );
  return {
    activity: attributes.activity,
    source_replica_expression: attributes.sourceReplicaExpression,
    lifetime: attributes.lifetime,
    ds_scope: attributes.dsScope,
    ds_name: attributes.dsName,
    bytes: attributes.bytes,
    md5: attributes.md5,
    adler32: attributes.adler32,
    priority: attributes.priority,
    allow_tape_source: attributes.allowTapeSource,
    ...typed,
    ...ftsServerOf(request, topology),
  };
};

/** The FTS server of a transfer (Rucio's `_pick_fts_servers`), for the `fts3` tool: none when an end has no `fts` attribute. */
const ftsServerOf = (request: ActiveRequest, topology: Topology): { fts?: string } => {
  const source = request.sourcesInUse[0];
  const server = source
    ? pickFtsServer(
        topology.rse(source.rseId)?.attributes ?? {},
        topology.rse(request.record.destRseId)?.attributes ?? {},
      )
    : null;
  return server ? { fts: server } : {};
};

/** An end of a copy; a PFN of a posix protocol carries its prefix, which the posix tool stays inside. */
const endpoint = (topology: Topology, rse: string, rseId: string, pfn: string): TransferEndpoint => {
  const root = localRootOf(topology.rse(rseId)?.protocols ?? [], pfn);
  return { rse, rseId, pfn, ...(root !== undefined ? { root } : {}) };
};

const transferJob = (request: ActiveRequest, topology: Topology): TransferJob => {
  const { record } = request;
  return {
    requestId: record.id,
    file: { scope: record.scope, name: record.name, bytes: record.bytes, adler32: record.adler32, md5: record.md5 },
    sources: request.sourcesInUse.map((source) => endpoint(topology, source.rse, source.rseId, source.pfn)),
    destination: endpoint(topology, record.destRse, record.destRseId, request.destUrl ?? ''),
    activity: record.activity,
    priority: record.priority,
    attributes: jobAttributes(request, topology),
  };
};

/** Hands the requests to their tools, in bulk per tool; a tool that throws fails the submission of its jobs. */
const submitToTools = async (
  context: WorkerContext,
  requests: readonly ActiveRequest[],
  topology: Topology,
): Promise<SubmissionResult[]> => {
  const byTool = new Map<string, ActiveRequest[]>();
  for (const request of requests) {
    const batch = byTool.get(request.transfertool ?? '');
    if (batch) batch.push(request);
    else byTool.set(request.transfertool ?? '', [request]);
  }
  const results: SubmissionResult[] = [];
  for (const [name, batch] of byTool) {
    const tool = context.transferTools.get(name);
    if (!tool) {
      results.push(
        ...batch.map((request) => ({
          requestId: request.record.id,
          failure: `Transfer tool ${name} is not available (known: ${context.transferTools.names().join(', ')})`,
        })),
      );
      continue;
    }
    try {
      const submitted = await tool.submit(batch.map((request) => transferJob(request, topology)));
      results.push(
        ...submitted.map(({ requestId, externalId, externalHost }) => ({ requestId, externalId, externalHost })),
      );
    } catch (error) {
      context.logger.warn({ err: error, transfertool: name, jobs: batch.length }, 'submission failed');
      results.push(
        ...batch.map((request) => ({
          requestId: request.record.id,
          failure: `${name}: ${messageOf(error)}`,
        })),
      );
    }
  }
  return results;
};

export const submitterRole: ScheduledRole = {
  kind: 'scheduled',
  name: submitter.name,
  interval: SETTINGS.submitterInterval,
  settings: [SETTINGS.submitterChunkSize],
  async run(trigger, context) {
    const sections = await context.settings();
    const chunk = settingValue(sections, SETTINGS.submitterChunkSize);
    const skipped: SkippedItem[] = [];
    let done = 0;
    let mark: PageMark | undefined;
    let topology: Topology | undefined;
    for (let page = 0; ; page += 1) {
      const documents = await requestsInState(context.readModels, 'QUEUED', 'requested_at', chunk, mark);
      if (documents.length === 0) break;
      mark = pageMarkOf(documents, 'requested_at');
      topology ??= await loadTopology(context.readModels, sections);
      const outputs = submitter.decide(
        { now: isoOf(context.clock) },
        {
          topology,
          requests: documents.map((document) => ({
            ...selectionRequestOf(document),
            requestedAt: document.requested_at,
          })),
          replicas: await candidateReplicas(context.readModels, documents),
        },
      );
      skipped.push(...skippedOf(outputs));
      // 1. SUBMITTING first: a crash after this leaves a request the finisher retries, never a job nobody knows of.
      const streams = requestStreams(documents);
      const marked = await markRequestsSubmitting(
        context.commands,
        withoutSkipped(outputs),
        streams,
        stepOf(submitter.name, trigger, `mark-${page}`, context.clock),
      );
      // 2. The tools, in bulk; 3. what they answered.
      const results = await submitToTools(context, marked.submitting, topology);
      await recordSubmissions(
        context.commands,
        results,
        streams,
        stepOf(submitter.name, trigger, `submitted-${page}`, context.clock),
      );
      done += marked.changed;
    }
    return { done, skipped };
  },
};

export const pollerRole: ScheduledRole = {
  kind: 'scheduled',
  name: poller.name,
  interval: SETTINGS.pollerInterval,
  settings: [SETTINGS.pollerChunkSize, SETTINGS.pollerOlderThan],
  async run(trigger, context) {
    const sections = await context.settings();
    const chunk = settingValue(sections, SETTINGS.pollerChunkSize);
    const olderThan = settingValue(sections, SETTINGS.pollerOlderThan);
    const skipped: SkippedItem[] = [];
    let done = 0;
    let mark: PageMark | undefined;
    for (let page = 0; ; page += 1) {
      const documents = await requestsInState(context.readModels, 'SUBMITTED', 'changed_at', chunk, mark);
      if (documents.length === 0) break;
      mark = pageMarkOf(documents, 'changed_at');
      const requests = documents.map(submittedRequestOf);
      const reports = new Map<string, ToolReport>();
      for (const [name, externalIds] of jobsToPoll(requests, isoOf(context.clock), olderThan)) {
        const tool = context.transferTools.get(name);
        if (!tool) {
          skipped.push({
            what: `${externalIds.length} jobs of ${name}`,
            reason: `transfer tool ${name} is not available here`,
          });
          continue;
        }
        try {
          for (const [externalId, report] of await tool.poll(externalIds)) {
            const source = report.source ? { rseId: report.source.rseId, rse: report.source.rse } : null;
            reports.set(externalId, {
              externalId,
              state: report.state,
              reason: report.reason,
              source,
              startedAt: report.startedAt,
              finishedAt: report.finishedAt,
            });
          }
        } catch (error) {
          skipped.push({
            what: `${externalIds.length} jobs of ${name}`,
            reason: `polling failed: ${messageOf(error)}`,
          });
        }
      }
      const outputs = poller.decide({ reports }, { requests });
      done += (
        await recordTransferReports(
          context.commands,
          outputs,
          requestStreams(documents),
          stepOf(poller.name, trigger, `reports-${page}`, context.clock),
        )
      ).changed;
    }
    return { done, skipped };
  },
};

export const finisherRole: ScheduledRole = {
  kind: 'scheduled',
  name: finisher.name,
  interval: SETTINGS.finisherInterval,
  settings: [
    SETTINGS.finisherChunkSize,
    SETTINGS.finisherSubmittingTimeout,
    SETTINGS.conveyorRetryProtocolMismatches,
    SETTINGS.conveyorSuspiciousPattern,
  ],
  async run(trigger, context) {
    const sections = await context.settings();
    const chunk = settingValue(sections, SETTINGS.finisherChunkSize);
    const settings = {
      retryProtocolMismatches: settingValue(sections, SETTINGS.conveyorRetryProtocolMismatches),
      suspiciousPatterns: settingValue(sections, SETTINGS.conveyorSuspiciousPattern),
      submittingTimeoutSeconds: settingValue(sections, SETTINGS.finisherSubmittingTimeout),
    };
    const skipped: SkippedItem[] = [];
    let done = 0;
    let page = 0;
    // Each state a page at a time, oldest first: a page finished leaves the state, the next starts after it.
    for (const state of FINISHER_STATES) {
      const before = new Date(context.clock.now() - settings.submittingTimeoutSeconds * 1000).toISOString();
      let mark: PageMark | undefined;
      for (;;) {
        // SUBMITTING: only the requests stuck past the timeout, not the ones a submitter is working on.
        const documents = await requestsInState(
          context.readModels,
          state,
          'changed_at',
          chunk,
          mark,
          state === 'SUBMITTING' ? before : undefined,
        );
        const requests = (
          state === 'SUBMITTING'
            ? documents.filter((document) => (document.changed_at ?? document.updated_at) < before)
            : documents
        ).map(finishedRequestOf);
        if (requests.length === 0) break;
        mark = pageMarkOf(documents, 'changed_at');
        const outputs = finisher.decide({ now: isoOf(context.clock) }, { requests, settings });
        const outcome = await finishRequests(
          context.commands,
          outputs,
          requestStreams(documents),
          stepOf(finisher.name, trigger, `finish-${page}`, context.clock),
        );
        page += 1;
        skipped.push(...outcome.skipped);
        done += outcome.available + outcome.retried + outcome.givenUp;
        if (documents.length < chunk) break;
      }
    }
    return { done, skipped };
  },
};

type CancelJob = Readonly<{
  jobs: readonly Readonly<{ requestId: string; externalId: string; transfertool: string }>[];
}>;

/**
 * Cancelled requests (a rule deleted, a lock gone) stop their tools' jobs (Rucio's
 * `cancel_request_did`): one job per event, which names a batch's cancelled requests.
 */
export const cancellerRole = eventRole(REQUEST_EVENT_TYPES, {
  name: 'conveyor-canceller',
  handles: { RequestCancelled: true },
  jobOf: ({ data }): CancelJob | undefined => {
    const jobs = data.requests.flatMap(({ requestId, externalId, transfertool }) =>
      externalId && transfertool ? [{ requestId, externalId, transfertool }] : [],
    );
    return jobs.length > 0 ? { jobs } : undefined;
  },
  async process(job, _trigger, context) {
    const skipped: SkippedItem[] = [];
    let done = 0;
    const byTool = new Map<string, string[]>();
    for (const { requestId, externalId, transfertool } of job.jobs) {
      if (!context.transferTools.get(transfertool))
        skipped.push({ what: requestId, reason: `transfer tool ${transfertool} is not available here` });
      else byTool.set(transfertool, [...(byTool.get(transfertool) ?? []), externalId]);
    }
    for (const [name, externalIds] of byTool) {
      await context.transferTools.get(name)!.cancel(externalIds);
      done += externalIds.length;
    }
    return { done, skipped };
  },
});

export const conveyorRoles = [
  preparerRole,
  throttlerRole,
  submitterRole,
  pollerRole,
  finisherRole,
  cancellerRole,
] as const;
