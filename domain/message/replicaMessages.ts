import type { DidErased } from '../did/did.ts';
import type { ReplicaDeleted, ReplicaLost } from '../replica/replica.ts';
import type { MessagePayload } from './message.ts';

/**
 * What Rucio's reaper sends per replica it deleted (`deletion-done`, or `deletion-not-found` when
 * the storage no longer had the file), from what the deletion recorded: the stored path stands for
 * the URL when the replica has one; the protocol, the duration and the file's datatype are not
 * recorded, so they are null. A file erased with its last replica carries the deletion inside its
 * `DidErased`. Failed deletions leave no event (the replica stays BEING_DELETED for a later
 * cycle), so `deletion-failed` is not sent (docs/compatibility.md).
 */
const deletionMessage = (deleted: ReplicaDeleted['data']): MessagePayload => ({
  eventType: deleted.storage === 'not-found' ? 'deletion-not-found' : 'deletion-done',
  payload: {
    scope: deleted.scope,
    name: deleted.name,
    rse: deleted.rse,
    'file-size': deleted.bytes,
    bytes: deleted.bytes,
    url: deleted.path,
    protocol: null,
    datatype: null,
    duration: null,
    ...(deleted.storage === 'not-found' ? { reason: 'File Not Found' } : {}),
  },
});

/** Deletion messages, and Rucio's LOST per dataset a lost file leaves (rule.py `update_rules_for_lost_replica`). */
export const replicaMessages = (event: ReplicaDeleted | ReplicaLost | DidErased): MessagePayload[] => {
  switch (event.type) {
    case 'ReplicaDeleted':
      return [deletionMessage(event.data)];
    case 'DidErased':
      return (event.data.replicasDeleted ?? []).map(deletionMessage);
    case 'ReplicaLost': {
      const { scope, name, datasets } = event.data;
      return datasets.map((dataset) => ({
        eventType: 'LOST',
        payload: { scope, name, dataset_name: dataset.name, dataset_scope: dataset.scope },
      }));
    }
  }
};
