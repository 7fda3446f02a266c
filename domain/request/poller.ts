import type { Workflow, WorkflowOutput } from '../shared/workflow.ts';
import type { TransferReport } from './requestDecider.ts';

/**
 * The conveyor-poller: the SUBMITTED requests are asked of their tools, per tool, and every
 * job the tool reports DONE, FAILED or LOST becomes a report on its request (a multihop job
 * reports each of its copies). Jobs still running change nothing. The request decides whether the
 * report counts (only for its current job).
 */

export type SubmittedRequest = Readonly<{
  requestId: string;
  externalId: string;
  transfertool: string;
  submittedAt: string;
}>;

/** What a tool says of one job (the port's JobReport, in plain data). */
export type ToolReport = Readonly<{
  externalId: string;
  state: 'SUBMITTED' | 'DONE' | 'FAILED' | 'LOST';
  reason: string | null;
  source: Readonly<{ rseId: string; rse: string }> | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** When the tool brought a tape source online (absent when it did not). */
  stagingStartedAt?: string | null;
  stagingFinishedAt?: string | null;
  /** A job of several requests (a multihop path): what it says of each, by request id. */
  byRequest?: ReadonlyMap<string, ToolReport>;
}>;

/** What the poller hands on of one request's job: the report the request decider records. */
export type RecordTransferReport = WorkflowOutput<'RecordTransferReport', TransferReport>;

/**
 * Which jobs to ask each tool about: SUBMITTED requests submitted at least `olderThanSeconds`
 * ago (Rucio's poller waits 60 s, leaving the rest to the receiver; here polling is the only way
 * to hear back, so the default asks at once).
 */
export const jobsToPoll = (
  requests: readonly SubmittedRequest[],
  now: string,
  olderThanSeconds: number,
): Map<string, string[]> => {
  const before = Date.parse(now) - olderThanSeconds * 1000;
  const byTool = new Map<string, string[]>();
  const asked = new Set<string>();
  for (const request of requests) {
    if (Date.parse(request.submittedAt) > before) continue;
    // The copies of a multihop path share their job: it is asked once.
    const key = `${request.transfertool} ${request.externalId}`;
    if (asked.has(key)) continue;
    asked.add(key);
    byTool.set(request.transfertool, [...(byTool.get(request.transfertool) ?? []), request.externalId]);
  }
  return byTool;
};

export const poller: Workflow<
  Readonly<{ reports: ReadonlyMap<string, ToolReport> }>,
  Readonly<{ requests: readonly SubmittedRequest[] }>,
  RecordTransferReport
> = {
  name: 'conveyor-poller',
  decide: ({ reports }, { requests }) =>
    requests.flatMap((request): RecordTransferReport[] => {
      const job = reports.get(request.externalId);
      const report = job?.byRequest?.get(request.requestId) ?? job;
      if (!report || report.state === 'SUBMITTED') return [];
      const { reason, source, startedAt, finishedAt } = report;
      const staging =
        report.stagingStartedAt || report.stagingFinishedAt
          ? { stagingStartedAt: report.stagingStartedAt ?? null, stagingFinishedAt: report.stagingFinishedAt ?? null }
          : {};
      return [
        {
          type: 'RecordTransferReport',
          data: {
            requestId: request.requestId,
            externalId: request.externalId,
            outcome: report.state,
            reason,
            source,
            startedAt,
            finishedAt,
            ...staging,
          },
        },
      ];
    }),
};
