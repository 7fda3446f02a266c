import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { JobReport, TransferJob, TransferTool } from '../../infra/transfer/transferTool.ts';

export type TransferToolFixture = {
  tool: TransferTool;
  /** A job the tool will finish DONE. */
  jobThatSucceeds(requestId: string): TransferJob | Promise<TransferJob>;
  /** A job the tool will finish FAILED (a checksum that differs, a source that refuses). */
  jobThatFails(requestId: string): TransferJob | Promise<TransferJob>;
  /** A job that stays running for longer than a test lasts, unless cancelled. */
  jobThatRuns(requestId: string): TransferJob | Promise<TransferJob>;
  dispose(): Promise<void>;
};

/** A job with everything a test does not care about filled in. */
export const transferJob = (overrides: Partial<TransferJob> & Pick<TransferJob, 'requestId'>): TransferJob => ({
  file: { scope: 'user.jdoe', name: `file-${overrides.requestId}`, bytes: 0, adler32: null, md5: null },
  sources: [{ rse: 'SOURCE_DISK', rseId: 'source-rse-id', pfn: 'mock://source/file' }],
  destination: { rse: 'DEST_DISK', rseId: 'dest-rse-id', pfn: 'mock://dest/file' },
  activity: 'User Subscriptions',
  priority: 3,
  attributes: {},
  ...overrides,
});

const FINAL: ReadonlySet<string> = new Set(['DONE', 'FAILED', 'LOST']);

/** Polls until every job is final; the last reports. */
export const pollUntilFinal = async (
  tool: TransferTool,
  externalIds: readonly string[],
  timeoutMs = 10_000,
): Promise<Map<string, JobReport>> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reports = await tool.poll(externalIds);
    if ([...reports.values()].every((report) => FINAL.has(report.state))) return reports;
    if (Date.now() > deadline)
      throw new Error(`jobs not final within ${timeoutMs} ms: ${JSON.stringify([...reports.values()])}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/**
 * The behaviour every transfer tool must have, so the conveyor can treat them alike. Run by
 * mockTransferTool.test.ts, posixTransferTool.test.ts (real temporary directories) and
 * fts3TransferTool.test.ts (a fake FTS3 server on the loopback).
 */
export const transferToolContract = (toolName: string, open: () => Promise<TransferToolFixture>): void => {
  describe(`TransferTool contract: ${toolName}`, () => {
    let fixture: TransferToolFixture;
    let tool: TransferTool;

    beforeEach(async () => {
      fixture = await open();
      tool = fixture.tool;
    });
    afterEach(async () => fixture.dispose());

    const requestId = (): string => randomUUID();

    it('answers a submission in the order of its jobs, with one distinct id per job', async () => {
      const jobs = [
        await fixture.jobThatSucceeds(requestId()),
        await fixture.jobThatFails(requestId()),
        await fixture.jobThatSucceeds(requestId()),
      ];
      const submitted = await tool.submit(jobs);
      expect(submitted.map((job) => job.requestId)).to.deep.equal(jobs.map((job) => job.requestId));
      expect(new Set(submitted.map((job) => job.externalId)).size).to.equal(3);
      for (const job of submitted) expect(job.externalHost).to.be.a('string').that.is.not.equal('');
      await pollUntilFinal(
        tool,
        submitted.map((job) => job.externalId),
      );
    });

    it('runs a job to DONE, with no reason and the times it ran', async () => {
      const [submitted] = await tool.submit([await fixture.jobThatSucceeds(requestId())]);
      const reports = await pollUntilFinal(tool, [submitted!.externalId]);
      const report = reports.get(submitted!.externalId)!;
      expect(report).to.include({ externalId: submitted!.externalId, state: 'DONE', reason: null });
      expect(report.finishedAt).to.be.a('string');
      expect(Number.isNaN(Date.parse(report.finishedAt!))).to.equal(false);
    });

    it('reports a job that cannot be done as FAILED, with the reason', async () => {
      const [submitted] = await tool.submit([await fixture.jobThatFails(requestId())]);
      const report = (await pollUntilFinal(tool, [submitted!.externalId])).get(submitted!.externalId)!;
      expect(report.state).to.equal('FAILED');
      expect(report.reason).to.be.a('string').that.is.not.equal('');
    });

    it('returns from submit before a long job ends, and reports it SUBMITTED meanwhile', async () => {
      const [submitted] = await tool.submit([await fixture.jobThatRuns(requestId())]);
      const report = (await tool.poll([submitted!.externalId])).get(submitted!.externalId)!;
      expect(report.state).to.equal('SUBMITTED');
      expect(report.reason).to.equal(null);
      await tool.cancel([submitted!.externalId]);
    });

    it('reports LOST for ids it never gave', async () => {
      const unknown = `never-submitted-${randomUUID()}`;
      const report = (await tool.poll([unknown])).get(unknown)!;
      expect(report).to.include({ externalId: unknown, state: 'LOST' });
    });

    it('answers a poll with every id asked for, in the order asked, known or not', async () => {
      const submitted = await tool.submit([
        await fixture.jobThatSucceeds(requestId()),
        await fixture.jobThatFails(requestId()),
      ]);
      await pollUntilFinal(
        tool,
        submitted.map((job) => job.externalId),
      );
      const asked = [`unknown-${randomUUID()}`, submitted[1]!.externalId, submitted[0]!.externalId];
      const reports = await tool.poll(asked);
      expect([...reports.keys()]).to.deep.equal(asked);
      expect(asked.map((id) => reports.get(id)!.state)).to.deep.equal(['LOST', 'FAILED', 'DONE']);
      for (const id of asked) expect(reports.get(id)!.externalId).to.equal(id);
    });

    it('cancels a running job, which then ends FAILED and never DONE', async () => {
      const [submitted] = await tool.submit([await fixture.jobThatRuns(requestId())]);
      await tool.cancel([submitted!.externalId]);
      const report = (await pollUntilFinal(tool, [submitted!.externalId])).get(submitted!.externalId)!;
      expect(report.state).to.equal('FAILED');
      expect(report.reason).to.match(/cancel/i);
    });

    it('ignores cancelling ids it does not know, and jobs already finished', async () => {
      const [submitted] = await tool.submit([await fixture.jobThatSucceeds(requestId())]);
      await pollUntilFinal(tool, [submitted!.externalId]);
      await tool.cancel([`unknown-${randomUUID()}`, submitted!.externalId]);
      expect((await tool.poll([submitted!.externalId])).get(submitted!.externalId)!.state).to.equal('DONE');
    });

    it('keeps each job to its own outcome when several run at once', async () => {
      const jobs = await Promise.all(
        Array.from({ length: 6 }, async (_, index) =>
          index % 3 === 1 ? fixture.jobThatFails(requestId()) : fixture.jobThatSucceeds(requestId()),
        ),
      );
      const submitted = await tool.submit(jobs);
      const reports = await pollUntilFinal(
        tool,
        submitted.map((job) => job.externalId),
      );
      expect(submitted.map((job) => reports.get(job.externalId)!.state)).to.deep.equal([
        'DONE',
        'FAILED',
        'DONE',
        'DONE',
        'FAILED',
        'DONE',
      ]);
    });
  });
};
