import { expect } from 'chai';
import type { DidEvent } from '../../domain/did/did.ts';
import { didStreamDecider, type DidStreamCommand } from '../../domain/did/didStreamDecider.ts';
import type { ReplicaAdded, ReplicaEvent, ReplicaState } from '../../domain/replica/replica.ts';
import { AT, metadata } from '../support/deciderSpec.ts';
import { created } from '../support/didEvents.ts';
import { givenFileStream as given, replicaAdded } from '../support/replicaSpec.ts';

/** The replica a multihop path copies a file into on its way (Rucio's intermediate replicas). */

const target = { scope: 'user.jdoe', name: 'f1', rse: 'HOP_DISK', rseId: 'b'.repeat(32) };
const file: DidEvent = created('f1', 'FILE');
const TOMBSTONE = '2026-11-22T12:00:00.000Z';
const request = { id: 'hop1', stream: 'requests-rule-1-DEST-init' };
const addIntermediate: DidStreamCommand = {
  type: 'AddIntermediateReplica',
  data: { ...target, bytes: 100, md5: null, adler32: '0cc737eb', tombstone: TOMBSTONE, request },
  metadata: metadata(),
};
const existing = (state: ReplicaState, extra: Partial<ReplicaAdded['data']> = {}): ReplicaEvent =>
  replicaAdded(target, { state, ...extra });

describe('Replica decider: a multihop path’s intermediate replica', () => {
  it('adds it COPYING with the multihop tombstone, waiting for the hop', () => {
    given([file])
      .when(addIntermediate)
      .then([existing('COPYING', { tombstone: TOMBSTONE, request })]);
    const state = [file, existing('COPYING', { tombstone: TOMBSTONE, request })].reduce(
      didStreamDecider.evolve,
      didStreamDecider.initialState(),
    );
    expect(state.replicas.get(target.rseId)?.pendingRequest).to.deep.equal(request);
  });

  it('makes an UNAVAILABLE replica left by an earlier path COPYING for the hop', () =>
    given([file, existing('UNAVAILABLE')])
      .when(addIntermediate)
      .then([
        {
          type: 'ReplicaStateChanged',
          data: {
            ...target,
            previousState: 'UNAVAILABLE',
            state: 'COPYING',
            tombstone: TOMBSTONE,
            recovered: false,
            locks: {},
            requestId: 'hop1',
            requestStream: request.stream,
            changedAt: AT,
          },
        },
      ]));

  it('leaves an AVAILABLE replica alone: the file is there already', () =>
    given([file, existing('AVAILABLE')])
      .when(addIntermediate)
      .thenNothingHappened());

  it('leaves a replica another transfer is bringing alone', () =>
    given([file, existing('COPYING', { request: { id: 'other', stream: 'requests-x' } })])
      .when(addIntermediate)
      .thenNothingHappened());

  it('refuses nothing for a file gone meanwhile: the path waits', () =>
    given([]).when(addIntermediate).thenNothingHappened());
});
