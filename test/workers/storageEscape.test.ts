import { expect } from 'chai';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { addRules } from '../../commands/rule/ruleCreationCommands.ts';
import { didStreamName } from '../../domain/did/did.ts';
import { quarantineStreamName } from '../../domain/quarantine/quarantine.ts';
import { isRecord } from '../../domain/shared/narrowing.ts';
import { checksumFile } from '../../infra/transfer/checksums.ts';
import { RoleStatusStore } from '../../workers/roleStatus.ts';
import { darkReaperRole } from '../../workers/quarantine/darkReaperRole.ts';
import { reaperRole } from '../../workers/replica/reaperRole.ts';
import { rseWithProtocols } from '../api/replicaSupport.ts';
import { assertCanariesUntouched, plantCanary, type Canary } from '../support/canaries.ts';
import { as } from '../support/commandSpec.ts';
import { newScope } from '../support/dids.ts';
import { eventually } from '../support/eventually.ts';
import { hashedPath, plantFile, plantQuarantine, plantScope } from '../support/planted.ts';
import { aRuleRequest, ruleJsonOverHttp, ruleReaches, ruleOverHttp } from '../support/rules.ts';
import { expectStatus, startTestServer, type TestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Attacks on storage through the daemons (issue 33): data stored before names were checked (a
 * name or scope that climbs with `..`, a quarantined path that does) and symbolic links planted
 * inside an RSE's directory. The conveyor (posix copies), the reaper and the dark reaper leave such
 * files alone and say why; a canary file outside every prefix, where each escape would land,
 * survives untouched.
 */
describe('Attacks: the daemons never touch a file outside an RSE (issue 33)', function () {
  this.timeout(120_000);
  const dirs = makeTempDir('storage-escape-');
  /** Where the links planted inside the RSEs point. */
  const elsewhere = join(dirs.path, 'elsewhere');
  let server: TestServer;
  let status: RoleStatusStore;
  let a: { rse: string; id: string; prefix: string };
  let b: { rse: string; id: string; prefix: string };

  /** Every canary of the suite, checked again at its end. */
  const all: Canary[] = [];
  const canary = (path: string): Canary => {
    const planted = plantCanary(path, 'hello\n');
    all.push(planted);
    return planted;
  };
  let made = 0;
  const posixRse = async (label: string) => {
    made += 1;
    const prefix = join(dirs.path, 'rses', `${label}${made}`);
    const domains = {
      lan: { read: 1, write: 1, delete: 1 },
      wan: { read: 1, write: 1, delete: 1, third_party_copy_read: 1, third_party_copy_write: 1 },
    };
    const rse = await rseWithProtocols(server, [
      { file: { hostname: 'localhost', port: 0, prefix, impl: 'rucio.rse.protocols.posix.Default', domains } },
    ]);
    return { ...rse, prefix };
  };

  before(async () => {
    server = await startTestServer({ roles: { workers: true } });
    expectStatus(
      await server.root('POST', '/config', { body: { reaper: { interval: 1 }, 'dark-reaper': { interval: 1 } } }),
      201,
    );
    server = await server.restart();
    status = new RoleStatusStore(server.runtime.redisUrl!, server.runtime.services.config.queuePrefix);
    a = await posixRse('A');
    b = await posixRse('B');
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const)
      expectStatus(await server.root('POST', `/rses/${from.rse}/distances/${to.rse}`, { body: { distance: 1 } }), 201);
  });
  after(async () => {
    await status.close();
    await server.stop();
    dirs.dispose();
  });

  /** Canaries where the file's path would land below each RSE's prefix, resolved as a system call would. */
  const canariesFor = (scope: string, name: string): Canary[] => {
    const landings = new Set([a, b].map((rse) => posix.resolve(rse.prefix, hashedPath(scope, name))));
    for (const landing of landings) {
      expect(landing.startsWith(`${a.prefix}/`) || landing.startsWith(`${b.prefix}/`), landing).to.equal(false);
    }
    return [...landings].map((landing) => canary(landing));
  };
  const streamTypes = async (stream: string) =>
    (await server.runtime.eventStore.readStream(stream)).map((event) => event.type);
  /** Waits until a role's last cycle skipped `what` for a reason matching `reason`. */
  const skippedBy = async (role: typeof reaperRole | typeof darkReaperRole, what: string, reason: RegExp) => {
    let seen: { what: string; reason: string }[] = [];
    await eventually(
      async () => {
        const [roleStatus] = await status.statusOf([role]);
        seen = [...(roleStatus?.lastCycle?.skippedSample ?? [])];
        return seen.some((item) => item.what.includes(what) && reason.test(item.reason));
      },
      30_000,
      `${role.name} skipping ${what}`,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; last skipped: ${JSON.stringify(seen)}`);
    });
  };
  const ruleOn = async (scope: string, name: string, rse: string): Promise<string> => {
    // Through the command layer, as a subscription or a daemon would: the routes refuse such a name.
    const { ruleIds, position } = await addRules(
      server.runtime.services.commands,
      { ...aRuleRequest(name, rse), dids: [{ scope, name }] },
      as('root'),
    );
    if (position !== undefined) await server.runtime.services.progress.waitFor(position, 20_000);
    return ruleIds[0]!;
  };
  const stuck = async (ruleId: string) => ruleReaches(server, ruleId, 'STUCK', 60_000);
  /** A file written on A's storage and registered there through the API. */
  const storedOnA = async (scope: string, name: string) => {
    const file = join(a.prefix, hashedPath(scope, name));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, 'hello\n');
    const { adler32 } = await checksumFile(file, 'adler32');
    expectStatus(
      await server.root('POST', '/replicas', { body: { rse: a.rse, files: [{ scope, name, bytes: 6, adler32 }] } }),
      201,
    );
    return file;
  };
  const ADLER_OF_HELLO = '084b021f';

  it('conveyor: a file named x/../../../../../outside/t1, stored before the fix, is copied nowhere (NO_SOURCES, saying why)', async () => {
    const scope = await newScope(server);
    const name = 'x/../../../../../outside/t1';
    const canaries = canariesFor(scope, name);
    await plantFile(server, { scope, name, bytes: 6, adler32: ADLER_OF_HELLO }, [{ rse: a.rse, rseId: a.id }]);
    const from = await server.runtime.eventStore.headPosition();
    const ruleId = await ruleOn(scope, name, b.rse);
    await stuck(ruleId);
    // The request is another projection group's read model than the rule: it may show a moment later.
    const history = () => server.root('GET', `/requests/history/${scope}/${name}/${b.rse}`, { rawPath: true });
    await eventually(async () => (await history()).status === 200, 30_000, 'the request projected');
    const request = expectStatus(await history(), 200).json<{ state: string }>();
    expect(request).to.include({ state: 'NO_SOURCES' });
    // The request's history says why: its name has no path below an RSE's prefix.
    const events = await server.runtime.eventStore.readAll({ after: from, maxCount: 1000 });
    const reasons = events
      .filter((event) => event.type === 'RequestSourcesUnavailable')
      .flatMap((event) =>
        isRecord(event.data) && Array.isArray(event.data.requests)
          ? event.data.requests.map((item) => (isRecord(item) ? item.reason : undefined))
          : [],
      );
    expect(reasons).to.have.length(1);
    expect(reasons[0]).to.match(/path segment '\.\.': it has no path below an RSE's prefix/);
    for (const canary of canaries) canary.assertUntouched();
  });

  it('conveyor: a file in the scope `..`, stored before the fix, is copied nowhere', async () => {
    const scope = '..';
    const name = `dotdot-${made}.txt`;
    const canaries = canariesFor(scope, name);
    await plantScope(server, scope);
    await plantFile(server, { scope, name, bytes: 6, adler32: ADLER_OF_HELLO }, [{ rse: a.rse, rseId: a.id }]);
    await stuck(await ruleOn(scope, name, b.rse));
    for (const canary of canaries) canary.assertUntouched();
  });

  it('reaper: a climbing file with a passed tombstone is left alone, never BEING_DELETED, saying why', async () => {
    const scope = await newScope(server);
    const name = 'y/../../../../../outside/r1';
    const canaries = canariesFor(scope, name);
    await plantFile(server, { scope, name, bytes: 6, adler32: ADLER_OF_HELLO }, [
      { rse: a.rse, rseId: a.id, obsolete: true },
    ]);
    await skippedBy(reaperRole, `${scope}:${name}`, /path segment '\.\.'.*would not stay below the RSE's prefix/);
    expect(await streamTypes(didStreamName(scope, name))).to.deep.equal(['DidCreated']);
    for (const canary of canaries) canary.assertUntouched();
  });

  it('reaper: a replica whose stored path climbs (as a non-deterministic RSE stores one) is left alone', async () => {
    const scope = await newScope(server);
    const kept = canary(join(dirs.path, 'rses', 'outside', 'nd1'));
    await plantFile(server, { scope, name: 'nd1', bytes: 6, adler32: ADLER_OF_HELLO }, [
      { rse: a.rse, rseId: a.id, obsolete: true, path: '/../outside/nd1' },
    ]);
    await skippedBy(reaperRole, `${scope}:nd1`, /path segment '\.\.'/);
    expect(await streamTypes(didStreamName(scope, 'nd1'))).to.deep.equal(['DidCreated']);
    kept.assertUntouched();
  });

  it('dark reaper: quarantined paths that climb are left in quarantine, saying why', async () => {
    const landings = ['../../outside-quarantine/q1', 'a/../../../outside-quarantine/q2'];
    const canaries = landings.map((path) => canary(posix.resolve(a.prefix, path)));
    await plantQuarantine(server, a, landings);
    await skippedBy(darkReaperRole, landings[0]!, /would not stay below the RSE's prefix/);
    expect(await streamTypes(quarantineStreamName(a.rse))).to.not.include('QuarantinedReplicasRemoved');
    for (const canary of canaries) canary.assertUntouched();
  });

  it('reaper: a scope directory replaced by a link to elsewhere is not followed; the file kept BEING_DELETED', async () => {
    const scope = await newScope(server);
    const file = await storedOnA(scope, 'f-link');
    const target = join(elsewhere, `linked-${scope}`);
    const kept = canary(join(target, hashedPath(scope, 'f-link').split('/').slice(1).join('/')));
    rmSync(join(a.prefix, scope), { recursive: true });
    symlinkSync(target, join(a.prefix, scope));
    expectStatus(
      await server.root('POST', '/replicas/tombstone', { body: { replicas: [{ scope, name: 'f-link', rse: a.rse }] } }),
      201,
    );
    await skippedBy(reaperRole, `${scope}:f-link`, /deletion failed on storage.*is a symbolic link/);
    kept.assertUntouched();
    expect(await streamTypes(didStreamName(scope, 'f-link'))).to.not.include('ReplicaDeleted');
    void file;
  });

  it('reaper: a file replaced by a link to elsewhere loses the link, never the file it points to', async () => {
    const scope = await newScope(server);
    const file = await storedOnA(scope, 'f-pointer');
    const kept = canary(join(elsewhere, `pointed-${scope}`, 'file'));
    rmSync(file);
    symlinkSync(kept.path, file);
    expectStatus(
      await server.root('POST', '/replicas/tombstone', {
        body: { replicas: [{ scope, name: 'f-pointer', rse: a.rse }] },
      }),
      201,
    );
    await eventually(async () => (await server.root('GET', `/dids/${scope}/f-pointer`)).status === 404, 30_000, 'gone');
    kept.assertUntouched();
  });

  it('conveyor: a destination directory replaced by a link to elsewhere is not written through; the rule STUCK', async () => {
    const scope = await newScope(server);
    await storedOnA(scope, 'g');
    const target = join(elsewhere, `dest-${scope}`);
    const kept = canary(join(target, 'keep'));
    mkdirSync(b.prefix, { recursive: true });
    symlinkSync(target, join(b.prefix, scope));
    const ruleId = await ruleOverHttp(server, { dids: [{ scope, name: 'g' }], copies: 1, rse_expression: b.rse });
    await stuck(ruleId);
    expect((await ruleJsonOverHttp(server, ruleId)).error).to.match(/is a symbolic link/);
    kept.assertUntouched();
  });

  it('dark reaper: a quarantined path through a link to elsewhere is not followed', async () => {
    const target = join(elsewhere, `dark-${made}`);
    const kept = canary(join(target, 'q3'));
    mkdirSync(a.prefix, { recursive: true });
    symlinkSync(target, join(a.prefix, `lnk-${made}`));
    expectStatus(
      await server.root('POST', '/replicas/quarantine', {
        body: { rse: a.rse, replicas: [{ path: `lnk-${made}/q3` }] },
      }),
      200,
    );
    await skippedBy(
      darkReaperRole,
      `lnk-${made}/q3`,
      /deletion failed on storage, kept in quarantine: .*symbolic link/,
    );
    kept.assertUntouched();
  });

  it('leaves every canary untouched after two more cycles of the reaper and the dark reaper', async () => {
    const jobOf = async (role: typeof reaperRole | typeof darkReaperRole) =>
      (await status.statusOf([role]))[0]?.lastCycle?.jobId;
    for (let round = 0; round < 2; round += 1) {
      const [reaping, darkReaping] = [await jobOf(reaperRole), await jobOf(darkReaperRole)];
      await eventually(
        async () => (await jobOf(reaperRole)) !== reaping && (await jobOf(darkReaperRole)) !== darkReaping,
        30_000,
        'another cycle of each',
      );
    }
    expect(all.length).to.be.greaterThan(8);
    assertCanariesUntouched(all);
  });
});
