import type { DidEvent } from '../../domain/did/did.ts';
import type { DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import { OBSOLETE_TOMBSTONE, type ReplicaEvent, type ReplicaState } from '../../domain/replica/replica.ts';
import { AT, metadata } from '../support/deciderSpec.ts';
import { collectionEntry, created, fileEntry } from '../support/didEvents.ts';
import { givenFileStream as given, replicaAdded, replicaLocked } from '../support/replicaSpec.ts';

/**
 * The necromancer's decision on a BAD replica (behaviour rule 25), the end of a temporary
 * unavailability, and the reaper's cleanup upwards, decided on the streams that hold them.
 */
const A = { scope: 'user.jdoe', name: 'f1', rse: 'SITE_A', rseId: 'a'.repeat(32) };
const B = { ...A, rse: 'SITE_B', rseId: 'b'.repeat(32) };
const file: DidEvent = created('f1', 'FILE');

const added = (at: typeof A, state: ReplicaState = 'AVAILABLE'): ReplicaEvent => replicaAdded(at, { state });
const locked = (at: typeof A, ruleId = 'r1'): ReplicaEvent => replicaLocked(at, { ruleId });
const declaredBad = (at: typeof A): ReplicaEvent => ({
  type: 'ReplicaDeclaredBad',
  data: { ...at, previousState: 'AVAILABLE', bytes: 100, reason: 'corrupt', account: 'root', declaredAt: AT },
});
const resolve = (datasets: { scope: string; name: string }[] = []): DidStreamCommand => ({
  type: 'ResolveBadReplica',
  data: { ...A, request: { id: 'req-1', stream: 'requests-b1' }, datasets, reason: 'no other copy can be read' },
  metadata: metadata(),
});

describe('Replica recovery decider: a BAD replica (rule 25)', () => {
  it('is copied again from another AVAILABLE copy: COPYING, its locks REPLICATING, a transfer queued, in one event', () =>
    given([file, added(A), added(B), locked(A), declaredBad(A)])
      .when(resolve())
      .then([
        {
          type: 'ReplicaStateChanged',
          data: {
            ...A,
            previousState: 'BAD',
            state: 'COPYING',
            tombstone: null,
            recovered: false,
            locks: { r1: 'REPLICATING' },
            requestId: 'req-1',
            requestStream: 'requests-b1',
            changedAt: AT,
          },
        },
      ]));

  it('counts a TEMPORARY_UNAVAILABLE copy as one to recover from', () =>
    given([
      file,
      added(A),
      added(B),
      {
        type: 'ReplicaDeclaredTemporarilyUnavailable',
        data: {
          ...B,
          previousState: 'AVAILABLE',
          bytes: 100,
          reason: null,
          account: 'root',
          expiresAt: AT,
          declaredAt: AT,
        },
      },
      locked(A),
      declaredBad(A),
    ])
      .when(resolve())
      .then([
        {
          type: 'ReplicaStateChanged',
          data: {
            ...A,
            previousState: 'BAD',
            state: 'COPYING',
            tombstone: null,
            recovered: false,
            locks: { r1: 'REPLICATING' },
            requestId: 'req-1',
            requestStream: 'requests-b1',
            changedAt: AT,
          },
        },
      ]));

  it('without a lock, becomes UNAVAILABLE with an obsolete tombstone for the reaper', () =>
    given([file, added(A), added(B), declaredBad(A)])
      .when(resolve())
      .then([
        {
          type: 'ReplicaStateChanged',
          data: {
            ...A,
            previousState: 'BAD',
            state: 'UNAVAILABLE',
            tombstone: OBSOLETE_TOMBSTONE,
            recovered: false,
            locks: {},
            requestId: null,
            requestStream: null,
            changedAt: AT,
          },
        },
      ]));

  it('without another copy, is lost: locks removed, UNAVAILABLE, the file LOST', () =>
    given([file, added(A), locked(A), locked(A, 'r2'), declaredBad(A)])
      .when(resolve([{ scope: 'user.jdoe', name: 'ds' }]))
      .then([
        {
          type: 'ReplicaLost',
          data: {
            ...A,
            previousState: 'BAD',
            locks: { r1: 'OK', r2: 'OK' },
            cancelledRequest: null,
            datasets: [{ scope: 'user.jdoe', name: 'ds' }],
            reason: 'no other copy can be read',
            lostAt: AT,
          },
        },
        {
          type: 'FileAvailabilityChanged',
          data: { scope: 'user.jdoe', name: 'f1', availability: 'LOST', changedAt: AT },
        },
      ]));

  it('does nothing to a replica that is no longer BAD', () =>
    given([file, added(A), added(B)])
      .when(resolve())
      .thenNothingHappened());

  it('does nothing to a file already LOST', () =>
    given([
      file,
      added(A),
      declaredBad(A),
      {
        type: 'FileAvailabilityChanged',
        data: { scope: 'user.jdoe', name: 'f1', availability: 'LOST', changedAt: AT },
      },
    ])
      .when(resolve())
      .thenNothingHappened());
});

describe('Replica recovery decider: a temporary unavailability ends', () => {
  const unavailableUntil = (expiresAt: string): ReplicaEvent => ({
    type: 'ReplicaDeclaredTemporarilyUnavailable',
    data: { ...A, previousState: 'AVAILABLE', bytes: 100, reason: null, account: 'root', expiresAt, declaredAt: AT },
  });
  const end: DidStreamCommand = { type: 'EndTemporaryUnavailability', data: A, metadata: metadata() };

  it('makes the replica AVAILABLE once its expiry has passed', () =>
    given([file, added(A), unavailableUntil('2026-11-22T09:00:00.000Z')])
      .when(end)
      .then([
        {
          type: 'ReplicaStateChanged',
          data: {
            ...A,
            previousState: 'TEMPORARY_UNAVAILABLE',
            state: 'AVAILABLE',
            tombstone: null,
            recovered: false,
            locks: {},
            requestId: null,
            requestStream: null,
            changedAt: AT,
          },
        },
      ]));

  it('keeps it unavailable when a later declaration moved the expiry', () =>
    given([file, added(A), unavailableUntil('2026-11-22T09:00:00.000Z'), unavailableUntil('2026-11-23T09:00:00.000Z')])
      .when(end)
      .thenNothingHappened());

  it('leaves a replica declared BAD meanwhile', () =>
    given([
      file,
      added(A),
      unavailableUntil('2026-11-22T09:00:00.000Z'),
      {
        type: 'ReplicaDeclaredBad',
        data: {
          ...A,
          previousState: 'TEMPORARY_UNAVAILABLE',
          bytes: 100,
          reason: null,
          account: 'root',
          declaredAt: AT,
        },
      },
    ])
      .when(end)
      .thenNothingHappened());
});

describe('DID decider: the reaper’s cleanup upwards (rule 21)', () => {
  const dataset = (open: boolean, children: string[]): DidEvent[] => [
    created('ds', 'DATASET'),
    {
      type: 'DidsAttached',
      data: {
        scope: 'user.jdoe',
        name: 'ds',
        didType: 'DATASET',
        children: children.map((name) => fileEntry(name)),
        totals: { length: children.length, bytes: 100 * children.length, events: 10 * children.length },
        attachedAt: AT,
      },
    },
    ...(open
      ? []
      : [
          {
            type: 'DidClosed',
            data: {
              scope: 'user.jdoe',
              name: 'ds',
              totals: { length: children.length, bytes: 100 * children.length, events: 10 * children.length },
              closedAt: AT,
            },
          } as DidEvent,
        ]),
  ];
  const remove = (children: string[], removeOpen = false): DidStreamCommand => ({
    type: 'RemoveDeletedChildren',
    data: {
      scope: 'user.jdoe',
      name: 'ds',
      children: children.map((name) => ({ scope: 'user.jdoe', name })),
      removeOpen,
      reason: 'emptied',
    },
    metadata: metadata(),
  });
  const detached = (children: string[], left: number): DidEvent => ({
    type: 'DidsDetached',
    data: {
      scope: 'user.jdoe',
      name: 'ds',
      didType: 'DATASET',
      children: children.map((name) => fileEntry(name)),
      totals: { length: left, bytes: 100 * left, events: 10 * left },
      detachedAt: AT,
    },
  });
  const erased: DidEvent = {
    type: 'DidErased',
    data: { scope: 'user.jdoe', name: 'ds', didType: 'DATASET', children: [], erasedAt: AT, reason: 'emptied' },
  };

  it('detaches the deleted files from a dataset that keeps others', () =>
    given(dataset(false, ['f1', 'f2']))
      .when(remove(['f1']))
      .then([detached(['f1'], 1)]));

  it('deletes a closed dataset its last file left', () =>
    given(dataset(false, ['f1']))
      .when(remove(['f1']))
      .then([detached(['f1'], 0), erased]));

  describe('given an open dataset its last file left', () => {
    it('keeps it', () =>
      given(dataset(true, ['f1']))
        .when(remove(['f1']))
        .then([detached(['f1'], 0)]));
    it('deletes it with reaper.remove_open_did', () =>
      given(dataset(true, ['f1']))
        .when(remove(['f1'], true))
        .then([detached(['f1'], 0), erased]));
  });

  it('ignores children that are not attached (a read model behind)', () =>
    given(dataset(false, ['f2']))
      .when(remove(['f1']))
      .thenNothingHappened());

  it('detaches an emptied dataset from its closed container, which is deleted too', () =>
    given([
      created('ds', 'CONTAINER'),
      {
        type: 'DidsAttached',
        data: {
          scope: 'user.jdoe',
          name: 'ds',
          didType: 'CONTAINER',
          children: [collectionEntry('inner', 'DATASET')],
          totals: { length: 1, bytes: null, events: null },
          attachedAt: AT,
        },
      },
      {
        type: 'DidClosed',
        data: { scope: 'user.jdoe', name: 'ds', totals: { length: 0, bytes: 0, events: 0 }, closedAt: AT },
      },
    ])
      .when({
        type: 'RemoveDeletedChildren',
        data: {
          scope: 'user.jdoe',
          name: 'ds',
          children: [{ scope: 'user.jdoe', name: 'inner' }],
          removeOpen: false,
          reason: 'emptied',
        },
        metadata: metadata(),
      })
      .then([
        {
          type: 'DidsDetached',
          data: {
            scope: 'user.jdoe',
            name: 'ds',
            didType: 'CONTAINER',
            children: [collectionEntry('inner', 'DATASET')],
            totals: { length: 0, bytes: null, events: 0 },
            detachedAt: AT,
          },
        },
        {
          type: 'DidErased',
          data: { scope: 'user.jdoe', name: 'ds', didType: 'CONTAINER', children: [], erasedAt: AT, reason: 'emptied' },
        },
      ]));
});
