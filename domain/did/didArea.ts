import { didSubject, rseSubject, ruleSubject } from '../shared/auditSubjects.ts';
import { domainArea } from '../shared/domainArea.ts';
import { DID_EVENT_TYPES, type DidEvent } from './did.ts';
import { didUpcasters } from './didUpcasters.ts';
import { UNDERTAKER_SETTINGS } from './undertakerSettings.ts';

/**
 * What a DID's event concerns besides the DID: attaches, detaches and erasures also each child (so
 * a file's history shows the datasets it entered and left), as do an archive's new content and the
 * marks it leaves on constituents and datasets; a file registered with replicas, or erased with
 * them, their RSEs (and the rule of a lock one carries); a DID's rule records, the rule.
 */
const didEventSubjects = (event: DidEvent): string[] => {
  const own = didSubject(event.data.scope, event.data.name);
  switch (event.type) {
    case 'DidsAttached':
    case 'DidsDetached':
      return [own, ...event.data.children.map((child) => didSubject(child.scope, child.name))];
    case 'DidErased':
      // A file the reaper erased: the RSEs of the replicas deleted with it.
      return [
        own,
        ...event.data.children.map((child) => didSubject(child.scope, child.name)),
        ...(event.data.replicasDeleted ?? []).map((deleted) => rseSubject(deleted.rse)),
      ];
    case 'ArchiveContentAdded':
      return [own, ...event.data.constituents.map((child) => didSubject(child.scope, child.name))];
    case 'FileMarkedConstituent':
    case 'DatasetMarkedArchive':
      return [own, didSubject(event.data.archive.scope, event.data.archive.name)];
    case 'DidContentUpdated':
      return [own, didSubject(event.data.child.scope, event.data.child.name)];
    case 'DidRuleAttached':
    case 'DidRuleChanged':
    case 'DidRuleDetached':
      return [own, ruleSubject(event.data.ruleId)];
    case 'DidCreated':
      return [
        own,
        ...event.data.replicas.flatMap((replica) => [
          rseSubject(replica.rse),
          ...(replica.lock ? [ruleSubject(replica.lock.ruleId)] : []),
        ]),
      ];
    default:
      return [own];
  }
};

/** Data identifiers and the undertaker; a DID's own stream (`did-<scope>:<name>`) is its history. */
export const didArea = domainArea({
  name: 'did',
  events: DID_EVENT_TYPES,
  upcasters: didUpcasters,
  settings: UNDERTAKER_SETTINGS,
  audit: { subjectStreams: 'did', subjectsOf: didEventSubjects },
});
