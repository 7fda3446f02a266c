import Database from 'better-sqlite3';
import { expect } from 'chai';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { answered, killableServer } from '../support/killableServer.ts';
import { expectReadModelsEqualRebuild } from '../support/readModelRebuild.ts';
import { eventually } from '../support/eventually.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Crash safety of deletion (rule 21): a `dms serve` killed with SIGKILL while the reaper deletes
 * a posix RSE's files, then started again on the same data, finishes the work. At the moment of
 * the kill, and at the end, no file on disk is one the catalogue has forgotten (no dark data), and
 * every replica the catalogue dropped is one whose file is gone; in the end each replica was
 * recorded deleted exactly once, and the read models equal a rebuild from the events.
 */
describe('Roles: deletion survives a crash mid-way (rule 21)', function () {
  this.timeout(180_000);
  const dir = makeTempDir('deletion-crash-');
  const storage = join(dir.path, 'storage');
  const dataDir = join(dir.path, 'data');
  const server = killableServer(dataDir);
  after(async () => {
    await server.stop();
    dir.dispose();
  });
  /**
   * Names whose replica the event log records deleted, with how often: a `ReplicaDeleted`, or one
   * inside the `DidErased` of a file that went with its last replica.
   */
  const recordedDeletions = (): Map<string, number> => {
    const events = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
    try {
      const counts = new Map<string, number>();
      for (const row of events
        .prepare("SELECT type, data FROM events WHERE type IN ('ReplicaDeleted', 'DidErased')")
        .all() as { type: string; data: string }[]) {
        const data = JSON.parse(row.data) as { name: string; replicasDeleted?: { name: string }[] };
        for (const { name } of row.type === 'ReplicaDeleted' ? [data] : (data.replicasDeleted ?? []))
          counts.set(name, (counts.get(name) ?? 0) + 1);
      }
      return counts;
    } finally {
      events.close();
    }
  };

  it('loses no catalogue record and leaves no file the catalogue forgot, after SIGKILL during deletion and a restart', async () => {
    const files = Array.from({ length: 400 }, (_, index) => `f${String(index).padStart(3, '0')}`);
    let call = await server.start();
    // Small chunks: many steps to be caught between.
    answered(await call('POST', '/config', { body: { reaper: { interval: 1, chunk_size: 10 } } }), 201);
    answered(await call('POST', '/scopes/root/crash'), 201);
    answered(await call('POST', '/rses/CRASH_POSIX', { body: {} }), 201);
    const domains = {
      lan: { read: 1, write: 1, delete: 1 },
      wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
    };
    answered(
      await call('POST', '/rses/CRASH_POSIX/protocols/file', {
        body: { hostname: 'localhost', port: 0, prefix: storage, impl: 'rucio.rse.protocols.posix.Default', domains },
      }),
      201,
    );
    const pathOf = new Map<string, string>();
    for (let start = 0; start < files.length; start += 100) {
      const batch = files.slice(start, start + 100);
      const query = batch.map((name) => `lfn=crash:${name}`).join('&');
      const pfns = answered(await call('GET', `/rses/CRASH_POSIX/lfns2pfns?${query}`), 200).json<
        Record<string, string>
      >();
      for (const name of batch) {
        const path = pfns[`crash:${name}`]!.replace('file://localhost', '');
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, 'x'.repeat(100));
        pathOf.set(name, path);
      }
      answered(
        await call('POST', '/replicas', {
          body: {
            rse: 'CRASH_POSIX',
            files: batch.map((name) => ({ scope: 'crash', name, bytes: 100, adler32: '0cc737eb' })),
          },
        }),
        201,
      );
    }
    answered(await call('POST', '/dids/crash/ds', { body: { type: 'DATASET' } }), 201);
    answered(
      await call('POST', '/dids/crash/ds/dids', { body: { dids: files.map((name) => ({ scope: 'crash', name })) } }),
      201,
    );
    answered(await call('PUT', '/dids/crash/ds/status', { body: { open: false } }), 200);
    answered(
      await call('POST', '/replicas/tombstone', {
        body: { replicas: files.map((name) => ({ scope: 'crash', name, rse: 'CRASH_POSIX' })) },
      }),
      201,
    );
    const onDisk = () => files.filter((name) => existsSync(pathOf.get(name)!));
    await eventually(() => onDisk().length < files.length - 40, 60_000, 'deletion under way');

    await server.crash();
    // No dark data at the kill: every file still on disk still has its replica in the catalogue.
    const deletedAtCrash = recordedDeletions();
    const remaining = onDisk();
    expect(remaining.length, 'the kill came before the end').to.be.greaterThan(0);
    for (const name of remaining)
      expect(deletedAtCrash.has(name), `${name} is on disk and still in the catalogue`).to.equal(false);

    call = await server.start();
    await eventually(() => onDisk().length === 0, 90_000, 'every file deleted after the restart');
    await eventually(
      async () => (await call('GET', '/dids/crash/ds')).status === 404,
      30_000,
      'the emptied dataset deleted',
    );
    const deletions = recordedDeletions();
    expect([...deletions.keys()].sort()).to.deep.equal(files);
    expect(
      [...deletions.values()].every((count) => count === 1),
      'each replica recorded deleted once',
    ).to.equal(true);
    const usage = answered(await call('GET', '/rses/CRASH_POSIX/usage'), 200).lines<{
      source: string;
      files: number;
      used: number;
    }>();
    expect(usage.find((row) => row.source === 'rucio')).to.include({ files: 0, used: 0 });
    // And the read models are the ones a projector makes from the events alone (issue 22).
    await server.stop();
    await expectReadModelsEqualRebuild(dataDir);
  });
});
