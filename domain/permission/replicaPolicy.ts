import { isAdmin, isRoot, type Caller } from './policy.ts';

/** RSEs anyone may register replicas on, by the end of their name (Rucio's perm_add_replicas). */
const OPEN_RSE_SUFFIXES = ['SCRATCHDISK', 'USERDISK', 'MOCK', 'LOCALGROUPDISK'] as const;

/**
 * The generic policy for replicas (lib/rucio/core/permission/generic.py). Declaring replicas bad
 * is for root alone; anyone may call a replica suspicious. Deleting replicas is allowed to nobody
 * through the API (commands/replicaUpdates.ts refuses it): only the reaper deletes them.
 */
export const REPLICA_PERMISSIONS = {
  addReplicas: (caller: Caller, rse: string) =>
    isAdmin(caller) || OPEN_RSE_SUFFIXES.some((suffix) => rse.endsWith(suffix)),
  skipAvailabilityCheck: isAdmin,
  updateReplicasStates: isAdmin,
  declareBad: isRoot,
  declareSuspicious: (_caller: Caller) => true,
  setTombstone: isAdmin,
  quarantine: isAdmin,
} as const;
