import { didDecider, type DidCommand } from '../did/didDecider.ts';
import type { Decider } from '../shared/decider.ts';
import { evolveFileReplicas, initialFileReplicas, type DidStreamEvent, type FileReplicas } from './replica.ts';
import { decideReplica, type ReplicaCommand } from './replicaDecider.ts';
import { decideReplicaLock, type ReplicaLockCommand } from './replicaLocks.ts';

/**
 * The decider of a DID stream (`did-<scope>:<name>`): a file's replicas share its stream, so the
 * stream's aggregate is the DID with its replicas. DID commands are decided by the DID decider on
 * the DID alone; replica commands see the file and its replicas.
 */
export type DidStreamCommand = DidCommand | ReplicaCommand | ReplicaLockCommand;

const REPLICA_COMMANDS: ReadonlySet<string> = new Set<ReplicaCommand['type']>([
  'AddReplica',
  'ChangeReplicaState',
  'DeclareReplicaBad',
  'DeclareReplicaSuspicious',
  'DeclareReplicaTemporarilyUnavailable',
  'SetReplicaTombstone',
]);

const LOCK_COMMANDS: ReadonlySet<string> = new Set<ReplicaLockCommand['type']>(['LockReplica', 'UnlockReplica', 'ChangeReplicaLocks', 'RequeueReplicaTransfer']);

const isReplicaCommand = (command: DidStreamCommand): command is ReplicaCommand => REPLICA_COMMANDS.has(command.type);
const isLockCommand = (command: DidStreamCommand): command is ReplicaLockCommand => LOCK_COMMANDS.has(command.type);

export const didStreamDecider: Decider<FileReplicas, DidStreamCommand, DidStreamEvent> = {
  name: 'did',
  initialState: initialFileReplicas,
  evolve: evolveFileReplicas,
  decide: (command, state) => {
    if (isReplicaCommand(command)) return decideReplica(command, state);
    if (isLockCommand(command)) return decideReplicaLock(command, state);
    return didDecider.decide(command, state.did);
  },
};
