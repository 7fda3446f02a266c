import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import {
  ftsPathSubmission,
  reportOfFtsJob,
  type FtsJobAnswer,
  type SubmissionSettings,
} from '../../infra/transfer/fts3Jobs.ts';
import { Fts3TransferTool } from '../../infra/transfer/fts3TransferTool.ts';
import type { TransferJob } from '../../infra/transfer/transferTool.ts';
import { FakeFts3Server } from './fakeFts3Server.ts';
import { pollUntilFinal, transferJob } from './transferTool.contract.ts';

/**
 * What the fts3 tool sends FTS for the grid's transfers, and how it reads the answers: multihop
 * jobs, recalls from tape (`bring_online`), tape destinations (`archive_timeout`), and the tokens of
 * copies between token RSEs (Rucio 39's `build_job_params` and `_file_from_transfer`).
 */

const settings: SubmissionSettings = {
  verifyChecksum: 'both',
  sourceStrategy: 'orderly',
  defaultLifetimeSeconds: 172_800,
  deterministicIds: false,
};

const copy = (from: string, to: string, overrides: Partial<TransferJob> = {}): TransferJob => {
  const requestId = overrides.requestId ?? randomUUID().replaceAll('-', '');
  return transferJob({
    requestId,
    file: { scope: 'user.jdoe', name: 'f1', bytes: 100, adler32: '0cc737eb', md5: null },
    sources: [
      { rse: from, rseId: `${from.toLowerCase()}-id`, pfn: `davs://${from.toLowerCase()}.example.org/data/f1` },
    ],
    destination: { rse: to, rseId: `${to.toLowerCase()}-id`, pfn: `davs://${to.toLowerCase()}.example.org/data/f1` },
    activity: 'User Subscriptions',
    priority: 3,
    ...overrides,
  });
};

type Submission = { files: Record<string, unknown>[]; params: Record<string, unknown> };
const submissionOf = (path: readonly TransferJob[]): Submission => ftsPathSubmission(path, settings) as Submission;

describe('FTS3 jobs: multihop paths, tape and tokens (Rucio’s build_job_params)', () => {
  it('sends a path as one multihop job: its copies in order, the parameters of its last', () => {
    const hop = copy('SRC', 'HOP', { requestId: 'hop' });
    const own = copy('HOP', 'DST', { requestId: 'own', priority: 5 });
    const { files, params } = submissionOf([hop, own]);
    expect(files.map((file) => (file.metadata as { request_id: string }).request_id)).to.deep.equal(['hop', 'own']);
    expect(params).to.include({ multihop: true, priority: 5, overwrite: true, bring_online: null });
    expect(params.job_metadata).to.deep.equal({
      issuer: 'rucio',
      multi_sources: false,
      overwrite_when_only_on_disk: false,
      multihop: true,
    });
  });

  it('overwrites only the intermediate copies of a path to a tape that refuses overwriting (overwrite_hop)', () => {
    const { params } = submissionOf([
      copy('SRC', 'HOP'),
      copy('HOP', 'TAPE', { destinationType: 'TAPE', attributes: { overwrite: false } }),
    ]);
    expect(params).to.include({ overwrite: false, overwrite_hop: true });
  });

  it('asks FTS to bring a tape source online first, with the pin lifetime, and says the source is TAPE', () => {
    const recall = copy('TAPE', 'DISK', {
      sourceType: 'TAPE',
      bringOnline: 43_200,
      attributes: { lifetime: 3600 },
    });
    const { files, params } = submissionOf([recall]);
    expect(params).to.include({ bring_online: 43_200, copy_pin_lifetime: 3600 });
    expect(files[0]!.metadata).to.include({ src_type: 'TAPE', dst_type: 'DISK', request_type: 'TRANSFER' });
    expect(files[0]!.staging_metadata).to.deep.equal({ default: { activity: 'User Subscriptions' } });
  });

  it('sends a STAGEIN as a job whose source is its destination, to bring the file online only', () => {
    const job = copy('TAPE', 'BUFFER', { requestType: 'STAGEIN', sourceType: 'TAPE', bringOnline: 43_200 });
    const stagein = { ...job, destination: { ...job.destination, pfn: job.sources[0]!.pfn } };
    const { files } = submissionOf([stagein]);
    expect(files[0]!.sources).to.deep.equal(files[0]!.destinations);
    expect(files[0]!.metadata).to.include({ request_type: 'STAGEIN' });
  });

  it('sets the archive timeout of a tape destination, with the destination file report FTS needs for it', () => {
    const { params } = submissionOf([copy('DISK', 'TAPE', { destinationType: 'TAPE', archiveTimeout: 86_400 })]);
    expect(params).to.include({ archive_timeout: 86_400, dst_file_report: true, overwrite: true });
  });

  it('hands the storages’ tokens over as source_tokens and destination_tokens', () => {
    const { files } = submissionOf([
      copy('SRC', 'DST', { tokens: { sources: ['source-token'], destination: 'destination-token' } }),
    ]);
    expect(files[0]).to.include.keys('source_tokens', 'destination_tokens');
    expect([files[0]!.source_tokens, files[0]!.destination_tokens]).to.deep.equal([
      ['source-token'],
      ['destination-token'],
    ]);
  });
});

describe('FTS3 reports: multihop jobs and staging', () => {
  const file = (requestId: string, state: string, extra: object = {}) => ({
    file_state: state,
    reason: null,
    source_surl: 'davs://a/f1',
    dest_surl: 'davs://b/f1',
    start_time: '2026-11-22T10:00:00',
    finish_time: state === 'ACTIVE' ? null : '2026-11-22T10:01:00',
    file_metadata: { request_id: requestId, src_rse: 'A', src_rse_id: 'a-id', filesize: 100 },
    ...extra,
  });
  const multihop = (jobState: string, files: ReturnType<typeof file>[]): FtsJobAnswer => ({
    job_id: 'job-1',
    job_type: 'H',
    http_status: '200 Ok',
    job_state: jobState,
    job_metadata: { issuer: 'rucio', multi_sources: false, multihop: true },
    reason: null,
    files,
  });

  it('reports each copy of a multihop job by its request', () => {
    const report = reportOfFtsJob('job-1', multihop('ACTIVE', [file('hop', 'FINISHED'), file('own', 'ACTIVE')]));
    expect([...report.byRequest!].map(([requestId, copyReport]) => [requestId, copyReport.state])).to.deep.equal([
      ['hop', 'DONE'],
      ['own', 'SUBMITTED'],
    ]);
  });

  it('fails the copies a failed hop left unused, with Rucio’s reason', () => {
    const report = reportOfFtsJob(
      'job-1',
      multihop('FAILED', [file('hop', 'FAILED', { reason: 'SOURCE [2] No such file' }), file('own', 'NOT_USED')]),
    );
    expect(report.byRequest!.get('own')).to.include({ state: 'FAILED', reason: 'Unused hop in multi-hop' });
  });

  it('reads when the staging started and ended, and marks a tape source’s failure', () => {
    const answer = (state: string): FtsJobAnswer => ({
      job_id: 'job-1',
      http_status: '200 Ok',
      job_state: state,
      job_metadata: { issuer: 'rucio', multi_sources: false },
      reason: null,
      files: [
        file('r1', state, {
          staging_start: '2026-11-22T09:00:00',
          staging_finished: '2026-11-22T09:30:00',
          reason: state === 'FAILED' ? 'TRANSFER [5] error' : null,
          file_metadata: { request_id: 'r1', src_type: 'TAPE' },
        }),
      ],
    });
    expect(reportOfFtsJob('job-1', answer('FINISHED'))).to.include({
      state: 'DONE',
      stagingStartedAt: '2026-11-22T09:00:00.000Z',
      stagingFinishedAt: '2026-11-22T09:30:00.000Z',
    });
    expect(reportOfFtsJob('job-1', answer('FAILED')).reason).to.equal('[TAPE SOURCE] TRANSFER [5] error');
  });
});

describe('Fts3TransferTool against the FTS look-alike: paths, staging and bearer tokens', () => {
  let server: FakeFts3Server;
  beforeEach(async () => (server = await FakeFts3Server.start()));
  afterEach(async () => server.stop());

  it('runs a multihop path as one job whose copies finish in order', async () => {
    const tool = new Fts3TransferTool({ url: server.url });
    try {
      const submitted = await tool.submitPaths([[copy('SRC', 'HOP'), copy('HOP', 'DST')]]);
      expect(new Set(submitted.map((job) => job.externalId)).size).to.equal(1);
      const reports = await pollUntilFinal(tool, [submitted[0]!.externalId]);
      const report = reports.get(submitted[0]!.externalId)!;
      expect([...report.byRequest!.values()].map((copyReport) => copyReport.state)).to.deep.equal(['DONE', 'DONE']);
    } finally {
      await tool.close();
    }
  });

  it('brings a tape source online before the copy, and reports the staging times', async () => {
    const tool = new Fts3TransferTool({ url: server.url });
    try {
      const [submitted] = await tool.submit([copy('TAPE', 'DISK', { sourceType: 'TAPE', bringOnline: 43_200 })]);
      const report = (await pollUntilFinal(tool, [submitted!.externalId])).get(submitted!.externalId)!;
      expect(report.state).to.equal('DONE');
      expect(report.stagingStartedAt).to.be.a('string');
      expect(report.stagingFinishedAt).to.be.a('string');
    } finally {
      await tool.close();
    }
  });

  it('sends no bearer token over plain http (Rucio sends one over https only)', async () => {
    const tool = new Fts3TransferTool({ url: server.url });
    try {
      await tool.submit([copy('SRC', 'DST', { tokens: { sources: ['s'], destination: 'd', fts: 'fts-token' } })]);
      expect(server.requestsTo('POST', '/jobs')[0]!.headers.authorization).to.equal(undefined);
    } finally {
      await tool.close();
    }
  });
});
