import { MockTransferTool } from '../../infra/transfer/mockTransferTool.ts';
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
