import { didSubject, rseSubject, ruleSubject } from '../shared/auditSubjects.ts';
import { domainArea } from '../shared/domainArea.ts';
import { REPLICA_EVENT_TYPES, type ReplicaEvent } from './replica.ts';
import { REPLICA_SETTINGS } from './replicaSettings.ts';
import { replicaUpcasters } from './replicaUpcasters.ts';

/**
 * What a replica's event concerns: its file and RSE; a lock event (or a change of a replica's
 * locks) also the rules; a replica lost also the datasets it leaves. The file's stream is its DID's.
 */
const replicaEventSubjects = (event: ReplicaEvent): string[] => {
  const file = didSubject(event.data.scope, event.data.name);
  switch (event.type) {
    case 'ReplicaLocked':
    case 'ReplicaUnlocked':
      return [file, rseSubject(event.data.rse), ruleSubject(event.data.ruleId)];
    case 'ReplicaLocksChanged':
    case 'ReplicaStateChanged':
      return [file, rseSubject(event.data.rse), ...Object.keys(event.data.locks).map(ruleSubject)];
    case 'ReplicaAdded':
      return [file, rseSubject(event.data.rse), ...(event.data.lock ? [ruleSubject(event.data.lock.ruleId)] : [])];
    // A source declared suspicious by a failed transfer concerns the rule whose copy failed too.
    case 'ReplicaDeclaredSuspicious':
      return [
        file,
        rseSubject(event.data.rse),
        ...(event.data.transfer ? [ruleSubject(event.data.transfer.ruleId)] : []),
      ];
    case 'ReplicaDeclaredBad':
    case 'ReplicaDeclaredTemporarilyUnavailable':
    case 'ReplicaTombstoneSet':
    case 'ReplicaDeletionStarted':
    case 'ReplicaDeleted':
    case 'ReplicaAccessed':
      return [file, rseSubject(event.data.rse)];
    case 'ReplicaLost':
      return [
        file,
        rseSubject(event.data.rse),
        ...Object.keys(event.data.locks).map(ruleSubject),
        ...event.data.datasets.map((dataset) => didSubject(dataset.scope, dataset.name)),
      ];
    default:
      return [];
  }
};

/** Replicas (on their files' streams) and the daemons that delete and recover them. */
export const replicaArea = domainArea({
  name: 'replica',
  events: REPLICA_EVENT_TYPES,
  upcasters: replicaUpcasters,
  settings: REPLICA_SETTINGS,
  audit: { subjectsOf: replicaEventSubjects },
});
