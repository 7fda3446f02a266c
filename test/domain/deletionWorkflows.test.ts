import { expect } from 'chai';
import { darkReaper } from '../../domain/quarantine/darkReaper.ts';
import { necromancer } from '../../domain/replica/necromancer.ts';
import {
  GREEDY_BYTES,
  reaper,
  reaperNeed,
  type ReaperCandidate,
  type ReaperNeed,
} from '../../domain/replica/reaper.ts';
import { OBSOLETE_TOMBSTONE } from '../../domain/replica/replica.ts';
import {
  AUTOMATIC_RECOVERY,
  parsePolicies,
  suspiciousReplicaRecoverer,
  type SuspiciousReplica,
} from '../../domain/replica/suspiciousReplicaRecoverer.ts';
import { temporaryUnavailabilityExpiry } from '../../domain/replica/temporaryUnavailabilityExpiry.ts';
import { workflowSpec } from '../support/workflowSpec.ts';

const now = '2026-11-22T10:00:00.000Z';
const rseId = 'a'.repeat(32);

describe('Workflow: the reaper’s need (rule 21)', () => {
  const rse = (
    limits: Record<string, number>,
    usage: Record<string, { used: number; free: number }> = {},
    attributes: Record<string, unknown> = {},
  ) => ({ limits, usage, attributes });

  it('asks for a terabyte on a greedy RSE', () =>
    expect(reaperNeed(rse({}, {}, { greedyDeletion: true }), { greedy: false })).to.deep.equal({
      bytes: GREEDY_BYTES,
      obsoleteOnly: false,
      why: 'greedy deletion',
    }));

  it('needs MinFreeSpace minus the free space of the storage usage', () =>
    expect(
      reaperNeed(rse({ MinFreeSpace: 1000 }, { storage: { used: 900, free: 100 } }), { greedy: false }),
    ).to.deep.equal({
      bytes: 900,
      obsoleteOnly: false,
      why: 'space needed: 900 bytes below MinFreeSpace',
    }));

  it('deletes only obsolete replicas with enough free space, or without a storage usage', () => {
    expect(
      reaperNeed(rse({ MinFreeSpace: 100 }, { storage: { used: 0, free: 1000 } }), { greedy: false }).obsoleteOnly,
    ).to.equal(true);
    expect(reaperNeed(rse({ MinFreeSpace: 100 }), { greedy: false }).obsoleteOnly).to.equal(true);
  });

  it('reads the sources the RSE’s attributes name', () =>
    expect(
      reaperNeed(
        rse(
          { MinFreeSpace: 500 },
          { srm: { used: 400, free: 0 }, rucio: { used: 300, free: 0 } },
          { source_for_total_space: 'srm', source_for_used_space: 'rucio' },
        ),
        { greedy: false },
      ).bytes,
    ).to.equal(400));

  it('measures the storage itself when nobody reported its usage', () =>
    expect(reaperNeed(rse({ MinFreeSpace: 50 }), { greedy: false, measured: { total: 100, used: 80 } }).bytes).to.equal(
      30,
    ));
});

describe('Workflow: the reaper’s choice (rule 21)', () => {
  const given = workflowSpec(reaper);
  const candidate = (name: string, extra: Partial<ReaperCandidate> = {}): ReaperCandidate => ({
    scope: 'user.jdoe',
    name,
    rse: 'SITE_A',
    rseId,
    bytes: 100,
    path: null,
    state: 'AVAILABLE',
    tombstone: OBSOLETE_TOMBSTONE,
    updatedAt: '2026-11-21T10:00:00.000Z',
    lockCount: 0,
    availableElsewhere: false,
    transferPending: false,
    ...extra,
  });
  const obsolete: ReaperNeed = { bytes: 0, obsoleteOnly: true, why: 'obsolete' };
  const tick = (need: ReaperNeed = obsolete, extra: object = {}) => ({
    now,
    need,
    freedSoFar: 0,
    delaySeconds: 0,
    dryRun: false,
    ...extra,
  });
  const deletion = (name: string, reason = 'obsolete') => ({
    type: 'DeleteReplica' as const,
    data: { scope: 'user.jdoe', name, rse: 'SITE_A', rseId, bytes: 100, reason },
  });

  it('deletes obsolete replicas without space pressure, oldest tombstone first', () =>
    given({ candidates: [candidate('late', { updatedAt: '2026-11-21T11:00:00.000Z' }), candidate('early')] })
      .when(tick())
      .then([deletion('early'), deletion('late')]));

  it('stops once the freed bytes exceed the need', () =>
    given({
      candidates: [
        candidate('a', { tombstone: '2026-11-20T00:00:00.000Z' }),
        candidate('b', { tombstone: '2026-11-21T00:00:00.000Z' }),
        candidate('c', { tombstone: '2026-11-21T01:00:00.000Z' }),
      ],
    })
      .when(tick({ bytes: 150, obsoleteOnly: false, why: 'space needed' }))
      .then([deletion('a', 'space needed'), deletion('b', 'space needed')]));

  it('never takes a locked replica, a last copy being transferred, nor a possible source', () =>
    given({
      candidates: [
        candidate('locked', { lockCount: 1 }),
        candidate('source', { transferPending: true, availableElsewhere: true }),
        candidate('last', { state: 'BAD', transferPending: true }),
      ],
    })
      .when(tick())
      .then([
        { type: 'Skipped', data: { what: 'user.jdoe:locked on SITE_A', reason: 'a replication rule locks it' } },
        {
          type: 'Skipped',
          data: { what: 'user.jdoe:source on SITE_A', reason: 'it may be the source of a pending transfer' },
        },
        {
          type: 'Skipped',
          data: { what: 'user.jdoe:last on SITE_A', reason: 'it is the last copy of a file whose transfer is pending' },
        },
      ]));

  it('leaves a BEING_DELETED replica to the deletion under way until delay_seconds have passed', () =>
    given({ candidates: [candidate('busy', { state: 'BEING_DELETED', updatedAt: '2026-11-22T09:59:30.000Z' })] })
      .when(tick(obsolete, { delaySeconds: 600 }))
      .then([
        { type: 'Skipped', data: { what: 'user.jdoe:busy on SITE_A', reason: 'another deletion started 30 s ago' } },
      ]));

  it('leaves alone a replica whose name, scope or stored path would climb out of the prefix (issue 33)', () =>
    given({
      candidates: [
        candidate('x/../../outside/t1'),
        candidate('f1', { scope: '..' }),
        candidate('f2', { path: '/../outside/f2' }),
      ],
    })
      .when(tick())
      .then(
        [
          ['user.jdoe:x/../../outside/t1', "path segment '..'"],
          ['..:f1', "path segment '..'"],
          ['user.jdoe:f2', "path segment '..'"],
        ].map(([what, why]) => ({
          type: 'Skipped' as const,
          data: {
            what: `${what} on SITE_A`,
            reason: `its scope, name or path holds the ${why}: it would not stay below the RSE's prefix, so it is left alone`,
          },
        })),
      ));

  it('reports what it would delete in a dry run', () =>
    given({ candidates: [candidate('f1')] })
      .when(tick(obsolete, { dryRun: true }))
      .then([{ type: 'Skipped', data: { what: 'user.jdoe:f1 on SITE_A', reason: 'dry run (obsolete)' } }]));
});

describe('Workflow: the necromancer (rule 25)', () => {
  const given = workflowSpec(necromancer);
  const bad = (name: string, since: string) => ({ scope: 'user.jdoe', name, rse: 'SITE_A', rseId, since });

  it('takes BAD replicas oldest first', () =>
    given({ bad: [bad('late', '2026-11-22T09:00:00.000Z'), bad('early', '2026-11-21T09:00:00.000Z')] })
      .when({ dryRun: false })
      .then([
        { type: 'ResolveBadReplica', data: { scope: 'user.jdoe', name: 'early', rse: 'SITE_A', rseId } },
        { type: 'ResolveBadReplica', data: { scope: 'user.jdoe', name: 'late', rse: 'SITE_A', rseId } },
      ]));

  it('only reports in a dry run', () =>
    given({ bad: [bad('f1', now)] })
      .when({ dryRun: true })
      .then([{ type: 'Skipped', data: { what: 'user.jdoe:f1 on SITE_A', reason: 'dry run' } }]));
});

describe('Workflow: minos-temporary-expiration', () => {
  const given = workflowSpec(temporaryUnavailabilityExpiry);
  const unavailable = (name: string, expiresAt: string) => ({
    scope: 'user.jdoe',
    name,
    rse: 'SITE_A',
    rseId,
    expiresAt,
  });

  it('ends the unavailabilities whose expiry has passed, and only those', () =>
    given({
      unavailable: [unavailable('over', '2026-11-22T09:00:00.000Z'), unavailable('later', '2026-11-22T11:00:00.000Z')],
    })
      .when({ now, dryRun: false })
      .then([
        { type: 'EndTemporaryUnavailability', data: { scope: 'user.jdoe', name: 'over', rse: 'SITE_A', rseId } },
      ]));
});

describe('Workflow: the suspicious-replica-recoverer (§2.4)', () => {
  const given = workflowSpec(suspiciousReplicaRecoverer);
  const suspicious = (name: string, extra: Partial<SuspiciousReplica> = {}): SuspiciousReplica => ({
    scope: 'user.jdoe',
    name,
    rse: 'SITE_A',
    rseId,
    count: 6,
    availableElsewhere: true,
    reasons: ['checksum mismatch'],
    datatype: 'RAW',
    ...extra,
  });
  const active = { activeMode: true, limitPerRse: 5, policies: [] };

  it('declares BAD a replica with a copy elsewhere', () =>
    given({ suspicious: [suspicious('f1')] })
      .when(active)
      .then([
        {
          type: 'DeclareReplicaBad',
          data: { scope: 'user.jdoe', name: 'f1', rse: 'SITE_A', rseId, reason: AUTOMATIC_RECOVERY },
        },
      ]));

  describe('given a last copy', () => {
    it('ignores it when no policy names it', () =>
      given({ suspicious: [suspicious('f1', { availableElsewhere: false })] })
        .when(active)
        .then([
          {
            type: 'Skipped',
            data: { what: 'user.jdoe:f1 on SITE_A', reason: 'the last copy matches no policy entry: ignored' },
          },
        ]));
    it('declares it BAD when a policy says "declare bad" and the reason names a checksum', () =>
      given({ suspicious: [suspicious('f1', { availableElsewhere: false })] })
        .when({
          ...active,
          policies: parsePolicies('[{"scope": ["user"], "datatype": ["RAW"], "action": "declare bad"}]')!,
        })
        .then([
          {
            type: 'DeclareReplicaBad',
            data: { scope: 'user.jdoe', name: 'f1', rse: 'SITE_A', rseId, reason: AUTOMATIC_RECOVERY },
          },
        ]));
  });

  it('takes an RSE with more suspicious replicas than its limit for broken: TEMPORARY_UNAVAILABLE for three days', () =>
    given({ suspicious: [suspicious('f1'), suspicious('f2')] })
      .when({ ...active, limitPerRse: 1 })
      .then([
        {
          type: 'DeclareReplicaTemporarilyUnavailable',
          data: { scope: 'user.jdoe', name: 'f1', rse: 'SITE_A', rseId, days: 3 },
        },
        {
          type: 'DeclareReplicaTemporarilyUnavailable',
          data: { scope: 'user.jdoe', name: 'f2', rse: 'SITE_A', rseId, days: 3 },
        },
      ]));

  it('only reports outside active mode (Rucio’s default)', () =>
    given({ suspicious: [suspicious('f1')] })
      .when({ ...active, activeMode: false })
      .then([
        {
          type: 'Skipped',
          data: { what: 'user.jdoe:f1 on SITE_A', reason: 'active_mode is off: would declare it BAD' },
        },
      ]));
});

describe('Workflow: the dark reaper (§2.7)', () => {
  const given = workflowSpec(darkReaper);
  const entry = (path: string, registered: boolean) => ({ path, scope: null, name: null, bytes: null, registered });

  it('deletes dark files and only forgets registered ones', () =>
    given({ entries: [entry('dark/file', false), entry('user/ab/cd/f1', true)] })
      .when({ rse: 'SITE_A', dryRun: false })
      .then([
        { type: 'DeleteDarkFile', data: { path: 'dark/file' } },
        { type: 'ForgetRegisteredFile', data: { path: 'user/ab/cd/f1' } },
      ]));

  it('leaves alone a quarantined path that would climb out of the prefix (issue 33)', () =>
    given({ entries: [entry('../outside/t1', false), entry('/ok/f', false)] })
      .when({ rse: 'SITE_A', dryRun: false })
      .then([
        {
          type: 'Skipped',
          data: {
            what: '../outside/t1 on SITE_A',
            reason:
              "the path holds the path segment '..': it would not stay below the RSE's prefix, so it is left alone",
          },
        },
        { type: 'DeleteDarkFile', data: { path: '/ok/f' } },
      ]));
});
