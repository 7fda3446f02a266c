import { isoOf } from '../../infra/clock.ts';
import { finishRequests } from '../../commands/request/requestFinishing.ts';
import {
  prepareRequests,
  recordTransferLimitStats,
  recordTransferReports,
  throttleRequests,
} from '../../commands/request/conveyorSteps.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { finisher } from '../../domain/request/finisher.ts';
import { jobsToPoll, poller, type ToolReport } from '../../domain/request/poller.ts';
import { preparer } from '../../domain/request/preparer.ts';
import { REQUEST_EVENT_TYPES } from '../../domain/request/request.ts';
import type { JobReport } from '../../infra/transfer/transferTool.ts';
import { throttler, type RecordTransferLimitStats } from '../../domain/request/throttler.ts';
import type { Topology } from '../../domain/request/topology.ts';
import { bindLimits } from '../../domain/request/transferLimits.ts';
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
import { stagerRole, submitterRole } from './submitterRoles.ts';

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
          for (const [externalId, report] of await tool.poll(externalIds))
            reports.set(externalId, toolReportOf(report));
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
