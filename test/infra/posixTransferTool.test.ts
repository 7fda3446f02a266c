import { expect } from 'chai';
import { randomBytes, randomUUID, createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { pfnFromProtocol } from '../../domain/rse/lfn2pfn.ts';
import type { RseProtocol } from '../../domain/rse/protocol.ts';
import { Adler32 } from '../../infra/transfer/checksums.ts';
import { pathOfFilePfn } from '../../infra/transfer/posixCopy.ts';
import { PosixTransferTool } from '../../infra/transfer/posixTransferTool.ts';
import type { TransferJob } from '../../infra/transfer/transferTool.ts';
import { eventually } from '../support/eventually.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { pollUntilFinal, transferJob, transferToolContract } from './transferTool.contract.ts';

/** Two RSE directories under a temporary directory, and jobs between them built the way the conveyor builds them. */
const rseDirectories = () => {
  const dir = makeTempDir('dms-posix-');
  const sourcePrefix = join(dir.path, 'source_rse');
  const destinationPrefix = join(dir.path, 'dest_rse');
  mkdirSync(sourcePrefix);
  const protocol = (prefix: string) =>
    ({
      scheme: 'file',
      hostname: 'localhost',
      port: 0,
      prefix,
      impl: 'rucio.rse.protocols.posix.Default',
    }) as unknown as RseProtocol;
  const sourcePfn = (path: string) => pfnFromProtocol(protocol(sourcePrefix), path);
  const destinationPfn = (path: string) => pfnFromProtocol(protocol(destinationPrefix), path);

  /** Writes a source file of `content` at `path` below the source prefix. */
  const writeSource = (path: string, content: Buffer): void => {
    const file = join(sourcePrefix, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  };

  const job = (content: Buffer, overrides: Partial<TransferJob> = {}): TransferJob => {
    const requestId = overrides.requestId ?? randomUUID();
    const path = `user/jdoe/${requestId.slice(0, 2)}/${requestId.slice(2, 4)}/file-${requestId}`;
    writeSource(path, content);
    return transferJob({
      requestId,
      file: {
        scope: 'user.jdoe',
        name: `file-${requestId}`,
        bytes: content.length,
        adler32: new Adler32().update(content).digest(),
        md5: null,
      },
      sources: [{ rse: 'SOURCE_RSE', rseId: 'source-id', pfn: sourcePfn(path), root: sourcePrefix }],
      destination: { rse: 'DEST_RSE', rseId: 'dest-id', pfn: destinationPfn(path), root: destinationPrefix },
      ...overrides,
    });
  };

  return { dir, sourcePrefix, destinationPrefix, sourcePfn, destinationPfn, writeSource, job };
};

/** Every file below a directory, hidden ones included. */
const filesBelow = (directory: string): string[] =>
  existsSync(directory)
    ? readdirSync(directory, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name))
    : [];

transferToolContract('posix', async () => {
  const rses = rseDirectories();
  // 64 KiB chunks at 1 MiB/s: small files copy at once, the 8 MiB file of jobThatRuns takes 8 s.
  const tool = new PosixTransferTool({ concurrency: 4, chunkBytes: 64 * 1024, maxBytesPerSecond: 1024 * 1024 });
  return {
    tool,
    jobThatSucceeds: (requestId) => rses.job(randomBytes(3000), { requestId }),
    jobThatFails: (requestId) => {
      const job = rses.job(randomBytes(3000), { requestId });
      return { ...job, file: { ...job.file, adler32: '00000001' } };
    },
    jobThatRuns: (requestId) => rses.job(randomBytes(8 * 1024 * 1024), { requestId }),
    dispose: async () => {
      await tool.close();
      rses.dir.dispose();
    },
  };
});

describe('PosixTransferTool', () => {
  let rses: ReturnType<typeof rseDirectories>;
  let tool: PosixTransferTool;

  beforeEach(() => {
    rses = rseDirectories();
    tool = new PosixTransferTool({ chunkBytes: 64 * 1024 });
  });
  afterEach(async () => {
    await tool.close();
    rses.dir.dispose();
  });

  const runOne = async (job: TransferJob) => {
    const [submitted] = await tool.submit([job]);
    return (await pollUntilFinal(tool, [submitted!.externalId])).get(submitted!.externalId)!;
  };

  describe('PFNs', () => {
    it('reads the path of the PFNs pfnFromProtocol builds for the file scheme, whatever the host', () => {
      expect(rses.sourcePfn('a/b')).to.equal(`file://localhost${rses.sourcePrefix}/a/b`);
      expect(pathOfFilePfn(rses.sourcePfn('a/b'))).to.equal(`${rses.sourcePrefix}/a/b`);
      expect(pathOfFilePfn('file:///data/rse/x')).to.equal('/data/rse/x');
      expect(pathOfFilePfn('file://storage.example.org/data//rse/x')).to.equal('/data/rse/x');
    });

    it('refuses other schemes and paths that climb out with ..', () => {
      expect(() => pathOfFilePfn('root://eos.cern.ch:1094//eos/x')).to.throw(/not a file:\/\/ PFN/);
      expect(() => pathOfFilePfn('file://localhost/data/rse/../../etc/passwd')).to.throw(/'\.\.'/);
    });

    it('fails a job whose destination is not a file PFN', async () => {
      const job = rses.job(randomBytes(10));
      const report = await runOne({ ...job, destination: { ...job.destination, pfn: 'davs://host:443/x' } });
      expect(report.state).to.equal('FAILED');
      expect(report.reason).to.match(/not a file:\/\/ PFN/);
    });
  });

  describe('copies', () => {
    it('copies the file byte for byte into a new directory, and leaves no temporary file', async () => {
      const content = randomBytes(300_000);
      const job = rses.job(content);
      const report = await runOne(job);
      expect(report).to.include({ state: 'DONE', reason: null, bytesTransferred: content.length });
      expect(report.source).to.deep.equal(job.sources[0]);
      expect(report.startedAt).to.be.a('string');
      const destination = pathOfFilePfn(job.destination.pfn);
      expect(readFileSync(destination).equals(content)).to.equal(true);
      expect(filesBelow(rses.destinationPrefix)).to.deep.equal([destination]);
    });

    it('copies an empty file', async () => {
      const job = rses.job(Buffer.alloc(0));
      expect((await runOne(job)).state).to.equal('DONE');
      expect(statSync(pathOfFilePfn(job.destination.pfn)).size).to.equal(0);
    });

    it('verifies with md5 when that is the only checksum the file has', async () => {
      const content = randomBytes(5000);
      const job = rses.job(content);
      const md5 = createHash('md5').update(content).digest('hex');
      expect((await runOne({ ...job, file: { ...job.file, adler32: null, md5 } })).state).to.equal('DONE');

      const other = rses.job(content);
      const report = await runOne({ ...other, file: { ...other.file, adler32: null, md5: 'ab'.repeat(16) } });
      expect(report.state).to.equal('FAILED');
      expect(report.reason).to.include(`md5 mismatch: expected ${'ab'.repeat(16)}, got ${md5}`);
    });

    it('fails a checksum mismatch with both checksums in the reason, and leaves nothing at the destination', async () => {
      const content = randomBytes(200_000);
      const job = rses.job(content);
      const actual = new Adler32().update(content).digest();
      const report = await runOne({ ...job, file: { ...job.file, adler32: '0badf00d' } });
      expect(report.state).to.equal('FAILED');
      expect(report.reason).to.include(`adler32 mismatch: expected 0badf00d, got ${actual}`);
      expect(filesBelow(rses.destinationPrefix)).to.deep.equal([]);
    });

    it('fails a source whose size differs from the catalogue without reading it', async () => {
      const job = rses.job(randomBytes(1000));
      const report = await runOne({ ...job, file: { ...job.file, bytes: 999 } });
      expect(report.state).to.equal('FAILED');
      expect(report.reason).to.include('size mismatch: expected 999 bytes, got 1000');
    });

    it('tries the next source when one is missing, and reports the source it read', async () => {
      const job = rses.job(randomBytes(4000));
      const missing = {
        rse: 'GONE_RSE',
        rseId: 'gone-id',
        pfn: rses.sourcePfn('nowhere/file'),
        root: rses.sourcePrefix,
      };
      const report = await runOne({ ...job, sources: [missing, ...job.sources] });
      expect(report.state).to.equal('DONE');
      expect(report.source).to.deep.equal(job.sources[0]);
    });

    it('tries the next source when one holds other bytes', async () => {
      const content = randomBytes(4000);
      const job = rses.job(content);
      rses.writeSource('corrupt/copy', randomBytes(4000));
      const corrupt = { rse: 'BAD_RSE', rseId: 'bad-id', pfn: rses.sourcePfn('corrupt/copy'), root: rses.sourcePrefix };
      const report = await runOne({ ...job, sources: [corrupt, ...job.sources] });
      expect(report.state).to.equal('DONE');
      expect(report.source!.rse).to.equal('SOURCE_RSE');
      expect(readFileSync(pathOfFilePfn(job.destination.pfn)).equals(content)).to.equal(true);
    });

    it('names every source that failed when none works', async () => {
      const job = rses.job(randomBytes(10));
      const sources = [
        { rse: 'A', rseId: 'a', pfn: rses.sourcePfn('missing/a'), root: rses.sourcePrefix },
        { rse: 'B', rseId: 'b', pfn: rses.sourcePfn('missing/b'), root: rses.sourcePrefix },
      ];
      const report = await runOne({ ...job, sources });
      expect(report.state).to.equal('FAILED');
      expect(report.reason).to.include('missing/a: no such file').and.include('missing/b: no such file');
    });

    it('reports DONE without copying when the destination already holds a verified copy', async () => {
      const content = randomBytes(10_000);
      const job = rses.job(content);
      await runOne(job);
      const destination = pathOfFilePfn(job.destination.pfn);
      const before = statSync(destination);
      const report = await runOne({ ...job, requestId: randomUUID() });
      expect(report).to.include({ state: 'DONE', bytesTransferred: 0 });
      const after = statSync(destination);
      expect([after.ino, after.mtimeMs]).to.deep.equal([before.ino, before.mtimeMs]);
    });

    it('replaces a destination that holds other bytes', async () => {
      const content = randomBytes(10_000);
      const job = rses.job(content);
      const destination = pathOfFilePfn(job.destination.pfn);
      mkdirSync(dirname(destination), { recursive: true });
      writeFileSync(destination, randomBytes(10_000));
      expect((await runOne(job)).state).to.equal('DONE');
      expect(readFileSync(destination).equals(content)).to.equal(true);
    });

    it('replaces the temporary file a dead copy left, but not one a live copy is writing', async () => {
      const job = rses.job(randomBytes(1000));
      const destination = pathOfFilePfn(job.destination.pfn);
      const temporary = join(dirname(destination), `.file-${job.requestId}.part`);
      mkdirSync(dirname(destination), { recursive: true });
      writeFileSync(temporary, 'half a copy');

      const busy = await runOne(job);
      expect(busy.state).to.equal('FAILED');
      expect(busy.reason).to.match(/another copy to this destination is in progress/);

      const old = new Date(Date.now() - 3_600_000);
      utimesSync(temporary, old, old);
      expect((await runOne({ ...job, requestId: randomUUID() })).state).to.equal('DONE');
      expect(existsSync(temporary)).to.equal(false);
    });
  });

  describe('inside the RSE (issue 22)', () => {
    /** A directory beside the RSEs, with a canary file the tool must never write. */
    const outside = () => {
      const directory = join(rses.dir.path, 'outside');
      mkdirSync(directory, { recursive: true });
      const canary = join(directory, 'canary');
      writeFileSync(canary, 'canary');
      return { directory, canary };
    };
    const pathBelow = (job: TransferJob) => pathOfFilePfn(job.destination.pfn).slice(rses.destinationPrefix.length + 1);

    it('refuses to copy through a symbolic link among the destination directories; the canary outside survives', async () => {
      const job = rses.job(randomBytes(100));
      const { directory } = outside();
      // user/jdoe/<xx>/<yy>/<name> in the RSE: `user` points outside, where the same path ends at a canary.
      const below = pathBelow(job).split('/');
      mkdirSync(rses.destinationPrefix);
      symlinkSync(directory, join(rses.destinationPrefix, below[0]!));
      const canary = join(directory, ...below.slice(1));
      mkdirSync(dirname(canary), { recursive: true });
      writeFileSync(canary, 'canary');
      const report = await runOne(job);
      expect(report.state).to.equal('FAILED');
      expect(report.reason).to.match(/is a symbolic link: the RSE's files are reached without following links/);
      expect(readFileSync(canary, 'utf8')).to.equal('canary');
      expect(filesBelow(directory).sort()).to.deep.equal([join(directory, 'canary'), canary].sort());
    });

    it('replaces a destination that is a link with the copy itself; the file it pointed to survives', async () => {
      const content = randomBytes(100);
      const job = rses.job(content);
      const { canary } = outside();
      const destination = pathOfFilePfn(job.destination.pfn);
      mkdirSync(dirname(destination), { recursive: true });
      symlinkSync(canary, destination);
      expect((await runOne(job)).state).to.equal('DONE');
      expect(lstatSync(destination).isSymbolicLink()).to.equal(false);
      expect(readFileSync(destination).equals(content)).to.equal(true);
      expect(readFileSync(canary, 'utf8')).to.equal('canary');
    });

    it('does not read a source that is a link to a file outside its RSE, even one with the right bytes', async () => {
      const content = randomBytes(100);
      const job = rses.job(content);
      const { directory } = outside();
      const source = pathOfFilePfn(job.sources[0]!.pfn);
      writeFileSync(join(directory, 'secret'), content);
      rmSync(source);
      symlinkSync(join(directory, 'secret'), source);
      const report = await runOne(job);
      expect(report.state).to.equal('FAILED');
      expect(report.reason).to.match(/is a symbolic link: the RSE's files are read without following links/);
      expect(filesBelow(rses.destinationPrefix)).to.deep.equal([]);
    });

    it('refuses a PFN outside the prefix, a prefix that is not normalised, and a file endpoint without one', async () => {
      const job = rses.job(randomBytes(10));
      const elsewhere = { ...job.destination, root: join(rses.dir.path, 'elsewhere') };
      const climbing = { ...job.destination, root: `${rses.destinationPrefix}/../dest_rse` };
      const { root: _root, ...rootless } = job.destination;
      const reasons = await Promise.all(
        [elsewhere, climbing, rootless].map(async (destination) => {
          const report = await runOne({ ...job, requestId: randomUUID(), destination });
          expect(report.state).to.equal('FAILED');
          return report.reason;
        }),
      );
      expect(reasons[0]).to.match(/is not below the prefix/);
      expect(reasons[1]).to.match(/is not an absolute normalised path/);
      expect(reasons[2]).to.match(/no file protocol prefix/);
      expect(existsSync(rses.destinationPrefix)).to.equal(false);
    });
  });

  describe('running in the background', () => {
    it('runs at most `concurrency` copies at once, and queues the rest', async () => {
      await tool.close();
      tool = new PosixTransferTool({ concurrency: 2, chunkBytes: 64 * 1024, maxBytesPerSecond: 2 * 1024 * 1024 });
      const jobs = Array.from({ length: 5 }, () => rses.job(randomBytes(256 * 1024)));
      const submitted = await tool.submit(jobs);
      let most = 0;
      let mostFinishing = 0;
      const ids = submitted.map((job) => job.externalId);
      for (;;) {
        most = Math.max(most, tool.runningCopies);
        mostFinishing = Math.max(mostFinishing, tool.finishingCopies);
        const reports = await tool.poll(ids);
        if ([...reports.values()].every((report) => report.state === 'DONE')) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(most).to.equal(2);
      expect(mostFinishing).to.be.at.most(2);
      expect([tool.runningCopies, tool.finishingCopies]).to.deep.equal([0, 0]);
    });

    it('starts higher priorities first', async () => {
      await tool.close();
      let tick = Date.now();
      tool = new PosixTransferTool({ concurrency: 1, chunkBytes: 64 * 1024, now: () => (tick += 1) });
      const low = rses.job(randomBytes(100), { priority: 1 });
      const high = rses.job(randomBytes(100), { priority: 5 });
      const [first, second, third] = await tool.submit([rses.job(randomBytes(100)), low, high]);
      const reports = await pollUntilFinal(tool, [first!.externalId, second!.externalId, third!.externalId]);
      expect(reports.get(third!.externalId)!.finishedAt! < reports.get(second!.externalId)!.startedAt!).to.equal(true);
    });

    it('copies two jobs for one destination one after the other', async () => {
      const content = randomBytes(50_000);
      const job = rses.job(content);
      const submitted = await tool.submit([job, { ...job, requestId: randomUUID() }]);
      const reports = await pollUntilFinal(
        tool,
        submitted.map((entry) => entry.externalId),
      );
      expect([...reports.values()].map((report) => report.state)).to.deep.equal(['DONE', 'DONE']);
      expect([...reports.values()].map((report) => report.bytesTransferred)).to.deep.equal([50_000, 0]);
    });

    it('cancels a running copy and removes its temporary file before answering', async () => {
      await tool.close();
      tool = new PosixTransferTool({ chunkBytes: 64 * 1024, maxBytesPerSecond: 1024 * 1024 });
      const job = rses.job(randomBytes(4 * 1024 * 1024));
      const [submitted] = await tool.submit([job]);
      const destinationDirectory = dirname(pathOfFilePfn(job.destination.pfn));
      await eventually(() => filesBelow(destinationDirectory).length === 1, 2000, 'the temporary file');
      expect(filesBelow(destinationDirectory)[0]).to.match(/\.part$/);
      await tool.cancel([submitted!.externalId]);
      expect(filesBelow(rses.destinationPrefix)).to.deep.equal([]);
      const report = (await tool.poll([submitted!.externalId])).get(submitted!.externalId)!;
      expect(report).to.include({ state: 'FAILED', reason: 'Transfer cancelled' });
    });

    it('cancels a queued job before it starts', async () => {
      await tool.close();
      tool = new PosixTransferTool({ concurrency: 1, chunkBytes: 64 * 1024, maxBytesPerSecond: 1024 * 1024 });
      const [running, queued] = await tool.submit([rses.job(randomBytes(2 * 1024 * 1024)), rses.job(randomBytes(100))]);
      await tool.cancel([queued!.externalId]);
      const report = (await tool.poll([queued!.externalId])).get(queued!.externalId)!;
      expect(report).to.include({ state: 'FAILED', reason: 'Transfer cancelled', startedAt: null });
      await tool.cancel([running!.externalId]);
    });

    it('does not know jobs of an earlier instance (a restart): LOST', async () => {
      const [submitted] = await tool.submit([rses.job(randomBytes(100))]);
      await pollUntilFinal(tool, [submitted!.externalId]);
      const restarted = new PosixTransferTool();
      expect((await restarted.poll([submitted!.externalId])).get(submitted!.externalId)!.state).to.equal('LOST');
      await restarted.close();
    });

    it('forgets finished jobs after keepFinishedMs', async () => {
      let now = Date.now();
      await tool.close();
      tool = new PosixTransferTool({ keepFinishedMs: 1000, now: () => now });
      const [submitted] = await tool.submit([rses.job(randomBytes(100))]);
      await pollUntilFinal(tool, [submitted!.externalId]);
      now += 1001;
      expect((await tool.poll([submitted!.externalId])).get(submitted!.externalId)!.state).to.equal('LOST');
    });
  });

  describe('tape sources (a simulated recall)', () => {
    const fromTape = (overrides: Partial<TransferJob> = {}): Partial<TransferJob> => ({
      sourceType: 'TAPE',
      bringOnline: 60,
      ...overrides,
    });

    it('brings the file online first, then copies it, and reports when the staging started and ended', async () => {
      const content = randomBytes(1000);
      const job = rses.job(content, fromTape());
      const report = await runOne({ ...job, attributes: { ...job.attributes, simulated_recall_ms: 200 } });
      expect(report.state).to.equal('DONE');
      expect(Date.parse(report.stagingFinishedAt!)).to.be.at.least(Date.parse(report.stagingStartedAt!));
      expect(Date.parse(report.startedAt!)).to.be.at.least(Date.parse(report.stagingFinishedAt!));
      expect(readFileSync(pathOfFilePfn(job.destination.pfn))).to.deep.equal(content);
    });

    it('stays SUBMITTED while the recall lasts', async () => {
      const job = rses.job(randomBytes(100), fromTape());
      const [submitted] = await tool.submit([
        { ...job, attributes: { ...job.attributes, simulated_recall_ms: 60_000 } },
      ]);
      const report = (await tool.poll([submitted!.externalId])).get(submitted!.externalId)!;
      expect(report).to.include({ state: 'SUBMITTED', startedAt: null, stagingFinishedAt: null });
      expect(report.stagingStartedAt).to.be.a('string');
    });

    it('fails as FTS does when the recall takes longer than the bring-online bound', async () => {
      const job = rses.job(randomBytes(100), fromTape({ bringOnline: 0.1 }));
      const report = await runOne({ ...job, attributes: { ...job.attributes, simulated_recall_ms: 5000 } });
      expect(report).to.include({ state: 'FAILED', reason: 'STAGING [62] bring-online timeout has been exceeded' });
      expect(existsSync(pathOfFilePfn(job.destination.pfn))).to.equal(false);
    });

    it('brings a STAGEIN job’s file online where it is, copying nothing', async () => {
      const content = randomBytes(500);
      const job = rses.job(content, fromTape({ requestType: 'STAGEIN' }));
      const stagein: TransferJob = {
        ...job,
        destination: { ...job.sources[0]!, rse: 'BUFFER', rseId: 'buffer-id' },
        attributes: { ...job.attributes, simulated_recall_ms: 100 },
      };
      const report = await runOne(stagein);
      expect(report.state).to.equal('DONE');
      expect(report.stagingFinishedAt).to.be.a('string');
      expect(filesBelow(rses.destinationPrefix)).to.deep.equal([]);
    });
  });
});
