import { didStreamDecider } from '../../domain/did/didStreamDecider.ts';
import type { ReplicaAdded, ReplicaEvent, ReplicaLocked } from '../../domain/replica/replica.ts';
import { AT, deciderSpec } from './deciderSpec.ts';

/**
 * What the specifications of replicas share: the given/when/then of a file's stream (where
 * production decides replica commands, with the file) and the replica events a history is made of,
 * whole, with defaults; each test changes only what it is about.
 */

/** Where a replica is: its file and its RSE. */
type ReplicaAt = Pick<ReplicaAdded['data'], 'scope' | 'name' | 'rse' | 'rseId'>;

/** given(events on the file's stream).when(command).then(events), by the DID stream's decider. */
export const givenFileStream = deciderSpec(didStreamDecider);

/** A registered replica of the 100-byte file at `at`: AVAILABLE, no tombstone, no lock. */
export const replicaAdded = (at: ReplicaAt, changes: Partial<ReplicaAdded['data']> = {}): ReplicaEvent => ({
  type: 'ReplicaAdded',
  data: {
    ...at,
    bytes: 100,
    md5: null,
    adler32: '0cc737eb',
    path: null,
    state: 'AVAILABLE',
    tombstone: null,
    lock: null,
    addedAt: AT,
    ...changes,
  },
});

/** Rule r1's OK lock on the replica at `at`, which stayed in its state. */
export const replicaLocked = (at: ReplicaAt, changes: Partial<ReplicaLocked['data']> = {}): ReplicaEvent => ({
  type: 'ReplicaLocked',
  data: {
    ...at,
    ruleId: 'r1',
    lockState: 'OK',
    requestId: null,
    requestStream: null,
    previousState: null,
    lockedAt: AT,
    ...changes,
  },
});
