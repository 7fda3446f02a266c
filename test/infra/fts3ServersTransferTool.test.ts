import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Fts3Servers } from '../../infra/transfer/fts3Servers.ts';
import type { TransferJob } from '../../infra/transfer/transferTool.ts';
import { FakeFts3Server } from './fakeFts3Server.ts';
import { pollUntilFinal, transferJob, transferToolContract } from './transferTool.contract.ts';

/** A job whose outcome the fake server reads from its source path, for the server `fts` names. */
const jobFor = (fts: string | undefined, path: string, requestId: string = randomUUID()): TransferJob =>
  transferJob({
    requestId,
    file: { scope: 'user.jdoe', name: `file-${requestId}`, bytes: 100, adler32: '0cc737eb', md5: null },
    sources: [
      { rse: 'SOURCE_DISK', rseId: 'source-id', pfn: `davs://source.example.org:443/data${path}/${requestId}` },
    ],
    destination: { rse: 'DEST_DISK', rseId: 'dest-id', pfn: `davs://dest.example.org:443/data/${requestId}` },
    attributes: fts === undefined ? {} : { fts },
  });

transferToolContract('fts3 registry tool over two servers', async () => {
  const [first, second] = [await FakeFts3Server.start(), await FakeFts3Server.start()];
  const tool = new Fts3Servers({ knownServers: [first.url, second.url] });
  let turn = 0;
  const server = () => ((turn += 1) % 2 === 0 ? first.url : second.url);
  return {
    tool,
    jobThatSucceeds: (requestId) => jobFor(server(), '/ok', requestId),
    jobThatFails: (requestId) => jobFor(server(), '/fail', requestId),
    jobThatRuns: (requestId) => jobFor(server(), '/hold', requestId),
    dispose: async () => {
      await tool.close();
      await first.stop();
      await second.stop();
    },
  };
});

describe('Fts3Servers', () => {
  let first: FakeFts3Server;
  let second: FakeFts3Server;
  let tool: Fts3Servers;

  beforeEach(async () => {
    [first, second] = [await FakeFts3Server.start(), await FakeFts3Server.start()];
    tool = new Fts3Servers({ knownServers: [first.url, second.url] });
  });
  afterEach(async () => {
    await tool.close();
    await first.stop();
    await second.stop();
  });

  it('sends each job to the first server of its fts attribute, or to the first known server', async () => {
    const submitted = await tool.submit([
      jobFor(`${second.url},${first.url}`, '/ok'),
      jobFor(undefined, '/ok'),
      jobFor(second.url, '/ok'),
    ]);
    expect(submitted.map((job) => job.externalHost)).to.deep.equal([second.url, first.url, second.url]);
    expect([first.jobs.size, second.jobs.size]).to.deep.equal([1, 2]);
  });

  it('refuses a job when no server is named or known', async () => {
    const lonely = new Fts3Servers();
    const [submitted] = await lonely.submit([jobFor(undefined, '/ok')]);
    const report = (await lonely.poll([submitted!.externalId])).get(submitted!.externalId)!;
    expect(report.state).to.equal('FAILED');
    expect(report.reason).to.match(/No FTS server/);
    await lonely.close();
  });

  it('finds the jobs another process submitted on the known servers, and cancels them there', async () => {
    const submitted = await tool.submit([jobFor(second.url, '/ok'), jobFor(first.url, '/hold')]);
    const restarted = new Fts3Servers({ knownServers: [first.url, second.url] });
    const unknown = randomUUID();
    const reports = await pollUntilFinal(restarted, [submitted[0]!.externalId, unknown]);
    expect([...reports.values()].map((report) => report.state)).to.deep.equal(['DONE', 'LOST']);
    await restarted.cancel([submitted[1]!.externalId]);
    expect(first.requestsTo('DELETE', '/jobs/')).to.have.length(1);
    expect(second.requestsTo('DELETE', '/jobs/')).to.have.length(1);
    expect(first.jobs.get(submitted[1]!.externalId)!.job_state).to.equal('CANCELED');
    await restarted.close();
  });

  it('polls a job only at its server when this process submitted it', async () => {
    const [submitted] = await tool.submit([jobFor(second.url, '/ok')]);
    await tool.poll([submitted!.externalId]);
    expect(first.requestsTo('GET', '/jobs/')).to.have.length(0);
    expect(second.requestsTo('GET', '/jobs/')).to.have.length(1);
    expect(tool.forServer(`${second.url}/`)).to.equal(tool.forServer(second.url));
  });
});
