import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { protocol, rseWithProtocols } from '../api/replicaSupport.ts';
import { FakeFts3Server } from '../infra/fakeFts3Server.ts';
import { newScope, path } from '../support/dids.ts';
import { linkRses, pathOnRse, placeFile, posixRse, setRseAttributes } from '../support/posixRses.ts';
import { ruleReaches, ruleOverHttp } from '../support/rules.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Recalls from tape as a user meets them: a dataset on a simulated tape RSE (the posix tool waits
 * the recall delay its `simulated_recall_ms` attribute sets; FTS's look-alike stages the file),
 * brought to disk by a rule, or brought online into the tape's staging buffer by a rule on the
 * buffer (STAGEIN requests, the conveyor-stager).
 */

type RequestJson = Readonly<Record<string, unknown>>;

const archived = async (server: TestServer, scope: string, name: string, rse: string): Promise<RequestJson> =>
  expectStatus(await server.root('GET', `/requests/history/${scope}/${name}/${rse}`), 200).json<RequestJson>();

/** A dataset of `files` (name → content) on a posix RSE. */
const datasetOn = async (server: TestServer, rse: string, scope: string, files: Readonly<Record<string, string>>) => {
  const dataset = 'tape.dataset';
  expectStatus(await server.root('POST', path(scope, dataset), { body: { type: 'DATASET' } }), 201);
  for (const [name, content] of Object.entries(files)) await placeFile(server, rse, scope, name, content);
  expectStatus(
    await server.root('POST', path(scope, dataset, '/dids'), {
      body: { dids: Object.keys(files).map((name) => ({ scope, name })) },
    }),
    201,
  );
  return dataset;
};

const expectStaged = (request: RequestJson): void => {
  expect(request.staging_started_at).to.be.a('string');
  expect(request.staging_finished_at).to.be.a('string');
  expect(Date.parse(String(request.staging_finished_at))).to.be.at.least(
    Date.parse(String(request.staging_started_at)),
  );
};

describe('Roles: recalls from tape (STAGEIN, the conveyor-stager, bring_online)', function () {
  this.timeout(90_000);
  let server: TestServer;
  let dirs: { path: string; dispose(): void };
  before(async () => {
    dirs = makeTempDir('tape-');
    server = await startTestServer({ roles: { workers: true } });
  });
  after(async () => {
    await server.stop();
    dirs.dispose();
  });

  it('recalls a dataset from a simulated tape RSE to disk through a rule: staged first, then copied (posix)', async () => {
    const scope = await newScope(server);
    const tape = await posixRse(server, dirs.path, {
      prefix: 'TAPE',
      properties: { rse_type: 'TAPE' },
      attributes: { simulated_recall_ms: '300' },
    });
    const disk = await posixRse(server, dirs.path, { prefix: 'DISK' });
    await linkRses(server, tape.rse, disk.rse);
    const files = { 'run1.raw': 'first run\n', 'run2.raw': 'second run\n' };
    const dataset = await datasetOn(server, tape.rse, scope, files);
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: dataset }],
      copies: 1,
      rse_expression: disk.rse,
    });
    await ruleReaches(server, ruleId, 'OK', 30_000);
    for (const [name, content] of Object.entries(files)) {
      expect(readFileSync(await pathOnRse(server, disk.rse, scope, name), 'utf8')).to.equal(content);
      const request = await archived(server, scope, name, disk.rse);
      expect(request).to.include({
        state: 'DONE',
        request_type: 'TRANSFER',
        source_rse: tape.rse,
        transfertool: 'posix',
      });
      expectStaged(request);
      expect(Date.parse(String(request.started_at))).to.be.at.least(Date.parse(String(request.staging_finished_at)));
    }
  });

  it('brings a dataset online into the tape’s staging buffer: STAGEIN requests the stager submits (posix)', async () => {
    const scope = await newScope(server);
    const buffer = await posixRse(server, dirs.path, { prefix: 'BUFFER', properties: { staging_area: true } });
    // The buffer is the tape's disk cache: the same files, at the same place.
    const tape = await posixRse(server, dirs.path, {
      prefix: 'TAPE',
      root: buffer.root,
      properties: { rse_type: 'TAPE' },
      attributes: { simulated_recall_ms: '200', staging_buffer: buffer.rse },
    });
    const files = { 'raw.1': 'one\n', 'raw.2': 'two\n' };
    const dataset = await datasetOn(server, tape.rse, scope, files);
    const ruleId = await ruleOverHttp(server, {
      dids: [{ scope, name: dataset }],
      copies: 1,
      rse_expression: buffer.rse,
      lifetime: 3600,
    });
    await ruleReaches(server, ruleId, 'OK', 30_000);
    for (const name of Object.keys(files)) {
      const request = await archived(server, scope, name, buffer.rse);
      expect(request).to.include({
        state: 'DONE',
        request_type: 'STAGEIN',
        source_rse: tape.rse,
        transfertool: 'posix',
      });
      expect(request.dest_url).to.equal(`file://localhost${await pathOnRse(server, tape.rse, scope, name)}`);
      expectStaged(request);
    }
    const daemons = expectStatus(await server.root('GET', '/admin/daemons'), 200).json<{ role: string }[]>();
    expect(daemons.map((daemon) => daemon.role)).to.include('conveyor-stager');
  });

  it('asks FTS to bring the file online first (bring_online), and records the staging times it reports', async () => {
    const fts = await FakeFts3Server.start();
    try {
      const scope = await newScope(server);
      const tape = await rseWithProtocols(server, [{ root: protocol('root', 'tape.example.org') }], {
        rse_type: 'TAPE',
      });
      await setRseAttributes(server, tape.rse, { fts: fts.url });
      const disk = await rseWithProtocols(server, [{ root: protocol('root', 'disk.example.org') }]);
      await setRseAttributes(server, disk.rse, { fts: fts.url, transfertool: 'fts3' });
      await linkRses(server, tape.rse, disk.rse);
      expectStatus(
        await server.root('POST', '/replicas', {
          body: { rse: tape.rse, files: [{ scope, name: 'f1', bytes: 100, adler32: '0cc737eb' }] },
        }),
        201,
      );
      const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'f1' }], copies: 1, rse_expression: disk.rse });
      await ruleReaches(server, ruleId, 'OK', 30_000);
      const [submission] = fts.requestsTo('POST', '/jobs');
      const body = submission!.body as { files: Record<string, unknown>[]; params: Record<string, unknown> };
      expect(body.params).to.include({ bring_online: 43_200 });
      expect(body.files[0]!.metadata).to.include({ src_type: 'TAPE', dst_type: 'DISK' });
      expectStaged(await archived(server, scope, 'f1', disk.rse));
    } finally {
      await fts.stop();
    }
  });

  it('writes to a tape destination with its archive_timeout, and waits for the file to reach tape (FTS)', async () => {
    const fts = await FakeFts3Server.start();
    try {
      const scope = await newScope(server);
      const disk = await rseWithProtocols(server, [{ root: protocol('root', 'disk.example.org') }]);
      await setRseAttributes(server, disk.rse, { fts: fts.url });
      const tape = await rseWithProtocols(server, [{ root: protocol('root', 'tape.example.org') }], {
        rse_type: 'TAPE',
      });
      await setRseAttributes(server, tape.rse, { fts: fts.url, transfertool: 'fts3', archive_timeout: '86400' });
      await linkRses(server, disk.rse, tape.rse);
      expectStatus(
        await server.root('POST', '/replicas', {
          body: { rse: disk.rse, files: [{ scope, name: 'f1', bytes: 100, adler32: '0cc737eb' }] },
        }),
        201,
      );
      const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'f1' }], copies: 1, rse_expression: tape.rse });
      await ruleReaches(server, ruleId, 'OK', 30_000);
      const body = fts.requestsTo('POST', '/jobs')[0]!.body as { params: Record<string, unknown> };
      expect(body.params).to.include({ archive_timeout: 86_400, dst_file_report: true, overwrite: false });
    } finally {
      await fts.stop();
    }
  });
});
