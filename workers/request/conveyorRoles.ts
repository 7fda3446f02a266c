import { isoOf } from '../../infra/clock.ts';
import { finishRequests } from '../../commands/request/requestFinishing.ts';
import {
  prepareRequests,
  recordTransferLimitStats,
  recordTransferReports,
  throttleRequests,
} from '../../commands/request/conveyorSteps.ts';
import { SETTINGS } from '../../domain/config/settings.ts';
import { finisher } from '../../domain/request/finisher.ts';
import { jobsToPoll, poller, type ToolReport } from '../../domain/request/poller.ts';
import { preparer } from '../../domain/request/preparer.ts';
import { REQUEST_EVENT_TYPES } from '../../domain/request/request.ts';
import type { JobReport } from '../../infra/transfer/transferTool.ts';
import { throttler, type RecordTransferLimitStats } from '../../domain/request/throttler.ts';
import type { Topology } from '../../domain/request/topology.ts';
import { bindLimits } from '../../domain/request/transferLimitBinding.ts';
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
import { eventRole, messageOf, skippedOf, withoutSkipped, type SkippedItem } from '../role.ts';
import { scheduledRole } from '../scheduledRole.ts';
import type { WorkerContext } from '../workerContext.ts';
import { stagerRole, submitterRole } from './submitterRoles.ts';

/**
 * Rucio's conveyor as roles: the preparer, throttler, submitter, poller and finisher run on
 * schedules and work through what the read models show, a page at a time; the canceller reacts to
 * cancelled requests. Each page is one workflow decision (domain/request/) and one atomic step of
 * commands, issued as root with the job and the page as their cause, so a job run again appends
 * nothing twice. Only the submitter, poller and canceller talk to transfer tools.
 */

/** The pages of requests in `state`, oldest first by `field`, `chunk` at a time, read each after the previous is worked. */
async function* requestPages(
  context: WorkerContext,
  state: Parameters<typeof requestsInState>[1],
  field: 'requested_at' | 'changed_at',
  chunk: number,
) {
  let mark: PageMark | undefined;
  for (;;) {
    const documents = await requestsInState(context.readModels, state, field, chunk, mark);
    if (documents.length === 0) return;
    mark = pageMarkOf(documents, field);
    yield documents;
  }
}

export const preparerRole = scheduledRole({
  name: preparer.name,
  interval: SETTINGS.preparerInterval,
  settings: [SETTINGS.preparerChunkSize],
  async *pages({ context, sections, setting }) {
    let topology: Topology | undefined;
    for await (const documents of requestPages(
      context,
      'PREPARING',
      'requested_at',
      setting(SETTINGS.preparerChunkSize),
    )) {
      topology ??= await loadTopology(context.readModels, sections);
      yield { documents, topology };
    }
  },
  async work({ documents, topology }, { context, stepOf }, page) {
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
    const { changed } = await prepareRequests(
      context.commands,
      withoutSkipped(outputs),
      requestStreams(documents),
      stepOf(`prepare-${page}`),
    );
    return { done: changed, skipped: skippedOf(outputs) };
  },
});

export const throttlerRole = scheduledRole({
  name: throttler.name,
  interval: SETTINGS.throttlerInterval,
  read: async ({ context }) => {
    const limits = await transferLimits(context.readModels);
    const { requests, streams } = await throttledRequests(context.readModels, limits.length > 0);
    return requests.length === 0 && limits.length === 0 ? undefined : { limits, requests, streams };
  },
  async work({ limits, requests, streams }, { context, sections, stepOf }) {
    const topology = await loadTopology(context.readModels, sections);
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
    const moved = await throttleRequests(context.commands, moves, streams, stepOf('release'));
    // The counts go in a step of their own, caused by what they are, so a job run again with
    // other counts records them rather than taking them for the first run's.
    const statsCause = stats
      .map((output) => `${output.data.id}:${output.data.transfers}:${output.data.waitings}`)
      .join(',');
    await recordTransferLimitStats(context.commands, stats, stepOf(`stats-${statsCause}`));
    return { done: moved.changed, skipped: [] };
  },
});

/** A tool's report as the poller's workflow reads it, a multihop job's copies each with theirs. */
const toolReportOf = (report: JobReport): ToolReport => ({
  externalId: report.externalId,
  state: report.state,
  reason: report.reason,
  source: report.source ? { rseId: report.source.rseId, rse: report.source.rse } : null,
  startedAt: report.startedAt,
  finishedAt: report.finishedAt,
  ...(report.stagingStartedAt !== undefined ? { stagingStartedAt: report.stagingStartedAt } : {}),
  ...(report.stagingFinishedAt !== undefined ? { stagingFinishedAt: report.stagingFinishedAt } : {}),
  ...(report.byRequest
    ? { byRequest: new Map([...report.byRequest].map(([requestId, copy]) => [requestId, toolReportOf(copy)])) }
    : {}),
});

export const pollerRole = scheduledRole({
  name: poller.name,
  interval: SETTINGS.pollerInterval,
  settings: [SETTINGS.pollerChunkSize, SETTINGS.pollerOlderThan],
  pages: ({ context, setting }) => requestPages(context, 'SUBMITTED', 'changed_at', setting(SETTINGS.pollerChunkSize)),
  async work(documents, { context, setting, stepOf }, page) {
    const skipped: SkippedItem[] = [];
    const requests = documents.map(submittedRequestOf);
    const reports = new Map<string, ToolReport>();
    const olderThan = setting(SETTINGS.pollerOlderThan);
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
        for (const [externalId, report] of await tool.poll(externalIds)) reports.set(externalId, toolReportOf(report));
      } catch (error) {
        skipped.push({
          what: `${externalIds.length} jobs of ${name}`,
          reason: `polling failed: ${messageOf(error)}`,
        });
      }
    }
    const outputs = poller.decide({ reports }, { requests });
    const { changed } = await recordTransferReports(
      context.commands,
      outputs,
      requestStreams(documents),
      stepOf(`reports-${page}`),
    );
    return { done: changed, skipped };
  },
});

export const finisherRole = scheduledRole({
  name: finisher.name,
  interval: SETTINGS.finisherInterval,
  settings: [
    SETTINGS.finisherChunkSize,
    SETTINGS.finisherSubmittingTimeout,
    SETTINGS.finisherLocalSubmittingTimeout,
    SETTINGS.conveyorRetryProtocolMismatches,
    SETTINGS.conveyorSuspiciousPattern,
  ],
  // Each state a page at a time, oldest first: a page finished leaves the state, the next starts after it.
  async *pages({ context, setting }) {
    const chunk = setting(SETTINGS.finisherChunkSize);
    const jobsDieWithSubmitter = (transfertool: string | null) =>
      context.transferTools.keepsJobsInProcess(transfertool);
    // The shorter of the two bounds: the workflow tells each request's own.
    const shortest = Math.min(
      setting(SETTINGS.finisherSubmittingTimeout),
      setting(SETTINGS.finisherLocalSubmittingTimeout),
    );
    for (const state of FINISHER_STATES) {
      const before = new Date(context.clock.now() - shortest * 1000).toISOString();
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
        ).map((document) => finishedRequestOf(document, jobsDieWithSubmitter));
        if (requests.length === 0) break;
        mark = pageMarkOf(documents, 'changed_at');
        yield { documents, requests };
        if (documents.length < chunk) break;
      }
    }
  },
  async work({ documents, requests }, { context, setting, stepOf }, page) {
    const settings = {
      retryProtocolMismatches: setting(SETTINGS.conveyorRetryProtocolMismatches),
      suspiciousPatterns: setting(SETTINGS.conveyorSuspiciousPattern),
      submittingTimeoutSeconds: setting(SETTINGS.finisherSubmittingTimeout),
      localSubmittingTimeoutSeconds: setting(SETTINGS.finisherLocalSubmittingTimeout),
    };
    const outputs = finisher.decide({ now: isoOf(context.clock) }, { requests, settings });
    const outcome = await finishRequests(
      context.commands,
      outputs,
      requestStreams(documents),
      stepOf(`finish-${page}`),
    );
    return { done: outcome.available + outcome.retried + outcome.givenUp, skipped: outcome.skipped };
  },
});

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
      // The copies of a multihop path share their job: it is cancelled once.
      else if (!byTool.get(transfertool)?.includes(externalId))
        byTool.set(transfertool, [...(byTool.get(transfertool) ?? []), externalId]);
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
  stagerRole,
  pollerRole,
  finisherRole,
  cancellerRole,
] as const;
