import type { Workflow, WorkflowOutput } from '../shared/workflow.ts';

/**
 * The conveyor-poller: the SUBMITTED requests are asked of their tools, per tool, and every
 * job the tool reports DONE, FAILED or LOST becomes a report on its request. Jobs still running
 * change nothing. The request decides whether the report counts (only for its current job).
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
}>;

export type RecordTransferReport = WorkflowOutput<
  'RecordTransferReport',
  {
    requestId: string;
    externalId: string;
    outcome: 'DONE' | 'FAILED' | 'LOST';
    reason: string | null;
    source: Readonly<{ rseId: string; rse: string }> | null;
    startedAt: string | null;
    finishedAt: string | null;
  }
>;

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
  for (const request of requests) {
    if (Date.parse(request.submittedAt) > before) continue;
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
      const report = reports.get(request.externalId);
      if (!report || report.state === 'SUBMITTED') return [];
      const { reason, source, startedAt, finishedAt } = report;
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
          },
        },
      ];
    }),
};
