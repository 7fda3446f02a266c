import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ftsCredentialsFromEnvironment } from '../../infra/transfer/fts3Client.ts';
import { deterministicJobId, reportOfFtsJob, uuid5, type FtsJobAnswer } from '../../infra/transfer/fts3Jobs.ts';
import {
  Fts3TransferTool,
  ftsServersOf,
  pickFtsServer,
  type Fts3TransferToolOptions,
} from '../../infra/transfer/fts3TransferTool.ts';
import type { TransferEndpoint, TransferJob } from '../../infra/transfer/transferTool.ts';
import {
  TransferToolTimeout,
  TransferToolUnavailable,
  TransferToolWrongAnswer,
} from '../../infra/transfer/transferToolErrors.ts';
import { expectRejection } from '../support/expectRejection.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { BASE_ID, FakeFts3Server, VO } from './fakeFts3Server.ts';
import { pollUntilFinal, transferJob, transferToolContract } from './transferTool.contract.ts';
import { freeLoopbackPort } from '../../infra/freePort.ts';
import { skipBecause } from '../support/skip.ts';

const source = (rse: string, path: string): TransferEndpoint => ({
  rse,
  rseId: `${rse.toLowerCase()}-id`,
  pfn: `davs://${rse.toLowerCase()}.example.org:443/data${path}`,
});

/** A transfer between two WebDAV RSEs; the fake FTS server reads its outcome from the source paths. */
const ftsJob = (path: string, overrides: Partial<TransferJob> = {}): TransferJob => {
  const requestId = overrides.requestId ?? randomUUID();
  return transferJob({
    requestId,
    file: { scope: 'user.jdoe', name: `file-${requestId}`, bytes: 1_048_576, adler32: '0cc737eb', md5: null },
    sources: [source('SOURCE_DISK', `${path}/file-${requestId}`)],
    destination: {
      rse: 'DEST_DISK',
      rseId: 'dest-disk-id',
      pfn: `davs://dest.example.org:443/data/user/jdoe/file-${requestId}`,
    },
    activity: 'User Subscriptions',
    priority: 3,
    ...overrides,
  });
};

transferToolContract('fts3 (fake FTS3 server on the loopback)', async () => {
  const server = await FakeFts3Server.start();
  const tool = new Fts3TransferTool({ url: server.url });
  return {
    tool,
    jobThatSucceeds: (requestId) => ftsJob('/ok', { requestId }),
    jobThatFails: (requestId) => ftsJob('/fail', { requestId }),
    jobThatRuns: (requestId) => ftsJob('/hold', { requestId }),
    dispose: async () => {
      await tool.close();
      await server.stop();
    },
  };
});

describe('Fts3TransferTool', () => {
  let server: FakeFts3Server;
  let tool: Fts3TransferTool;
  const open = (options: Partial<Fts3TransferToolOptions> = {}): Fts3TransferTool => {
    tool = new Fts3TransferTool({ url: server.url, ...options });
    return tool;
  };

  beforeEach(async () => {
    server = await FakeFts3Server.start();
    open();
  });
  afterEach(async () => {
    await tool.close();
    await server.stop();
  });

  describe('submit', () => {
    it("posts Rucio's job JSON to /jobs, one FTS job per transfer", async () => {
      const job = ftsJob('/ok', {
        priority: 4,
        sources: [source('SITE_A', '/a'), source('SITE_B', '/b')],
        attributes: { lifetime: 3600 },
      });
      const [submitted] = await tool.submit([job]);
      expect(submitted).to.deep.equal({
        requestId: job.requestId,
        externalId: submitted!.externalId,
        externalHost: server.url,
      });
      expect(server.jobs.has(submitted!.externalId)).to.equal(true);

      const [request] = server.requestsTo('POST', '/jobs');
      expect(request!.headers['content-type']).to.equal('application/json');
      expect(request!.headers.accept).to.equal('application/json');
      expect(request!.body).to.deep.equal({
        files: [
          {
            sources: ['davs://site_a.example.org:443/data/a', 'davs://site_b.example.org:443/data/b'],
            destinations: [job.destination.pfn],
            metadata: {
              request_id: job.requestId,
              scope: 'user.jdoe',
              name: job.file.name,
              activity: 'User Subscriptions',
              request_type: 'TRANSFER',
              src_type: 'DISK',
              dst_type: 'DISK',
              src_rse: 'SITE_A',
              dst_rse: 'DEST_DISK',
              src_rse_id: 'site_a-id',
              dest_rse_id: 'dest-disk-id',
              filesize: 1_048_576,
              md5: null,
              adler32: '0cc737eb',
            },
            filesize: 1_048_576,
            checksum: 'ADLER32:0cc737eb',
            selection_strategy: 'orderly',
            activity: 'User Subscriptions',
          },
        ],
        params: {
          verify_checksum: 'both',
          copy_pin_lifetime: 3600,
          bring_online: null,
          job_metadata: { issuer: 'rucio', multi_sources: true, overwrite_when_only_on_disk: false },
          overwrite: true,
          overwrite_when_only_on_disk: false,
          priority: 4,
          s3alternate: true,
        },
      });
    });

    it('sends MD5 when the file has no adler32, no checksum without either or when verification is off', async () => {
      const md5 = '9e107d9d372bb6826bd81d3542a419d6';
      await tool.submit([
        ftsJob('/ok', { file: { scope: 's', name: 'n', bytes: 1, adler32: null, md5 } }),
        ftsJob('/ok', { file: { scope: 's', name: 'm', bytes: 1, adler32: null, md5: null } }),
      ]);
      await tool.close();
      open({ verifyChecksum: 'none' });
      await tool.submit([ftsJob('/ok')]);
      const sent = server
        .requestsTo('POST', '/jobs')
        .map((request) => request.body as { files: { checksum: unknown }[]; params: { verify_checksum: unknown } });
      expect(sent.map((body) => body.files[0]!.checksum)).to.deep.equal([`MD5:${md5}`, null, null]);
      expect(sent[2]!.params.verify_checksum).to.equal('none');
    });

    it("takes the pin lifetime and overwrite from the request's attributes, as Rucio reads them", async () => {
      await tool.submit([ftsJob('/ok'), ftsJob('/ok', { attributes: { lifetime: null, overwrite: false } })]);
      const params = server
        .requestsTo('POST', '/jobs')
        .map((request) => (request.body as { params: Record<string, unknown> }).params);
      expect(params.map((param) => [param.copy_pin_lifetime, param.overwrite])).to.deep.equal([
        [172_800, true],
        [null, false],
      ]);
    });

    it('answers in the order of the jobs when submissions run side by side', async () => {
      const jobs = Array.from({ length: 9 }, () => ftsJob('/ok'));
      const submitted = await open({ submitConcurrency: 3 }).submit(jobs);
      expect(submitted.map((job) => job.requestId)).to.deep.equal(jobs.map((job) => job.requestId));
      for (const [index, job] of submitted.entries()) {
        expect(
          (server.jobs.get(job.externalId)!.files[0]!.file_metadata as { request_id: string }).request_id,
        ).to.equal(jobs[index]!.requestId);
      }
    });

    it("reports a job FTS refuses as FAILED with FTS's message, without asking FTS about it", async () => {
      server.answerNext((request) => request.method === 'POST', {
        status: 400,
        json: { status: '400 Bad Request', message: 'Invalid value within the request: priority' },
      });
      server.answerNext((request) => request.method === 'POST', { status: 500, text: 'Internal Server Error' });
      server.answerNext((request) => request.method === 'POST', {
        status: 409,
        json: { status: '409 Conflict', message: 'The submission is duplicated' },
      });
      const submitted = await tool.submit([ftsJob('/ok'), ftsJob('/ok'), ftsJob('/ok')]);
      const reports = await tool.poll(submitted.map((job) => job.externalId));
      expect([...reports.values()].map((report) => [report.state, report.reason])).to.deep.equal([
        ['FAILED', `FTS ${server.url} refused the job (400): Invalid value within the request: priority`],
        ['FAILED', `FTS ${server.url} refused the job (500): Internal Server Error`],
        [
          'FAILED',
          `DuplicateFileTransferSubmission: FTS ${server.url} refused the job (409): The submission is duplicated`,
        ],
      ]);
      expect(server.requestsTo('GET', '/jobs')).to.deep.equal([]);
    });

    it('reports a submission without an answer in time, or with an answer it cannot read, as FAILED', async () => {
      open({ submitTimeoutMs: 200 });
      server.answerNext((request) => request.method === 'POST', 'hang');
      server.answerNext((request) => request.method === 'POST', { status: 200, json: { id: 'not-a-job-id' } });
      server.answerNext((request) => request.method === 'POST', { status: 200, text: '<html>proxy error</html>' });
      const started = Date.now();
      const submitted = await tool.submit([ftsJob('/ok'), ftsJob('/ok'), ftsJob('/ok')]);
      expect(Date.now() - started).to.be.below(2000);
      const reports = [...(await tool.poll(submitted.map((job) => job.externalId))).values()];
      expect(reports.map((report) => report.state)).to.deep.equal(['FAILED', 'FAILED', 'FAILED']);
      expect(reports[0]!.reason).to.match(/^TransferToolTimeout: POST .*\/jobs: no answer within 200 ms/);
      expect(reports[1]!.reason).to.match(/^TransferToolWrongAnswer: .*no job_id/);
      expect(reports[2]!.reason).to.match(/^TransferToolWrongAnswer: .*not JSON/);
    });

    it('forgets refused submissions after keepRefusedMs, and a new process never knew them: LOST', async () => {
      server.answerNext((request) => request.method === 'POST', {
        status: 400,
        json: { status: '400 Bad Request', message: 'no' },
      });
      const [submitted] = await open({ keepRefusedMs: 0 }).submit([ftsJob('/ok')]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect((await tool.poll([submitted!.externalId])).get(submitted!.externalId)!.state).to.equal('LOST');
    });
  });

  describe('with deterministic ids (conveyor.use_deterministic_id)', () => {
    it('computes the id FTS derives from the request id, as Python uuid5 does', () => {
      expect(uuid5('01874efb-4735-4595-bc9c-591aef8240c9', 'atlas')).to.match(
        /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      // uuid.uuid5(uuid.uuid5(UUID('01874efb-...'), 'atlas'), '0e4f2a6b-...') in Python 3.
      expect(
        deterministicJobId('01874efb-4735-4595-bc9c-591aef8240c9', 'atlas', '0e4f2a6b-1c3d-4e5f-8a9b-0c1d2e3f4a5b'),
      ).to.equal('6c954b74-5f10-537c-aea6-fff6219618b0');
    });

    it('sends the request id as sid, and asks whoami once', async () => {
      open({ deterministicIds: true });
      const jobs = [ftsJob('/ok'), ftsJob('/ok')];
      const submitted = await tool.submit(jobs);
      const params = server
        .requestsTo('POST', '/jobs')
        .map((request) => (request.body as { params: Record<string, unknown> }).params);
      expect(params.map((param) => [param.id_generator, param.sid])).to.deep.equal(
        jobs.map((job) => ['deterministic', job.requestId]),
      );
      expect(submitted.map((job) => job.externalId)).to.deep.equal(
        jobs.map((job) => deterministicJobId(BASE_ID, VO, job.requestId)),
      );
      expect(server.requestsTo('GET', '/whoami')).to.have.length(1);
    });

    it('keeps a job whose answer was lost, and a resubmission FTS already has, under the id FTS gave it', async () => {
      open({ deterministicIds: true, submitTimeoutMs: 300 });
      const job = ftsJob('/ok');
      server.answerNext((request) => request.method === 'POST', 'lost');
      const [first] = await tool.submit([job]);
      expect(first!.externalId).to.equal(deterministicJobId(BASE_ID, VO, job.requestId));
      const [again] = await tool.submit([job]);
      expect(again!.externalId).to.equal(first!.externalId);
      expect(server.jobs.size).to.equal(1);
      expect((await pollUntilFinal(tool, [first!.externalId])).get(first!.externalId)!.state).to.equal('DONE');
    });
  });

  describe('poll', () => {
    it('asks for many jobs in one GET with the files fields Rucio reads, and follows them to their end', async () => {
      const jobs = [ftsJob('/ok'), ftsJob('/fail'), ftsJob('/ok')];
      const submitted = await tool.submit(jobs);
      const ids = submitted.map((job) => job.externalId);
      const first = await tool.poll(ids);
      expect([...first.values()].map((report) => report.state)).to.deep.equal(['SUBMITTED', 'SUBMITTED', 'SUBMITTED']);
      const [request] = server.requestsTo('GET', '/jobs/');
      expect(request!.path).to.equal(`/jobs/${ids.join(',')}`);
      expect(request!.query.get('files')!.split(',')).to.include.members([
        'file_state',
        'source_surl',
        'reason',
        'start_time',
        'finish_time',
        'file_metadata',
      ]);

      const reports = await pollUntilFinal(tool, ids);
      const [done, failed] = [reports.get(ids[0]!)!, reports.get(ids[1]!)!];
      expect(done).to.include({ state: 'DONE', reason: null, bytesTransferred: 1_048_576 });
      expect(done.source).to.deep.equal(jobs[0]!.sources[0]);
      expect(done.startedAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
      expect(failed.state).to.equal('FAILED');
      expect(failed.reason).to.include('DESTINATION CHECKSUM MISMATCH');
    });

    it('splits long lists into GETs of jobsPerPoll ids', async () => {
      const submitted = await open({ jobsPerPoll: 2 }).submit([ftsJob('/ok'), ftsJob('/ok'), ftsJob('/ok')]);
      await tool.poll(submitted.map((job) => job.externalId));
      expect(server.requestsTo('GET', '/jobs/').map((request) => request.path.split(',').length)).to.deep.equal([2, 1]);
    });

    it('reports a job FTS does not know as LOST, alone (404) or among others (207)', async () => {
      const [known] = await tool.submit([ftsJob('/ok')]);
      const unknown = randomUUID();
      expect((await tool.poll([unknown])).get(unknown)!).to.include({ state: 'LOST' });
      const reports = await tool.poll([unknown, known!.externalId]);
      expect([...reports.values()].map((report) => report.state)).to.deep.equal(['LOST', 'SUBMITTED']);
      expect(reports.get(unknown)!.reason).to.include('No job with the id');
    });

    it('names the source FTS read among several, when the first is missing', async () => {
      const job = ftsJob('/ok', { sources: [source('GONE', '/missing/x'), source('THERE', '/ok/x')] });
      const [submitted] = await tool.submit([job]);
      const report = (await pollUntilFinal(tool, [submitted!.externalId])).get(submitted!.externalId)!;
      expect(report.state).to.equal('DONE');
      expect(report.source).to.deep.equal(job.sources[1]);
    });

    it('throws TransferToolTimeout when FTS does not answer in time, and leaves the jobs as they were', async () => {
      const [submitted] = await open({ queryTimeoutMs: 200 }).submit([ftsJob('/ok')]);
      server.answerNext((request) => request.method === 'GET', 'hang');
      await expectRejection(tool.poll([submitted!.externalId]), TransferToolTimeout);
      expect((await tool.poll([submitted!.externalId])).get(submitted!.externalId)!.state).to.equal('SUBMITTED');
    });

    it('throws TransferToolUnavailable for an error status or a server that cannot be reached', async () => {
      const [submitted] = await tool.submit([ftsJob('/ok')]);
      server.answerNext((request) => request.method === 'GET', {
        status: 503,
        json: { status: '503 Service Unavailable', message: 'Database is down' },
      });
      const error = await expectRejection(tool.poll([submitted!.externalId]), TransferToolUnavailable);
      expect(error.message).to.include('503 Database is down');

      const closedPort = await freeLoopbackPort();
      const nowhere = new Fts3TransferTool({ url: `http://127.0.0.1:${closedPort}` });
      await expectRejection(nowhere.poll([submitted!.externalId]), TransferToolUnavailable);
      await nowhere.close();
    });

    it('throws TransferToolWrongAnswer for answers that are not FTS job JSON', async () => {
      const [submitted] = await tool.submit([ftsJob('/ok')]);
      server.answerNext((request) => request.method === 'GET', { status: 200, text: 'not json' });
      await expectRejection(tool.poll([submitted!.externalId]), TransferToolWrongAnswer);
      server.answerNext((request) => request.method === 'GET', { status: 200, json: { job_state: 'FINISHED' } });
      await expectRejection(tool.poll([submitted!.externalId]), TransferToolWrongAnswer);
    });
  });

  describe('cancel', () => {
    it('deletes the job at FTS, which then reports it FAILED as cancelled', async () => {
      const [submitted] = await tool.submit([ftsJob('/hold')]);
      await tool.poll([submitted!.externalId]);
      await tool.cancel([submitted!.externalId]);
      expect(server.requestsTo('DELETE', '/jobs/').map((request) => request.path)).to.deep.equal([
        `/jobs/${submitted!.externalId}`,
      ]);
      const report = (await tool.poll([submitted!.externalId])).get(submitted!.externalId)!;
      expect(report).to.include({ state: 'FAILED', reason: 'Job canceled by the user' });
    });

    it('leaves finished jobs (304), unknown ones (404) and refused submissions alone', async () => {
      server.answerNext((request) => request.method === 'POST', {
        status: 400,
        json: { status: '400 Bad Request', message: 'no' },
      });
      const [refused] = await tool.submit([ftsJob('/ok')]);
      const [finished] = await tool.submit([ftsJob('/ok')]);
      await pollUntilFinal(tool, [finished!.externalId]);
      await tool.cancel([finished!.externalId, randomUUID(), refused!.externalId]);
      expect(server.requestsTo('DELETE', '/jobs/')).to.have.length(2);
      expect((await tool.poll([finished!.externalId])).get(finished!.externalId)!.state).to.equal('DONE');
    });

    it('throws when FTS answers the cancellation with an error', async () => {
      const [submitted] = await tool.submit([ftsJob('/hold')]);
      server.answerNext((request) => request.method === 'DELETE', {
        status: 403,
        json: { status: '403 Forbidden', message: 'Not enough permissions' },
      });
      const error = await expectRejection(tool.cancel([submitted!.externalId]), TransferToolUnavailable);
      expect(error.message).to.include('Not enough permissions');
    });
  });
});

describe('FTS3 answers read as Rucio reads them', () => {
  const sources = [source('A', '/a'), source('B', '/b')];
  const file = (state: string, extra: Record<string, unknown> = {}) => ({
    file_state: state,
    source_surl: sources[0]!.pfn,
    dest_surl: 'davs://dest/x',
    reason: state === 'FINISHED' || state === 'NOT_USED' ? '' : `${state} reason`,
    start_time: '2024-05-01T10:00:00',
    finish_time: '2024-05-01T10:01:30',
    filesize: 42,
    file_metadata: {
      request_id: 'r',
      src_rse: 'A',
      src_rse_id: 'a-id',
      filesize: 42,
      adler32: '0cc737eb',
      md5: null,
      dst_type: 'DISK',
    },
    ...extra,
  });
  const job = (jobState: string, files: ReturnType<typeof file>[], multiSources = false): FtsJobAnswer => ({
    job_id: 'job-1',
    http_status: '200 Ok',
    job_state: jobState,
    job_metadata: { issuer: 'rucio', multi_sources: multiSources },
    reason: null,
    files,
  });
  const stateOf = (answer: FtsJobAnswer) => reportOfFtsJob('job-1', answer, sources).state;

  it('maps one-source jobs: FINISHED is DONE, FAILED and CANCELED (once the job ended) are FAILED, the rest SUBMITTED', () => {
    expect(stateOf(job('FINISHED', [file('FINISHED')]))).to.equal('DONE');
    expect(stateOf(job('FAILED', [file('FAILED')]))).to.equal('FAILED');
    expect(stateOf(job('ACTIVE', [file('FAILED')]))).to.equal('FAILED');
    expect(stateOf(job('FINISHEDDIRTY', [file('FAILED')]))).to.equal('FAILED');
    expect(stateOf(job('CANCELED', [file('CANCELED')]))).to.equal('FAILED');
    expect(stateOf(job('ACTIVE', [file('CANCELED')]))).to.equal('SUBMITTED');
    for (const state of ['SUBMITTED', 'READY', 'ACTIVE', 'STAGING', 'STARTED', 'ARCHIVING', 'TOKEN_PREP'])
      expect(stateOf(job('ACTIVE', [file(state)]))).to.equal('SUBMITTED');
  });

  it('reads the times as UTC, the bytes moved and the source', () => {
    const report = reportOfFtsJob('job-1', job('FINISHED', [file('FINISHED')]), sources);
    expect(report).to.deep.equal({
      externalId: 'job-1',
      state: 'DONE',
      reason: null,
      source: sources[0],
      bytesTransferred: 42,
      startedAt: '2024-05-01T10:00:00.000Z',
      finishedAt: '2024-05-01T10:01:30.000Z',
    });
    const failed = reportOfFtsJob('job-1', job('FAILED', [file('FAILED')]), sources);
    expect(failed).to.include({ state: 'FAILED', reason: 'FAILED reason', bytesTransferred: null });
  });

  it('waits for a job with several sources to end, then reads the file that finished or the last one tried', () => {
    expect(stateOf(job('ACTIVE', [file('FAILED'), file('ACTIVE', { source_surl: sources[1]!.pfn })], true))).to.equal(
      'SUBMITTED',
    );
    const done = reportOfFtsJob(
      'job-1',
      job('FINISHED', [file('FAILED'), file('FINISHED', { source_surl: sources[1]!.pfn })], true),
      sources,
    );
    expect(done).to.include({ state: 'DONE' });
    expect(done.source).to.deep.equal(sources[1]);
    const unused = reportOfFtsJob(
      'job-1',
      job('FINISHED', [file('FINISHED'), file('NOT_USED', { source_surl: sources[1]!.pfn })], true),
      sources,
    );
    expect(unused.source).to.deep.equal(sources[0]);
    const failed = reportOfFtsJob(
      'job-1',
      job('FAILED', [file('FAILED'), file('FAILED', { reason: 'second source failed too' })], true),
      sources,
    );
    expect(failed).to.include({ state: 'FAILED', reason: 'second source failed too' });
  });

  it('names a source it did not submit from the file metadata', () => {
    const report = reportOfFtsJob('job-1', job('FINISHED', [file('FINISHED', { source_surl: 'davs://elsewhere/x' })]));
    expect(report.source).to.deep.equal({ rse: 'A', rseId: 'a-id', pfn: 'davs://elsewhere/x' });
  });

  it('takes a refused overwrite of a destination that already holds the right file for DONE', () => {
    const exists = 'DESTINATION [17] Destination file exists and overwrite is not enabled';
    const metadata = (dstFile: Record<string, unknown>) => ({
      request_id: 'r',
      filesize: 42,
      adler32: '0cc737eb',
      md5: null,
      dst_type: 'DISK',
      dst_file: dstFile,
    });
    const right = { file_size: 42, checksum_type: 'ADLER32', checksum_value: '0cc737eb', file_on_tape: false };
    expect(stateOf(job('FAILED', [file('FAILED', { reason: exists, file_metadata: metadata(right) })]))).to.equal(
      'DONE',
    );
    expect(
      stateOf(
        job('FAILED', [
          file('FAILED', { reason: exists, file_metadata: metadata({ ...right, checksum_value: 'ffffffff' }) }),
        ]),
      ),
    ).to.equal('FAILED');
    expect(stateOf(job('FAILED', [file('FAILED', { reason: 'other', file_metadata: metadata(right) })]))).to.equal(
      'FAILED',
    );
  });

  it('reads metadata given as text, jobs without files, and per-job errors', () => {
    expect(stateOf(job('FINISHED', [file('FINISHED', { file_metadata: JSON.stringify({ src_rse: 'A' }) })]))).to.equal(
      'DONE',
    );
    expect(stateOf({ job_id: 'job-1', http_status: '200 Ok', job_state: 'FINISHED', files: [] })).to.equal('DONE');
    expect(stateOf({ job_id: 'job-1', job_state: 'FAILED', reason: 'all failed' })).to.equal('FAILED');
    expect(stateOf({ job_id: 'job-1', job_state: 'ACTIVE' })).to.equal('SUBMITTED');
    expect(stateOf({ job_id: 'job-1', http_status: '404 Not Found', http_message: 'No job' })).to.equal('LOST');
    expect(stateOf({ job_id: 'job-1', http_status: '403 Forbidden', http_message: 'Not yours' })).to.equal('SUBMITTED');
  });
});

describe('FTS servers and credentials', () => {
  it("lists the servers of an RSE's fts attribute, and picks the destination's first as Rucio does", () => {
    expect(ftsServersOf('https://fts1.example.org:8446, https://fts2.example.org:8446,')).to.deep.equal([
      'https://fts1.example.org:8446',
      'https://fts2.example.org:8446',
    ]);
    expect(ftsServersOf(undefined)).to.deep.equal([]);
    const source = { fts: 'https://src-fts:8446' };
    const destination = { fts: 'https://dst-fts:8446,https://dst-fts2:8446' };
    expect(pickFtsServer(source, destination)).to.equal('https://dst-fts:8446');
    expect(pickFtsServer({ ...source, sign_url: 'gcs' }, destination)).to.equal('https://src-fts:8446');
    expect(pickFtsServer({}, destination)).to.equal(null);
  });

  it('reads certificate, key and CA paths from the environment, the X.509 proxy standing in for both', () => {
    expect(ftsCredentialsFromEnvironment({})).to.deep.equal({});
    expect(ftsCredentialsFromEnvironment({ X509_USER_PROXY: '/tmp/x509up_u0' })).to.deep.equal({
      certificatePath: '/tmp/x509up_u0',
    });
    expect(
      ftsCredentialsFromEnvironment({
        DMS_FTS_CERT: '/c.pem',
        DMS_FTS_KEY: '/k.pem',
        DMS_FTS_CA: '/ca.pem',
        X509_USER_PROXY: '/p',
      }),
    ).to.deep.equal({
      certificatePath: '/c.pem',
      keyPath: '/k.pem',
      caPath: '/ca.pem',
    });
  });

  describe('over https with a client certificate', function () {
    let pki: ReturnType<typeof makeTempDir> | null = null;
    let server: FakeFts3Server;

    before(function () {
      try {
        execFileSync('openssl', ['version'], { stdio: 'ignore' });
      } catch {
        skipBecause(this, 'the openssl command is not installed, so no certificates can be made for the https tests');
      }
      pki = makeTempDir('dms-fts-pki-');
      const at = (name: string) => join(pki!.path, name);
      const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
      openssl(
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=Test CA',
        '-keyout',
        at('ca.key'),
        '-out',
        at('ca.pem'),
      );
      for (const [name, subject, extension] of [
        ['server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1'],
        ['client', '/CN=dms conveyor', 'extendedKeyUsage=clientAuth'],
      ] as const) {
        openssl(
          'req',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-subj',
          subject,
          '-keyout',
          at(`${name}.key`),
          '-out',
          at(`${name}.csr`),
        );
        openssl(
          'x509',
          '-req',
          '-in',
          at(`${name}.csr`),
          '-CA',
          at('ca.pem'),
          '-CAkey',
          at('ca.key'),
          '-CAcreateserial',
          '-days',
          '1',
          '-extfile',
          extensionFile(at(`${name}.ext`), extension),
          '-out',
          at(`${name}.pem`),
        );
      }
    });
    after(() => pki?.dispose());

    beforeEach(async () => {
      const at = (name: string) => join(pki!.path, name);
      server = await FakeFts3Server.start({
        key: readFileSync(at('server.key')),
        cert: readFileSync(at('server.pem')),
        ca: readFileSync(at('ca.pem')),
        requestCert: true,
        rejectUnauthorized: true,
      });
    });
    afterEach(async () => server.stop());

    it('presents the client certificate and checks the server against the CA', async () => {
      const at = (name: string) => join(pki!.path, name);
      const tool = new Fts3TransferTool({
        url: server.url,
        credentials: { certificatePath: at('client.pem'), keyPath: at('client.key'), caPath: at('ca.pem') },
      });
      const [submitted] = await tool.submit([ftsJob('/ok')]);
      expect(server.jobs.has(submitted!.externalId)).to.equal(true);
      expect((server.requests[0]!.peerCertificate as { subject: { CN: string } }).subject.CN).to.equal('dms conveyor');
      await tool.close();
    });

    it('sends FTS the job’s bearer token (audience FTS, scope fts) over https', async () => {
      const at = (name: string) => join(pki!.path, name);
      const tool = new Fts3TransferTool({
        url: server.url,
        credentials: { certificatePath: at('client.pem'), keyPath: at('client.key'), caPath: at('ca.pem') },
      });
      await tool.submit([ftsJob('/ok', { tokens: { sources: ['s'], destination: 'd', fts: 'fts-token' } })]);
      expect(server.requests[0]!.headers.authorization).to.equal('Bearer fts-token');
      await tool.close();
    });

    it('does not talk to a server its CAs do not vouch for', async () => {
      const at = (name: string) => join(pki!.path, name);
      const tool = new Fts3TransferTool({
        url: server.url,
        credentials: { certificatePath: at('client.pem'), keyPath: at('client.key') },
      });
      await expectRejection(tool.poll([randomUUID()]), TransferToolUnavailable);
      await tool.close();
    });
  });
});

const extensionFile = (path: string, line: string): string => {
  execFileSync('sh', ['-c', `printf '%s\\n' "$1" > "$2"`, 'sh', line, path]);
  return path;
};
