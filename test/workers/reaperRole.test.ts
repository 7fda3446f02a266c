import { expect } from 'chai';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { silentLogger } from '../../infra/logger.ts';
import { PosixStorage } from '../../infra/storage/posixStorage.ts';
import type { FileDeletion, Storage } from '../../infra/storage/storage.ts';
import { createStorages } from '../../infra/storage/storages.ts';
import { createTransferTools } from '../../infra/transfer/transferTools.ts';
import type { CycleReport } from '../../workers/role.ts';
import { clearReaperExclusions, reaperRole } from '../../workers/replica/reaperRole.ts';
import { createWorkerContext, type WorkerContext } from '../../workers/workerContext.ts';
import { rseWithProtocols } from '../api/replicaSupport.ts';
import { newScope } from '../support/dids.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { ManualClock } from '../support/clock.ts';

/**
 * The reaper's cycle, run by hand against a server without workers, with the storage it deletes
 * on: what a cycle decides (the need, dry runs, "not found"), and what storage errors do (the
 * replica keeps its record, BEING_DELETED; the RSE is left alone for a while). Rule 21.
 */
describe('Role: the reaper’s cycle (rule 21)', function () {
  this.timeout(30_000);
  const dirs = makeTempDir('reaper-role-');
  let server: TestServer;
  let scope: string;
  let rse: { rse: string; id: string };
  let prefix: string;
  let count = 0;

  // The cycles are run by hand: the clock stands still unless a test moves it.
  const clock = new ManualClock();
  before(async () => (server = await startTestServer({ clock })));
  after(async () => {
    await server.stop();
    dirs.dispose();
  });
  beforeEach(async () => {
    clearReaperExclusions();
    scope = await newScope(server);
    count += 1;
    prefix = join(dirs.path, `rse-${count}-`);
    const domains = {
      lan: { read: 1, write: 1, delete: 1 },
      wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
    };
    rse = await rseWithProtocols(server, [
      { file: { hostname: 'localhost', port: 0, prefix, impl: 'rucio.rse.protocols.posix.Default', domains } },
    ]);
  });
  afterEach(async () =>
    expectStatus(
      await server.root('POST', '/config', { body: { reaper: { dry_run: false, auto_exclude_threshold: 100 } } }),
      201,
    ),
  );

  const contextWith = (storage: Storage): WorkerContext =>
    createWorkerContext(
      server.runtime.services.commands,
      server.runtime.services.readModels,
      server.runtime.services.progress,
      silentLogger(),
      createTransferTools({ dataDir: dirs.path, clock }),
      { clock, storages: createStorages({ posix: () => storage }) },
    );
  let cycle = 0;
  const runCycle = async (storage: Storage = new PosixStorage()): Promise<CycleReport> => {
    cycle += 1;
    const report = await reaperRole.run({ jobId: `test-${cycle}`, startedAt: clock.date() }, contextWith(storage));
    // Let the read models take the cycle's writes before the test reads them.
    await server.runtime.services.progress.waitFor(
      await server.runtime.services.commands.eventStore.headPosition(),
      5_000,
    );
    return report;
  };
  /** Files with an obsolete tombstone (or a passed one with `tombstone_delay`), written on disk unless `missing`. */
  const files = async (
    names: readonly string[],
    options: { missing?: boolean; obsolete?: boolean } = {},
  ): Promise<string[]> => {
    const paths: string[] = [];
    for (const name of names) {
      const pfns = expectStatus(await server.root('GET', `/rses/${rse.rse}/lfns2pfns?lfn=${scope}:${name}`), 200).json<
        Record<string, string>
      >();
      const path = pfns[`${scope}:${name}`]!.replace('file://localhost', '');
      if (!options.missing) {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, 'x'.repeat(100));
      }
      paths.push(path);
    }
    expectStatus(
      await server.root('POST', '/replicas', {
        body: { rse: rse.rse, files: names.map((name) => ({ scope, name, bytes: 100, adler32: '0cc737eb' })) },
      }),
      201,
    );
    if (options.obsolete !== false)
      expectStatus(
        await server.root('POST', '/replicas/tombstone', {
          body: { replicas: names.map((name) => ({ scope, name, rse: rse.rse })) },
        }),
        201,
      );
    return paths;
  };
  /** Replicas the cycle deleted on this test's RSE (a cycle works on every RSE, those of earlier tests too). */
  const deletedHere = (report: CycleReport): number =>
    Number(new RegExp(`${rse.rse}: deleted (\\d+)`).exec(report.detail ?? '')?.[1] ?? 0);
  const stateOf = async (name: string) => {
    const response = await server.root('GET', `/audit/dids/${scope}/${name}/state`);
    return expectStatus(response, 200).json<{ status: string; replicas: { rse: string; state: string }[] }>();
  };

  it('deletes obsolete replicas and counts a file already gone from storage as deleted', async () => {
    const [present] = await files(['f1']);
    await files(['gone'], { missing: true });
    const report = await runCycle();
    expect(deletedHere(report)).to.equal(2);
    expect(report.detail).to.include(`${rse.rse}: deleted 2 (200 bytes, 1 not found on storage)`);
    expect(existsSync(present!)).to.equal(false);
    expect((await stateOf('gone')).status).to.equal('ERASED');
  });

  it('deletes only what a dry run reports', async () => {
    const [path] = await files(['f1']);
    expectStatus(await server.root('POST', '/config', { body: { reaper: { dry_run: true } } }), 201);
    const report = await runCycle();
    expect(deletedHere(report)).to.equal(0);
    expect(report.skipped).to.deep.include({ what: `${scope}:f1 on ${rse.rse}`, reason: 'dry run (obsolete)' });
    expect(existsSync(path!)).to.equal(true);
  });

  it('deletes replicas whose tombstone has passed, oldest first, only as far as MinFreeSpace needs', async () => {
    expectStatus(await server.root('POST', `/rses/${rse.rse}/attr/tombstone_delay`, { body: { value: '60' } }), 201);
    const paths = await files(['f1', 'f2', 'f3'], { obsolete: false });
    clock.advance(61_000);
    expectStatus(
      await server.root('PUT', `/rses/${rse.rse}/usage`, { body: { source: 'storage', used: 1000, free: 850 } }),
      200,
    );
    expectStatus(
      await server.root('PUT', `/rses/${rse.rse}/limits`, { body: { name: 'MinFreeSpace', value: 1000 } }),
      200,
    );
    const report = await runCycle();
    expect(report.detail).to.match(/space needed: 150 bytes below MinFreeSpace/);
    // 100 bytes each: two replicas free more than the 150 needed; the third stays.
    expect(deletedHere(report)).to.equal(2);
    expect(paths.map((path) => existsSync(path))).to.deep.equal([false, false, true]);
  });

  it('keeps the record of a replica whose file storage would not delete, BEING_DELETED, and leaves the RSE alone after too many such errors', async () => {
    await files(['f1', 'f2']);
    expectStatus(await server.root('POST', '/config', { body: { reaper: { auto_exclude_threshold: 1 } } }), 201);
    const refusing: Storage = {
      name: 'posix',
      delete: async (pfns): Promise<FileDeletion[]> =>
        pfns.map((pfn) => ({ pfn, outcome: 'failed', reason: 'Permission denied', noAccess: true })),
      space: async () => undefined,
    };
    const report = await runCycle(refusing);
    expect(deletedHere(report)).to.equal(0);
    expect(report.skipped.map((skip) => skip.reason)).to.include(`1 storage errors: excluded for 600 s`);
    for (const name of ['f1', 'f2']) {
      const state = await stateOf(name);
      expect(state.status, `${name} keeps its record`).to.equal('LIVE');
      expect(state.replicas.map((replica) => replica.state)).to.deep.equal(['BEING_DELETED']);
    }
    const next = await runCycle();
    expect(deletedHere(next)).to.equal(0);
    expect(next.skipped.map((skip) => skip.reason).some((reason) => reason.startsWith('excluded until'))).to.equal(
      true,
    );
    // `reaper.auto_exclude_timeout` (600 s) later, the RSE is back.
    clock.advance(601_000);
    const after = await runCycle();
    expect(deletedHere(after), 'the deletion finishes once the RSE is back').to.equal(2);
  });

  it('deletes nothing through a symbolic link among the RSE’s directories: the canary it leads to survives (issue 22)', async () => {
    const [path] = await files(['f1']);
    // <prefix>/<scope>/<xx>/<yy>/f1: the scope's directory is swapped for a link to one outside, holding a canary there.
    const below = path!.slice(prefix.length + 1).split('/');
    const outside = join(dirs.path, `outside-${count}`);
    const canary = join(outside, ...below.slice(1));
    mkdirSync(dirname(canary), { recursive: true });
    writeFileSync(canary, 'canary');
    rmSync(join(prefix, below[0]!), { recursive: true });
    symlinkSync(outside, join(prefix, below[0]!));
    const report = await runCycle();
    expect(deletedHere(report)).to.equal(0);
    expect(readFileSync(canary, 'utf8')).to.equal('canary');
    const state = await stateOf('f1');
    expect(state.status, 'the replica keeps its record').to.equal('LIVE');
    expect(state.replicas.map((replica) => replica.state)).to.deep.equal(['BEING_DELETED']);
  });
});
