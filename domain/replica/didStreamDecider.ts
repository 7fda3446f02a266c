import { didDecider, type DidCommand } from '../did/didDecider.ts';
import type { Decider } from '../shared/decider.ts';
import {
  compactFileSteps,
  evolveFileReplicas,
  initialFileReplicas,
  type DidStreamEvent,
  type FileReplicas,
} from './replica.ts';
import { decideReplica, type ReplicaCommand } from './replicaStates.ts';
import { decideReplicaAccess, type ReplicaAccessCommand } from './replicaAccess.ts';
import { decideReplicaDeletion, type ReplicaDeletionCommand } from './replicaDeletion.ts';
import { decideReplicaLock, type ReplicaLockCommand } from './replicaLocks.ts';
import { decideReplicaRecovery, type ReplicaRecoveryCommand } from './replicaRecovery.ts';

/**
 * The decider of a DID stream (`did-<scope>:<name>`): a file's replicas share its stream, so the
 * stream's aggregate is the DID with its replicas. DID commands are decided by the DID decider on
 * the DID alone; replica commands see the file and its replicas.
 */
export type DidStreamCommand =
  | DidCommand
  | ReplicaCommand
  | ReplicaLockCommand
  | ReplicaDeletionCommand
  | ReplicaRecoveryCommand
  | ReplicaAccessCommand;

const REPLICA_COMMANDS: ReadonlySet<string> = new Set<ReplicaCommand['type']>([
  'AddReplica',
  'AddIntermediateReplica',
  'ChangeReplicaState',
  'DeclareReplicaBad',
  'DeclareReplicaSuspicious',
  'DeclareReplicaTemporarilyUnavailable',
  'SetReplicaTombstone',
  'PurgeUnlockedReplicas',
]);

const LOCK_COMMANDS: ReadonlySet<string> = new Set<ReplicaLockCommand['type']>([
  'LockReplica',
  'UnlockReplica',
  'ChangeReplicaLocks',
  'RequeueReplicaTransfer',
]);

const DELETION_COMMANDS: ReadonlySet<string> = new Set<ReplicaDeletionCommand['type']>([
  'StartReplicaDeletion',
  'RecordReplicaDeletion',
  'EraseFileWithoutReplicas',
]);

const RECOVERY_COMMANDS: ReadonlySet<string> = new Set<ReplicaRecoveryCommand['type']>([
  'ResolveBadReplica',
  'EndTemporaryUnavailability',
]);

const ACCESS_COMMANDS: ReadonlySet<string> = new Set<ReplicaAccessCommand['type']>([
  'RecordReplicaAccess',
  'RecordDatasetAccess',
]);

const isReplicaCommand = (command: DidStreamCommand): command is ReplicaCommand => REPLICA_COMMANDS.has(command.type);
const isLockCommand = (command: DidStreamCommand): command is ReplicaLockCommand => LOCK_COMMANDS.has(command.type);
const isDeletionCommand = (command: DidStreamCommand): command is ReplicaDeletionCommand =>
  DELETION_COMMANDS.has(command.type);
const isRecoveryCommand = (command: DidStreamCommand): command is ReplicaRecoveryCommand =>
  RECOVERY_COMMANDS.has(command.type);
const isAccessCommand = (command: DidStreamCommand): command is ReplicaAccessCommand =>
  ACCESS_COMMANDS.has(command.type);

export const didStreamDecider: Decider<FileReplicas, DidStreamCommand, DidStreamEvent> = {
  // Not `did`: that is the DID decider, which decides the DID alone and has another state.
  name: 'didStream',
  initialState: initialFileReplicas,
  evolve: evolveFileReplicas,
  decide: (command, state) => {
    if (isReplicaCommand(command)) return decideReplica(command, state);
    if (isLockCommand(command)) return decideReplicaLock(command, state);
    if (isDeletionCommand(command)) return decideReplicaDeletion(command, state);
    if (isRecoveryCommand(command)) return decideReplicaRecovery(command, state);
    if (isAccessCommand(command)) return decideReplicaAccess(command, state);
    return didDecider.decide(command, state.did);
  },
  compact: compactFileSteps,
};
