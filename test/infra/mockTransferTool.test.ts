import { expect } from 'chai';
import { MAX_JOBS, MockTransferTool } from '../../infra/transfer/mockTransferTool.ts';
import { transferJob, transferToolContract } from './transferTool.contract.ts';

transferToolContract('mock', async () => {
  const tool = new MockTransferTool();
  return {
    tool,
    jobThatSucceeds: (requestId) => transferJob({ requestId, attributes: { mock_outcome: 'done' } }),
    jobThatFails: (requestId) => transferJob({ requestId, attributes: { mock_outcome: 'failed' } }),
    jobThatRuns: (requestId) => transferJob({ requestId, attributes: { mock_delay_ms: 600_000 } }),
    dispose: () => tool.close(),
  };
});

describe('MockTransferTool', () => {
  it('keeps at most MAX_JOBS jobs: the oldest are LOST beyond, the newest still answer', async () => {
    let now = 1_000_000;
    const tool = new MockTransferTool({ now: () => now });
    const job = transferJob({ requestId: 'soak-bound', attributes: { mock_outcome: 'done' } });
    const [first] = await tool.submit([job]);
    const rest = await tool.submit(Array.from({ length: MAX_JOBS }, () => job));
    now += 1;
    const reports = await tool.poll([first!.externalId, rest[rest.length - 1]!.externalId]);
    expect([...reports.values()].map((report) => report.state)).to.deep.equal(['LOST', 'DONE']);
    await tool.close();
  });

  it('stays SUBMITTED through a simulated recall from tape, then reports when the staging started and ended', async () => {
    let now = 1_000_000;
    const tool = new MockTransferTool({ now: () => now });
    const [submitted] = await tool.submit([
      transferJob({
        requestId: 'recall',
        sourceType: 'TAPE',
        bringOnline: 60,
        attributes: { mock_outcome: 'done', simulated_recall_ms: 500 },
      }),
    ]);
    const id = submitted!.externalId;
    now += 499;
    expect((await tool.poll([id])).get(id)!.state).to.equal('SUBMITTED');
    now += 1;
    expect((await tool.poll([id])).get(id)).to.include({
      state: 'DONE',
      stagingStartedAt: new Date(1_000_000).toISOString(),
      stagingFinishedAt: new Date(1_000_500).toISOString(),
    });
    await tool.close();
  });
});
