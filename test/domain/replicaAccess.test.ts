import type { DidEvent } from '../../domain/did/did.ts';
import { OBSOLETE_TOMBSTONE, type ReplicaEvent } from '../../domain/replica/replica.ts';
import type { RecordDatasetAccess, RecordReplicaAccess } from '../../domain/replica/replicaAccess.ts';
import type { UnlockReplica } from '../../domain/replica/replicaLocks.ts';
import { AT, metadata } from '../support/deciderSpec.ts';
import { created } from '../support/didEvents.ts';
import { givenFileStream as given, replicaAdded, replicaLocked } from '../support/replicaSpec.ts';

/** Reads recorded from traces (kronos), decided on the DID's stream by its decider. */
const target = { scope: 'user.jdoe', name: 'f1', rse: 'SITE_DISK', rseId: 'a'.repeat(32) };
const file: DidEvent = created('f1', 'FILE');
const dataset: DidEvent = created('ds', 'DATASET');
const EARLIER = '2024-01-01T00:00:00.000Z';
const READ = '2024-06-01T12:00:00.000Z';
const LATER = '2024-07-01T12:00:00.000Z';

const added = (tombstone: string | null): ReplicaEvent =>
  replicaAdded(target, { adler32: null, tombstone, addedAt: EARLIER });
const read = (accessedAt: string, accesses = 2, rse = target): RecordReplicaAccess => ({
  type: 'RecordReplicaAccess',
  data: { ...rse, accesses, accessedAt },
  metadata: metadata(),
});
const accessed = (accessedAt: string, tombstone: string | null, accesses = 2): ReplicaEvent => ({
  type: 'ReplicaAccessed',
  data: { ...target, accesses, accessedAt, tombstone },
});
const locked = replicaLocked(target, { lockedAt: EARLIER });
const unlock: UnlockReplica = {
  type: 'UnlockReplica',
  data: { ...target, ruleId: 'r1', purge: false },
  metadata: metadata(),
};
const datasetRead = (scope = 'user.jdoe', name = 'ds'): RecordDatasetAccess => ({
  type: 'RecordDatasetAccess',
  data: { scope, name, accesses: 1, accessedAt: READ },
  metadata: metadata(),
});

describe('DID stream decider, replicas read (kronos, Rucio’s touch_replica)', () => {
  it('records the reads of a replica, moving a tombstone that was set to the read', () =>
    given([file, added(EARLIER)])
      .when(read(READ))
      .then([accessed(READ, READ)]));

  it('leaves a locked replica without a tombstone', () =>
    given([file, added(null)])
      .when(read(READ))
      .then([accessed(READ, null)]));

  it('leaves an obsolete tombstone obsolete', () =>
    given([file, added(OBSOLETE_TOMBSTONE)])
      .when(read(READ))
      .then([accessed(READ, OBSOLETE_TOMBSTONE)]));

  it('never moves the access time back for a batch of older traces, counting them still', () =>
    given([file, added(EARLIER), accessed(LATER, LATER)])
      .when(read(READ, 1))
      .then([accessed(LATER, LATER, 1)]));

  it('records nothing for an RSE where the file has no replica', () =>
    given([file, added(EARLIER)])
      .when(read(READ, 1, { ...target, rse: 'OTHER', rseId: 'b'.repeat(32) }))
      .thenNothingHappened());

  it('records nothing for a file that does not exist', () => given([]).when(read(READ)).thenNothingHappened());
});

describe('DID stream decider, the last lock gone from a replica that was read', () => {
  it('gives it a tombstone at its last read, not at its creation: the least recently read go first', () =>
    given([file, added(null), locked, accessed(READ, null)])
      .when(unlock)
      .then([
        {
          type: 'ReplicaUnlocked',
          data: {
            ...target,
            ruleId: 'r1',
            lockState: 'OK',
            tombstone: READ,
            state: 'AVAILABLE',
            cancelledRequest: null,
            unlockedAt: AT,
          },
        },
      ]));
});

describe('DID stream decider, datasets read', () => {
  it('records a read of a dataset', () =>
    given([dataset])
      .when(datasetRead())
      .then([{ type: 'DidAccessed', data: { scope: 'user.jdoe', name: 'ds', accesses: 1, accessedAt: READ } }]));

  it('records nothing for a dataset that does not exist', () => given([]).when(datasetRead()).thenNothingHappened());

  it('records nothing for a DID that is no dataset', () =>
    given([file]).when(datasetRead('user.jdoe', 'f1')).thenNothingHappened());
});
