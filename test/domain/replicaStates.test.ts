import type { DidEvent } from '../../domain/did/did.ts';
import { nameSchemaOf } from '../../domain/shared/names.ts';
import {
  OBSOLETE_TOMBSTONE,
  type DidStreamEvent,
  type ReplicaAdded,
  type ReplicaEvent,
  type ReplicaState,
} from '../../domain/replica/replica.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import type { ReplicaCommand } from '../../domain/replica/replicaStates.ts';
import {
  DataIdentifierNotFound,
  InvalidObject,
  InvalidPath,
  ReplicaNotFound,
  UnsupportedOperation,
} from '../../domain/shared/errors.ts';
import { expect } from 'chai';
import { decideInOrder } from '../../domain/shared/decider.ts';
import { AT, metadata } from '../support/deciderSpec.ts';
import { created } from '../support/didEvents.ts';
import { givenFileStream as given, replicaAdded } from '../support/replicaSpec.ts';

/** The replica commands as production decides them: on the file's stream, with the file. */
const target = { scope: 'user.jdoe', name: 'f1', rse: 'SITE_DISK', rseId: 'a'.repeat(32) };
const file: DidEvent = created('f1', 'FILE');

const added = (state: ReplicaState = 'AVAILABLE', extra: Partial<ReplicaAdded['data']> = {}): ReplicaEvent =>
  replicaAdded(target, { state, ...extra });
const command = <T extends ReplicaCommand['type']>(type: T, data: object, account = 'root') =>
  ({ type, data: { ...target, ...data }, metadata: metadata(account) }) as Extract<ReplicaCommand, { type: T }>;
const add = (extra: object = {}) =>
  command('AddReplica', {
    bytes: 100,
    md5: null,
    adler32: '0cc737eb',
    path: null,
    state: 'AVAILABLE',
    tombstone: null,
    ...extra,
  });
const changeTo = (state: ReplicaState) => command('ChangeReplicaState', { state });
const changed = (previousState: ReplicaState, state: ReplicaState, extra: object = {}): ReplicaEvent => ({
  type: 'ReplicaStateChanged',
  data: {
    ...target,
    previousState,
    state,
    tombstone: null,
    recovered: false,
    locks: {},
    requestId: null,
    requestStream: null,
    changedAt: AT,
    ...extra,
  },
});
const declaredBad: ReplicaEvent = {
  type: 'ReplicaDeclaredBad',
  data: { ...target, previousState: 'AVAILABLE', bytes: 100, reason: 'corrupt', account: 'root', declaredAt: AT },
};

describe('DID stream decider, replicas: registration (behaviour rule 8)', () => {
  describe('a file registered with its replicas in one step', () => {
    const onB = { rse: 'SITE_B', rseId: 'b'.repeat(32) };
    const step: DidStreamCommand[] = [
      {
        type: 'RegisterFile',
        data: {
          file: { scope: 'user.jdoe', name: 'f1', bytes: 100, adler32: '0cc737eb' },
          conventions: new Map(),
          nameSchema: nameSchemaOf('generic'),
        },
        metadata: metadata('root'),
      },
      add(),
      { ...add(), data: { ...add().data, ...onB } },
    ];
    const decided = decideInOrder(didStreamDecider, step, didStreamDecider.initialState());

    it('is one DidCreated that carries the replicas', () => {
      expect(decided.events.map((event) => event.type)).to.deep.equal(['DidCreated']);
      const [event] = decided.events;
      expect(event?.type === 'DidCreated' ? event.data.replicas : []).to.deep.equal([
        added().data,
        { ...added().data, ...onB },
      ]);
    });

    it('folds to the state the file and its ReplicaAdded events apart fold to (stores written before)', () => {
      const [event] = decided.events;
      const apart: DidStreamEvent[] =
        event?.type === 'DidCreated'
          ? [
              { type: 'DidCreated', data: { ...event.data, replicas: [] } },
              ...event.data.replicas.map((data): DidStreamEvent => ({ type: 'ReplicaAdded', data })),
            ]
          : [];
      const fold = (events: DidStreamEvent[]) =>
        events.reduce(didStreamDecider.evolve, didStreamDecider.initialState());
      expect(fold(decided.events)).to.deep.equal(fold(apart)).and.to.deep.equal(decided.state);
    });
  });

  it('adds a replica to an existing file', () => given([file]).when(add()).then([added()]));

  it('refuses a stored path that would climb out of the RSE’s prefix (issue 33)', () =>
    given([file])
      .when(add({ path: '/dir/../../outside/f1' }))
      .thenThrows(InvalidPath, /The path '\/dir\/\.\.\/\.\.\/outside\/f1' holds the path segment '\.\.'/));

  it('refuses a replica of a file whose name climbs, stored before names were checked (issue 33)', () =>
    given([created('x/../t1', 'FILE')])
      .when({ ...add(), data: { ...add().data, name: 'x/../t1' } })
      .thenThrows(InvalidObject, /Problem validating name: 'x\/\.\.\/t1' holds the path segment '\.\.'/));

  it('adds nothing, silently, when the file already has a replica on that RSE', () =>
    given([file, added()])
      .when(add({ bytes: 999 }))
      .thenNothingHappened());

  it('adds a replica on another RSE beside the first', () =>
    given([file, added()])
      .when(
        command('AddReplica', {
          rse: 'OTHER_DISK',
          rseId: 'b'.repeat(32),
          bytes: 100,
          md5: null,
          adler32: null,
          path: '/a/f1',
          state: 'COPYING',
          tombstone: AT,
        }),
      )
      .then([
        {
          type: 'ReplicaAdded',
          data: {
            ...target,
            rse: 'OTHER_DISK',
            rseId: 'b'.repeat(32),
            bytes: 100,
            md5: null,
            adler32: null,
            path: '/a/f1',
            state: 'COPYING',
            tombstone: AT,
            lock: null,
            addedAt: AT,
          },
        },
      ]));

  describe('refuses a replica of a file that is not there', () => {
    it('no DID at all', () => given([]).when(add()).thenThrows(DataIdentifierNotFound));
    it('a collection', () =>
      given([created('f1', 'DATASET')])
        .when(add())
        .thenThrows(DataIdentifierNotFound));
  });
});

describe('DID stream decider, replicas: state changes (Rucio update_replicas_states, guards enforced)', () => {
  describe('when the state changes', () => {
    it('records the change', () =>
      given([file, added()])
        .when(changeTo('UNAVAILABLE'))
        .then([changed('AVAILABLE', 'UNAVAILABLE')]));
    it('says nothing when the replica is already in that state', () =>
      given([file, added()]).when(changeTo('AVAILABLE')).thenNothingHappened());
  });

  it('gives BEING_DELETED an obsolete tombstone', () =>
    given([file, added()])
      .when(changeTo('BEING_DELETED'))
      .then([changed('AVAILABLE', 'BEING_DELETED', { tombstone: OBSOLETE_TOMBSTONE })]));

  describe('makes only a readable replica temporarily unavailable', () => {
    it('an AVAILABLE one', () =>
      given([file, added()])
        .when(changeTo('TEMPORARY_UNAVAILABLE'))
        .then([changed('AVAILABLE', 'TEMPORARY_UNAVAILABLE')]));
    it('not a COPYING one', () =>
      given([file, added('COPYING')])
        .when(changeTo('TEMPORARY_UNAVAILABLE'))
        .thenThrows(
          UnsupportedOperation,
          /State TEMPORARY_UNAVAILABLE for replica user.jdoe:f1 on SITE_DISK cannot be updated/,
        ));
  });

  it('refuses a replica that does not exist', () =>
    given([file])
      .when(changeTo('AVAILABLE'))
      .thenThrows(ReplicaNotFound, /No row found for scope: user.jdoe name: f1 rse: SITE_DISK/));

  it('recovers a BAD replica that becomes AVAILABLE again', () =>
    given([file, added(), declaredBad])
      .when(changeTo('AVAILABLE'))
      .then([changed('BAD', 'AVAILABLE', { recovered: true })]));
});

describe('DID stream decider, replicas: bad, suspicious and temporarily unavailable declarations', () => {
  const bad = (force = false) => command('DeclareReplicaBad', { reason: 'corrupt', force });

  describe('when a replica is declared bad', () => {
    it('declares it', () => given([file, added()]).when(bad()).then([declaredBad]));
    it('changes nothing when it is declared already', () =>
      given([file, added(), declaredBad]).when(bad()).thenNothingHappened());
    it('declares it again when forced', () =>
      given([file, added(), declaredBad, changed('BAD', 'COPYING')])
        .when(bad(true))
        .then([changed('COPYING', 'BAD')]));
  });

  it('declares nothing for an unknown replica', () => given([file]).when(bad()).thenNothingHappened());

  describe('records every suspicious declaration and leaves the state alone', () => {
    const suspicious = command('DeclareReplicaSuspicious', { reason: 'checksum' }, 'jdoe');
    const event: ReplicaEvent = {
      type: 'ReplicaDeclaredSuspicious',
      data: { ...target, bytes: 100, reason: 'checksum', account: 'jdoe', declaredAt: AT },
    };
    it('the first', () => given([file, added()]).when(suspicious).then([event]));
    it('the next ones', () => given([file, added(), event]).when(suspicious).then([event]));
  });

  describe('when a replica is declared temporarily unavailable', () => {
    const declare = command('DeclareReplicaTemporarilyUnavailable', {
      reason: 'downtime',
      expiresAt: '2026-11-23T10:00:00.000Z',
    });
    it('makes an AVAILABLE replica so until the expiry', () =>
      given([file, added()])
        .when(declare)
        .then([
          {
            type: 'ReplicaDeclaredTemporarilyUnavailable',
            data: {
              ...target,
              previousState: 'AVAILABLE',
              bytes: 100,
              reason: 'downtime',
              account: 'root',
              expiresAt: '2026-11-23T10:00:00.000Z',
              declaredAt: AT,
            },
          },
        ]));
    it('skips a replica in another state', () =>
      given([file, added('BAD')])
        .when(declare)
        .thenNothingHappened());
  });
});

describe('DID stream decider, replicas: tombstones', () => {
  describe('when a tombstone is set', () => {
    it('sets it', () =>
      given([file, added()])
        .when(command('SetReplicaTombstone', { tombstone: OBSOLETE_TOMBSTONE }))
        .then([{ type: 'ReplicaTombstoneSet', data: { ...target, tombstone: OBSOLETE_TOMBSTONE, setAt: AT } }]));
    it('refuses an unknown replica', () =>
      given([file])
        .when(command('SetReplicaTombstone', { tombstone: OBSOLETE_TOMBSTONE }))
        .thenThrows(ReplicaNotFound, /could not be found/));
  });
});
