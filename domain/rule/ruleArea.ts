import { didSubject, rseSubject, ruleSubject, subscriptionSubject } from '../shared/auditSubjects.ts';
import { domainArea } from '../shared/domainArea.ts';
import { JUDGE_SETTINGS } from './judgeSettings.ts';
import { RULE_EVENT_TYPES, type RuleEvent } from './rule.ts';

/**
 * What a rule's event concerns: the rule, its DID, and the RSEs and datasets its locks are
 * on; a new rule its target RSEs and the subscription that made it (so that the subscription's
 * history shows what it made); an update the child rule and the RSEs whose usage moved.
 */
const ruleEventSubjects = (event: RuleEvent): string[] => [
  ruleSubject(event.type === 'RuleAdded' ? event.data.rule.id : event.data.ruleId),
  ...otherRuleSubjects(event),
];

const otherRuleSubjects = (event: RuleEvent): string[] => {
  switch (event.type) {
    case 'RuleAdded':
      return [
        didSubject(event.data.rule.scope, event.data.rule.name),
        ...event.data.targetRses.map(rseSubject),
        ...(event.data.rule.subscriptionId ? [subscriptionSubject(event.data.rule.subscriptionId)] : []),
      ];
    case 'RuleLocksCreated':
    case 'RuleLocksRemoved':
      return [
        didSubject(event.data.scope, event.data.name),
        ...event.data.locks.map((lock) => rseSubject(lock.rse)),
        ...event.data.datasetLocks.flatMap((lock) => [rseSubject(lock.rse), didSubject(lock.scope, lock.name)]),
      ];
    case 'RuleLocksChanged':
      return [didSubject(event.data.scope, event.data.name), ...event.data.locks.map((lock) => rseSubject(lock.rse))];
    case 'RuleUpdated':
      return [
        didSubject(event.data.scope, event.data.name),
        ...(event.data.changes.childRuleId ? [ruleSubject(event.data.changes.childRuleId)] : []),
        ...(event.data.movedUsage ?? []).map((moved) => rseSubject(moved.rse)),
      ];
    case 'RuleStateChanged':
    case 'RuleApproved':
    case 'RuleDenied':
    case 'RuleDeleted':
    case 'RuleNotified':
      return [didSubject(event.data.scope, event.data.name)];
    default:
      return [];
  }
};

/** Replication rules and the judge; a rule's own stream (`rule-<id>`) is its history. */
export const ruleArea = domainArea({
  name: 'rule',
  events: RULE_EVENT_TYPES,
  upcasters: [],
  settings: JUDGE_SETTINGS,
  audit: { subjectStreams: 'rule', subjectsOf: ruleEventSubjects },
});
