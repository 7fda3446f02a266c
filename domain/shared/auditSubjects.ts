/**
 * The subjects of the audit: what an auditor asks the history of (a DID, a rule, an RSE, a
 * subscription), each named by a string (`did:<scope>:<name>`, `rule:<id>`, `rse:<name>`,
 * `subscription:<id>`). Neither part holds a space (Rucio's names do not), so `<subject>
 * <position>` sorts a subject's events in order. Each area says which subjects its events concern
 * (`audit` in its declaration, domain/shared/domainArea.ts); a subject's kind is the category of
 * its own stream, whose events the audit reads from the stream itself.
 */
export const didSubject = (scope: string, name: string): string => `did:${scope}:${name}`;
export const ruleSubject = (ruleId: string): string => `rule:${ruleId}`;
export const rseSubject = (rse: string): string => `rse:${rse}`;
export const subscriptionSubject = (id: string): string => `subscription:${id}`;
