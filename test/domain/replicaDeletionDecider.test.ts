import { expect } from 'chai';
import { nameSchemaOf } from '../../domain/shared/names.ts';
import type { DidEvent } from '../../domain/did/did.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import {
  OBSOLETE_TOMBSTONE,
  type DidStreamEvent,
  type ReplicaEvent,
  type ReplicaState,
} from '../../domain/replica/replica.ts';
import { decideInOrder } from '../../domain/shared/decider.ts';
import { AT, metadata } from '../support/deciderSpec.ts';
import { created } from '../support/didEvents.ts';
import { givenFileStream as given, replicaAdded, replicaLocked } from '../support/replicaSpec.ts';

/**
 * The reaper's decisions on a file's stream (behaviour rule 21): a replica is marked BEING_DELETED
 * only when nothing holds it, recorded deleted only if still so, and the file goes with its last
 * replica.
 */
const A = { scope: 'user.jdoe', name: 'f1', rse: 'SITE_A', rseId: 'a'.repeat(32) };
const B = { ...A, rse: 'SITE_B', rseId: 'b'.repeat(32) };
const file: DidEvent = created('f1', 'FILE');
const PAST = '2026-11-21T10:00:00.000Z';

const added = (
  at: typeof A,
  state: ReplicaState = 'AVAILABLE',
  tombstone: string | null = OBSOLETE_TOMBSTONE,
): ReplicaEvent => replicaAdded(at, { state, tombstone });
const locked = (at: typeof A, requestId: string | null = null): ReplicaEvent =>
  replicaLocked(at, requestId ? { lockState: 'REPLICATING', requestId, requestStream: 'requests-b1' } : {});
const start = (at: typeof A = A, obsoleteOnly = true): DidStreamCommand => ({
  type: 'StartReplicaDeletion',
  data: { ...at, obsoleteOnly, daemon: 'reaper', reason: 'obsolete' },
  metadata: metadata(),
});
const started = (
  at: typeof A = A,
  previousState: ReplicaState = 'AVAILABLE',
  previousTombstone: string | null = OBSOLETE_TOMBSTONE,
): ReplicaEvent => ({
  type: 'ReplicaDeletionStarted',
  data: { ...at, previousState, previousTombstone, daemon: 'reaper', reason: 'obsolete', changedAt: AT },
});
const record = (at: typeof A = A): DidStreamCommand => ({
  type: 'RecordReplicaDeletion',
  data: { ...at, storage: 'deleted', daemon: 'reaper', reason: 'obsolete' },
  metadata: metadata(),
});
const erase: DidStreamCommand = {
  type: 'EraseFileWithoutReplicas',
  data: { scope: 'user.jdoe', name: 'f1', reason: 'last replica deleted' },
  metadata: metadata(),
};

describe('Replica deletion decider: marking (rule 21)', () => {
  it('marks an unlocked replica with an obsolete tombstone BEING_DELETED', () =>
    given([file, added(A)])
      .when(start())
      .then([started()]));

  it('marks nothing for a file whose name climbs, stored before names were checked (issue 33)', () => {
    const climbing = { ...A, name: 'x/../../outside/t1' };
    return given([created(climbing.name, 'FILE'), added(climbing)])
      .when(start(climbing))
      .thenNothingHappened();
  });

  it('marks nothing for a replica whose stored path climbs (issue 33)', () => {
    const climbing: ReplicaEvent = {
      type: 'ReplicaAdded',
      data: {
        ...A,
        bytes: 100,
        md5: null,
        adler32: null,
        path: '/../outside/f1',
        state: 'AVAILABLE',
        tombstone: OBSOLETE_TOMBSTONE,
        lock: null,
        addedAt: AT,
      },
    };
    return given([file, climbing]).when(start()).thenNothingHappened();
  });

  it('marks a replica whose tombstone has passed when space is needed', () =>
    given([file, added(A, 'AVAILABLE', PAST)])
      .when(start(A, false))
      .then([started(A, 'AVAILABLE', PAST)]));

  it('leaves a replica whose tombstone has passed but is not obsolete when only obsolete replicas go', () =>
    given([file, added(A, 'AVAILABLE', PAST)])
      .when(start(A, true))
      .thenNothingHappened());

  it('never marks a replica a rule locks', () =>
    given([file, added(A), locked(A)])
      .when(start())
      .thenNothingHappened());

  it('never marks a protected replica (no tombstone)', () =>
    given([file, added(A, 'AVAILABLE', null)])
      .when(start(A, false))
      .thenNothingHappened());

  it('leaves a COPYING replica alone', () =>
    given([file, added(A, 'COPYING')])
      .when(start())
      .thenNothingHappened());

  it('keeps an AVAILABLE replica while another copy of the file waits for its transfer (it may be the source)', () =>
    given([file, added(A), added(B, 'COPYING', null), locked(B, 'req-1')])
      .when(start())
      .thenNothingHappened());

  it('keeps the last copy while a transfer of the file is pending, even BAD', () =>
    given([file, added(A, 'BAD'), added(B, 'COPYING', null), locked(B, 'req-1')])
      .when(start())
      .thenNothingHappened());

  it('marks nothing again when the replica is BEING_DELETED already (a deletion a crash interrupted)', () =>
    given([file, added(A), started()])
      .when(start())
      .thenNothingHappened());
});

describe('Replica deletion decider: recording (rule 21)', () => {
  it('records a file that goes with its last replica as one DidErased carrying the deletion, folding as the two apart', () => {
    const history = [file, added(A), started()];
    const before = history.reduce(didStreamDecider.evolve, didStreamDecider.initialState());
    const decided = decideInOrder(didStreamDecider, [record(), erase], before);
    expect(decided.events.map((event) => event.type)).to.deep.equal(['DidErased']);
    const [erased] = decided.events;
    const deletions = erased?.type === 'DidErased' ? (erased.data.replicasDeleted ?? []) : [];
    expect(deletions.map((deleted) => [deleted.rseId, deleted.storage])).to.deep.equal([[A.rseId, 'deleted']]);
    const apart: DidStreamEvent[] =
      erased?.type === 'DidErased'
        ? [
            ...deletions.map((data): DidStreamEvent => ({ type: 'ReplicaDeleted', data })),
            { type: 'DidErased', data: { ...erased.data, replicasDeleted: [] } },
          ]
        : [];
    expect(decided.events.reduce(didStreamDecider.evolve, before))
      .to.deep.equal(apart.reduce(didStreamDecider.evolve, before))
      .and.to.deep.equal(decided.state);
  });

  it('records the deletion with what storage said', () =>
    given([file, added(A), started()])
      .when(record())
      .then([
        {
          type: 'ReplicaDeleted',
          data: {
            ...A,
            bytes: 100,
            path: null,
            previousState: 'BEING_DELETED',
            declaredBad: false,
            storage: 'deleted',
            daemon: 'reaper',
            reason: 'obsolete',
            deletedAt: AT,
          },
        },
      ]));

  it('records nothing for a replica a new lock took back (COPYING again)', () =>
    given([
      file,
      added(A),
      started(),
      // The lock made it COPYING again, in the same event.
      {
        type: 'ReplicaLocked',
        data: {
          ...A,
          ruleId: 'r1',
          lockState: 'REPLICATING',
          requestId: 'req-2',
          requestStream: 'requests-b1',
          previousState: 'BEING_DELETED',
          lockedAt: AT,
        },
      },
    ])
      .when(record())
      .thenNothingHappened());

  it('deletes a file left without replicas', () =>
    given([
      file,
      added(A),
      started(),
      {
        type: 'ReplicaDeleted',
        data: {
          ...A,
          bytes: 100,
          path: null,
          previousState: 'BEING_DELETED',
          declaredBad: false,
          storage: 'deleted',
          daemon: 'reaper',
          reason: 'obsolete',
          deletedAt: AT,
        },
      },
    ])
      .when(erase)
      .then([
        {
          type: 'DidErased',
          data: {
            scope: 'user.jdoe',
            name: 'f1',
            didType: 'FILE',
            children: [],
            erasedAt: AT,
            reason: 'last replica deleted',
          },
        },
      ]));

  it('keeps a file that still has a replica elsewhere', () =>
    given([file, added(A), added(B)])
      .when(erase)
      .thenNothingHappened());

  it('keeps a LOST file without replicas (its loss was not intended)', () =>
    given([
      file,
      {
        type: 'FileAvailabilityChanged',
        data: { scope: 'user.jdoe', name: 'f1', availability: 'LOST', changedAt: AT },
      },
    ])
      .when(erase)
      .thenNothingHappened());

  it('lets a file deleted with its last replica be registered again', () =>
    given([
      file,
      {
        type: 'DidErased',
        data: {
          scope: 'user.jdoe',
          name: 'f1',
          didType: 'FILE',
          children: [],
          erasedAt: AT,
          reason: 'last replica deleted',
        },
      },
    ])
      .when({
        type: 'RegisterFile',
        data: {
          file: { scope: 'user.jdoe', name: 'f1', bytes: 5 },
          conventions: new Map(),
          nameSchema: nameSchemaOf('generic'),
        },
        metadata: metadata('jdoe'),
      })
      .then([
        {
          type: 'DidCreated',
          data: {
            scope: 'user.jdoe',
            name: 'f1',
            didType: 'FILE',
            account: 'jdoe',
            createdAt: AT,
            expiredAt: null,
            monotonic: false,
            isNew: null,
            bytes: 5,
            adler32: null,
            md5: null,
            guid: null,
            events: null,
            replicas: [],
          },
        },
      ]));
});
