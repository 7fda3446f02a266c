import { expect } from 'chai';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { checksumFile } from '../../infra/transfer/checksums.ts';
import { RoleStatusStore } from '../../workers/roleStatus.ts';
import { darkReaperRole } from '../../workers/quarantine/darkReaperRole.ts';
import { reaperRole } from '../../workers/replica/reaperRole.ts';
import { rseWithProtocols } from '../api/replicaSupport.ts';
import { newScope, path } from '../support/dids.ts';
import { eventually } from '../support/eventually.ts';
import { roleCycles } from '../support/roleCycles.ts';
import { ruleJsonOverHttp, ruleReaches, ruleOverHttp } from '../support/rules.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { ManualClock } from '../support/clock.ts';

/**
 * Deletion and recovery as a user meets them: a server with its workers, two `posix` RSEs in
 * temporary directories, and files that go from disk and catalogue, stay, come back or are lost
 * without anyone acting (behaviour rules 7, 21 and 25).
 */

type Replica = { path: string; content: string };

describe('Roles: deletion and recovery on posix RSEs (rules 7, 21 and 25)', function () {
  this.timeout(90_000);
  const dirs = makeTempDir('deletion-rses-');
  let server: TestServer;
  let scope: string;
  let a: { rse: string; id: string };
  let b: { rse: string; id: string };
  // Running, as the daemons expect between their cycles; a test jumps it over a tombstone's delay.
  const clock = new ManualClock({ running: true });

  before(async () => {
    server = await startTestServer({ roles: { workers: true }, clock });
    const everySecond = { interval: 1 };
    expectStatus(
      await server.root('POST', '/config', {
        body: {
          reaper: everySecond,
          necromancer: everySecond,
          undertaker: everySecond,
          'dark-reaper': everySecond,
          'minos-temporary-expiration': everySecond,
          'suspicious-replica-recoverer': { interval: 1, active_mode: true, nattempts: 1 },
        },
      }),
      201,
    );
    server = await server.restart();
  });
  after(async () => {
    await server.stop();
    dirs.dispose();
  });
  beforeEach(async () => {
    scope = await newScope(server);
    a = await posixRse('A');
    b = await posixRse('B');
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      expectStatus(await server.root('POST', `/rses/${from.rse}/distances/${to.rse}`, { body: { distance: 1 } }), 201);
    }
  });

  let rses = 0;
  const posixRse = async (label: string) => {
    rses += 1;
    const prefix = join(dirs.path, `rse-${rses}-${label}`);
    const domains = {
      lan: { read: 1, write: 1, delete: 1 },
      wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
    };
    return rseWithProtocols(server, [
      { file: { hostname: 'localhost', port: 0, prefix, impl: 'rucio.rse.protocols.posix.Default', domains } },
    ]);
  };
  const localPath = async (rse: string, name: string): Promise<string> => {
    const pfns = expectStatus(await server.root('GET', `/rses/${rse}/lfns2pfns?lfn=${scope}:${name}`), 200).json<
      Record<string, string>
    >();
    return pfns[`${scope}:${name}`]!.replace('file://localhost', '');
  };
  /** Writes a file on the RSE's storage and registers it there. */
  const stored = async (rse: string, name: string, content = `the bytes of ${name}\n`): Promise<Replica> => {
    const file = await localPath(rse, name);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    const { adler32 } = await checksumFile(file, 'adler32');
    expectStatus(
      await server.root('POST', '/replicas', {
        body: { rse, files: [{ scope, name, bytes: Buffer.byteLength(content), adler32 }] },
      }),
      201,
    );
    return { path: file, content };
  };
  const dataset = async (name: string, files: readonly string[], close = false) => {
    expectStatus(await server.root('POST', path(scope, name), { body: { type: 'DATASET' } }), 201);
    if (files.length > 0)
      expectStatus(
        await server.root('POST', path(scope, name, '/dids'), {
          body: { dids: files.map((file) => ({ scope, name: file })) },
        }),
        201,
      );
    if (close) expectStatus(await server.root('PUT', path(scope, name, '/status'), { body: { open: false } }), 200);
  };
  const obsolete = async (rse: string, names: readonly string[]) =>
    expectStatus(
      await server.root('POST', '/replicas/tombstone', {
        body: { replicas: names.map((name) => ({ scope, name, rse })) },
      }),
      201,
    );
  const statesOf = async (name: string): Promise<Record<string, string>> => {
    const response = await server.root('GET', `/replicas/${scope}/${name}?all_states=true`);
    if (response.status === 404) return {};
    return expectStatus(response, 200).lines<{ states: Record<string, string> }>()[0]?.states ?? {};
  };
  const didStatus = async (name: string) => (await server.root('GET', path(scope, name))).status;

  it('deletes a replica whose tombstone has passed and no lock holds from disk and catalogue, then its file and the closed dataset it emptied (rule 21)', async () => {
    const replica = await stored(a.rse, 'f1');
    await dataset('ds', ['f1'], true);
    await obsolete(a.rse, ['f1']);
    await eventually(() => !existsSync(replica.path), 20_000, 'the file gone from disk');
    await eventually(async () => (await didStatus('f1')) === 404, 10_000, 'the file gone from the catalogue');
    await eventually(async () => (await didStatus('ds')) === 404, 10_000, 'the emptied closed dataset gone');
    const usage = expectStatus(await server.root('GET', `/rses/${a.rse}/usage`), 200).lines<{
      source: string;
      used: number;
      files: number;
    }>();
    expect(usage.find((row) => row.source === 'rucio')).to.include({ used: 0, files: 0 });
  });

  it('never deletes a replica a rule locks, even when the rule races its deletion (rule 21)', async () => {
    const replica = await stored(a.rse, 'f1');
    await obsolete(a.rse, ['f1']);
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'f1' }], copies: 1, rse_expression: a.rse });
    await ruleReaches(server, ruleId, 'OK', 20_000);
    // Two whole reaper cycles that saw the lock (one begun earlier has ended before them).
    await roleCycles(server, reaperRole.name, 2);
    expect(readFileSync(replica.path, 'utf8')).to.equal(replica.content);
    expect(await statesOf('f1')).to.deep.equal({ [a.rse]: 'AVAILABLE' });
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'OK', locks_ok_cnt: 1 });
  });

  it('empties a greedy RSE of its unlocked replicas whose tombstone has passed, and of those only (rule 21)', async () => {
    for (const rse of [a.rse, b.rse])
      expectStatus(await server.root('POST', `/rses/${rse}/attr/tombstone_delay`, { body: { value: '600' } }), 201);
    expectStatus(await server.root('POST', `/rses/${a.rse}/attr/greedyDeletion`, { body: { value: true } }), 201);
    const unlocked = [await stored(a.rse, 'f1'), await stored(a.rse, 'f2')];
    const locked = await stored(a.rse, 'kept');
    const elsewhere = await stored(b.rse, 'f3');
    await ruleOverHttp(server, { dids: [{ scope, name: 'kept' }], copies: 1, rse_expression: a.rse });
    clock.advance(601_000);
    await eventually(
      () => unlocked.every((replica) => !existsSync(replica.path)),
      20_000,
      'the unlocked replicas gone',
    );
    await roleCycles(server, reaperRole.name, 2);
    expect(existsSync(locked.path), 'the locked replica stays').to.equal(true);
    expect(existsSync(elsewhere.path), 'a passed tombstone on a RSE that is not greedy, without need, stays').to.equal(
      true,
    );
    expect(await statesOf('kept')).to.deep.equal({ [a.rse]: 'AVAILABLE' });
  });

  it('copies a BAD replica again from another copy, so it is AVAILABLE on its RSE without anyone acting (rule 25)', async () => {
    const good = await stored(a.rse, 'f1');
    await stored(b.rse, 'f1', good.content);
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'f1' }], copies: 1, rse_expression: a.rse });
    await ruleReaches(server, ruleId, 'OK', 20_000);
    writeFileSync(good.path, 'corrupted bytes\n');
    expectStatus(
      await server.root('POST', '/replicas/bad/dids', {
        body: { dids: [{ scope, name: 'f1' }], rse: a.rse, reason: 'checksum mismatch' },
      }),
      201,
    );
    // The copy may come back within a second: the Recovery request's history shows it happened.
    await eventually(
      async () => (await server.root('GET', `/requests/history/${scope}/f1/${a.rse}`)).status === 200,
      30_000,
      'the Recovery transfer done',
    );
    await eventually(async () => (await statesOf('f1'))[a.rse] === 'AVAILABLE', 30_000, 'the replica AVAILABLE again');
    expect(readFileSync(good.path, 'utf8')).to.equal(good.content);
    expect(await ruleJsonOverHttp(server, ruleId)).to.include({ state: 'OK', locks_ok_cnt: 1 });
    const rows = expectStatus(
      await server.root('GET', `/replicas/bad/states?rse=${a.rse}&list_pfns=false`),
      200,
    ).lines<{ name: string; state: string }>();
    expect(rows.filter((row) => row.name === 'f1').map((row) => row.state)).to.deep.equal(['RECOVERED']);
    const recovery = expectStatus(await server.root('GET', `/requests/history/${scope}/f1/${a.rse}`), 200).json<{
      activity: string;
      state: string;
    }>();
    expect(recovery).to.include({ activity: 'Recovery', state: 'DONE' });
  });

  it('declares a BAD replica without another copy LOST: its lock removed, its rule saying so, the file detached from its dataset and deleted from disk (rule 25)', async () => {
    const replica = await stored(a.rse, 'f1');
    await dataset('ds', ['f1']);
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a.rse });
    await ruleReaches(server, ruleId, 'OK', 20_000);
    expectStatus(
      await server.root('POST', '/replicas/bad/dids', {
        body: { dids: [{ scope, name: 'f1' }], rse: a.rse, reason: 'lost disk' },
      }),
      201,
    );
    await eventually(
      async () => (await ruleJsonOverHttp(server, ruleId)).locks_ok_cnt === 0,
      20_000,
      'the lock removed',
    );
    const file = expectStatus(await server.root('GET', path(scope, 'f1', '/meta')), 200).json<{
      availability: string;
    }>();
    expect(file.availability).to.equal('LOST');
    const history = expectStatus(await server.root('GET', `/rules/${scope}/ds/history`), 200).lines<{
      cause: string | null;
    }>();
    expect(history.map((row) => row.cause)).to.include(`recovery: ${scope}:f1 on ${a.rse} lost`);
    expect(expectStatus(await server.root('GET', path(scope, 'ds', '/dids')), 200).lines()).to.deep.equal([]);
    const messages = expectStatus(await server.root('GET', '/admin/messages'), 200).lines<{
      event_type: string;
      payload: Record<string, string>;
    }>();
    expect(
      messages
        .filter((message) => message.event_type === 'LOST' && message.payload.name === 'f1')
        .map((message) => message.payload),
    ).to.deep.equal([{ scope, name: 'f1', dataset_scope: scope, dataset_name: 'ds' }]);
    // The lost replica, UNAVAILABLE with an obsolete tombstone, is the reaper's.
    await eventually(() => !existsSync(replica.path), 20_000, 'the lost replica deleted from disk');
  });

  it('deletes an expired dataset with its rules, and the reaper its purged replicas (rule 7)', async () => {
    const replica = await stored(a.rse, 'f1');
    await dataset('ds', ['f1']);
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'ds' }], copies: 1, rse_expression: a.rse });
    await ruleReaches(server, ruleId, 'OK', 20_000);
    expectStatus(await server.root('POST', path(scope, 'ds', '/meta/lifetime'), { body: { value: -1 } }), 201);
    await eventually(async () => (await didStatus('ds')) === 404, 20_000, 'the expired dataset deleted');
    // Rules are another projection group's read model than DIDs: the rule's deletion may show a moment later.
    await eventually(
      async () => (await server.root('GET', `/rules/${ruleId}`)).status === 404,
      10_000,
      'its rule gone',
    );
    await eventually(() => !existsSync(replica.path), 20_000, 'its purged replica deleted from disk');
    await eventually(async () => (await didStatus('f1')) === 404, 10_000, 'the file gone with its last replica');
  });

  it('makes a temporarily unavailable replica AVAILABLE again once its expiry has passed', async () => {
    await stored(a.rse, 'f1');
    const pfn = `file://localhost${await localPath(a.rse, 'f1')}`;
    const expiresAt = new Date(clock.now() + 60_000).toISOString().replace('Z', '');
    expectStatus(
      await server.root('POST', '/replicas/bad/pfns', {
        body: { pfns: [pfn], state: 'TEMPORARY_UNAVAILABLE', reason: 'maintenance', expires_at: expiresAt },
      }),
      201,
    );
    // Listings do not show unreadable replicas: the file's state as its stream holds it does.
    const stateOn = async (rse: string) =>
      expectStatus(await server.root('GET', `/audit/dids/${scope}/f1/state`), 200)
        .json<{ replicas: { rse: string; state: string }[] }>()
        .replicas.find((replica) => replica.rse === rse)?.state;
    expect(await stateOn(a.rse)).to.equal('TEMPORARY_UNAVAILABLE');
    clock.advance(61_000);
    await eventually(async () => (await stateOn(a.rse)) === 'AVAILABLE', 20_000, 'the replica available again');
    // The stream shows it first; the `T` row goes when the projections apply the same event.
    const rows = async () =>
      expectStatus(await server.root('GET', `/replicas/bad/states?rse=${a.rse}&list_pfns=false`), 200)
        .lines<{ state: string }>()
        .map((row) => row.state);
    await eventually(async () => (await rows()).length === 0, 10_000, 'its T row gone');
  });

  it('deletes quarantined dark files from disk, and leaves a registered replica quarantined by mistake in place', async () => {
    const registered = await stored(a.rse, 'f1');
    const prefix = join(dirs.path, `rse-${rses - 1}-A`);
    const dark = join(prefix, 'dark', 'leftover.dat');
    mkdirSync(dirname(dark), { recursive: true });
    writeFileSync(dark, 'nobody knows me\n');
    const registeredPath = registered.path.slice(prefix.length);
    expectStatus(
      await server.root('POST', '/replicas/quarantine', {
        body: { rse: a.rse, replicas: [{ path: 'dark/leftover.dat' }, { path: registeredPath }] },
      }),
      200,
    );
    await eventually(() => !existsSync(dark), 20_000, 'the dark file deleted');
    await roleCycles(server, darkReaperRole.name, 2);
    expect(readFileSync(registered.path, 'utf8')).to.equal(registered.content);
    expect(await statesOf('f1')).to.deep.equal({ [a.rse]: 'AVAILABLE' });
  });

  it('turns a replica declared suspicious often enough BAD, which is then copied again (§2.4, rule 25)', async () => {
    expectStatus(
      await server.root('POST', `/rses/${a.rse}/attr/enable_suspicious_file_recovery`, { body: { value: true } }),
      201,
    );
    const good = await stored(a.rse, 'f1');
    await stored(b.rse, 'f1', good.content);
    await ruleOverHttp(server, { dids: [{ scope, name: 'f1' }], copies: 1, rse_expression: a.rse });
    const pfn = `file://localhost${good.path}`;
    for (let declaration = 0; declaration < 2; declaration += 1) {
      expectStatus(
        await server.root('POST', '/replicas/suspicious', { body: { pfns: [pfn], reason: 'checksum error on read' } }),
        201,
      );
    }
    await eventually(
      async () => {
        const rows = expectStatus(
          await server.root('GET', `/replicas/bad/states?rse=${a.rse}&list_pfns=false`),
          200,
        ).lines<{ name: string; state: string }>();
        return rows.some((row) => row.name === 'f1' && (row.state === 'BAD' || row.state === 'RECOVERED'));
      },
      20_000,
      'the replica declared BAD',
    );
    await eventually(async () => (await statesOf('f1'))[a.rse] === 'AVAILABLE', 30_000, 'the replica recovered');
  });

  it('shows each daemon’s last cycle, what it did and what it skipped', async () => {
    await stored(a.rse, 'f1');
    await obsolete(a.rse, ['f1']);
    const status = new RoleStatusStore(server.runtime.redisUrl!, server.runtime.services.config.queuePrefix);
    try {
      await eventually(
        async () => ((await status.statusOf([reaperRole]))[0]!.lastCycle?.detail ?? '').includes(`${a.rse}: deleted 1`),
        20_000,
        'a reaper cycle that deleted it',
      );
      const [reaper] = await status.statusOf([reaperRole]);
      expect(reaper!.lastCycle?.detail).to.match(/deleted 1 \(\d+ bytes\), 1 DIDs erased \[obsolete\]/);
    } finally {
      await status.close();
    }
  });
});
