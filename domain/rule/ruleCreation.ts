import type { DidRef, DidType } from '../did/did.ts';
import { evaluateRseExpression, type RseFacts } from '../rse/rseExpression.ts';
import { InvalidRSEExpression, InvalidValueForKey } from '../shared/errors.ts';
import {
  InvalidReplicationRule,
  InvalidSourceReplicaExpression,
  ManualRuleApprovalBlocked,
  RSEWriteBlocked,
  StagingAreaRuleRequiresLifetime,
} from './ruleErrors.ts';
import { seededRandom } from './random.ts';
import type { RuleGrouping, RuleNotification, RuleRecord } from './rule.ts';
import { placeRule, type Placement, type RuleContent } from './rulePlacement.ts';
import { createSelector, type CandidateRse, type QuotaFacts, type Selector } from './rseSelection.ts';

/**
 * Rucio's `add_rule` pipeline (behaviour reference §3.2), in its order, as one pure function:
 * the expression and availability, staging areas, automatic locking on tape, approval, the source
 * expression, the RSE selector with the owner's quotas, expiry, then per DID: approval, injection
 * for large or asynchronous rules, or the placement of its locks. The command layer reads the
 * facts, calls this, and turns what it plans into commands on the streams involved.
 */

/** An `add_rule` request as the API validated it (one rule per DID). */
export type RuleRequest = Readonly<{
  dids: readonly DidRef[];
  account: string;
  copies: number;
  rseExpression: string;
  weight: string | null;
  /** Seconds; null for no expiry. */
  lifetime: number | null;
  grouping: RuleGrouping;
  locked: boolean;
  subscriptionId: string | null;
  sourceReplicaExpression: string | null;
  activity: string;
  notification: RuleNotification;
  purgeReplicas: boolean;
  ignoreAvailability: boolean;
  ignoreAccountLimit: boolean;
  comment: string | null;
  askApproval: boolean;
  asynchronous: boolean;
  /** Seconds to wait before the injector takes the rule; null for none. */
  delayInjection: number | null;
  priority: number;
  splitContainer: boolean;
  meta: Readonly<Record<string, unknown>> | null;
}>;

/**
 * Every option of an `add_rule` request but its DIDs, owner and expression, as Rucio's API fills it
 * in when the caller leaves it out (one copy): the rules the service makes for itself (DIRAC's,
 * open data's) start from these, as does a test's request.
 */
export const RULE_REQUEST_DEFAULTS = {
  copies: 1,
  weight: null,
  lifetime: null,
  grouping: 'DATASET',
  locked: false,
  subscriptionId: null,
  sourceReplicaExpression: null,
  activity: 'User Subscriptions',
  notification: 'NO',
  purgeReplicas: false,
  ignoreAvailability: false,
  ignoreAccountLimit: false,
  comment: null,
  askApproval: false,
  asynchronous: false,
  delayInjection: null,
  priority: 3,
  splitContainer: false,
  meta: null,
} as const satisfies Omit<RuleRequest, 'dids' | 'account' | 'rseExpression'>;

/** What the pipeline knows of one DID of the request. */
export type RuleDidFacts = Readonly<{
  scope: string;
  name: string;
  didType: DidType;
  /** Files below it (the rule's size in locks per copy). */
  length: number;
  bytes: number;
  closed: boolean;
  /** The DID's content with replicas; absent when the rule will be injected later (too large). */
  content: RuleContent | undefined;
}>;

export type RuleCreationFacts = Readonly<{
  /** Every RSE that is not deleted. */
  rses: readonly RseFacts[];
  quota: QuotaFacts;
  dids: readonly RuleDidFacts[];
  /** Rule ids to use, one per DID, in order. */
  ruleIds: readonly string[];
  now: Date;
  /** Seeds the weighted random choice of RSEs. */
  seed: number;
  /** The account asking (the owner may be another, for admins). */
  requestedBy: string;
}>;

export type PlannedRule = Readonly<{
  record: RuleRecord;
  /** INJECT or WAITING_APPROVAL when the rule gets no locks now; null when `placement` says where they go. */
  state: 'INJECT' | 'WAITING_APPROVAL' | null;
  placement: Placement | null;
  targetRses: readonly string[];
  autoLocked: boolean;
  didClosed: boolean;
}>;

/** Rules whose locks would be at least this many are injected asynchronously (Rucio's threshold). */
export const INJECTION_THRESHOLD = 10_000;

const candidateOf = (rse: RseFacts): CandidateRse => ({
  rseId: rse.id,
  rse: rse.rse,
  attributes: rse.attributes,
  stagingArea: rse.properties.staging_area,
  availabilityWrite: rse.properties.availability_write,
});

/** The RSEs a rule may use: its expression's, without those closed for writing unless availability is ignored. */
export const targetRsesOf = (
  expression: string,
  rses: readonly RseFacts[],
  ignoreAvailability: boolean,
): RseFacts[] => {
  const resolved = evaluateRseExpression(expression, rses);
  if (ignoreAvailability) return resolved;
  const writable = resolved.filter((rse) => rse.properties.availability_write);
  if (writable.length === 0) throw new RSEWriteBlocked('RSE excluded; not available for writing.');
  return writable;
};

/** Checks a source expression parses and selects something (Rucio's InvalidSourceReplicaExpression). */
export const checkSourceExpression = (expression: string | null, rses: readonly RseFacts[]): void => {
  if (expression === null) return;
  try {
    evaluateRseExpression(expression, rses);
  } catch (error) {
    if (error instanceof InvalidRSEExpression) throw new InvalidSourceReplicaExpression(`${error.message}`);
    throw error;
  }
};

/**
 * The automatic approval of `ask_approval` rules: one target RSE only; approved at once when the
 * DID is closed with known size and the RSE's `auto_approve_bytes` / `auto_approve_files`
 * thresholds (whichever are set) are not reached.
 */
const autoApproved = (did: RuleDidFacts, target: RseFacts): boolean => {
  if (!did.closed) return false;
  const bytesLimit = Number(target.attributes.auto_approve_bytes);
  const filesLimit = Number(target.attributes.auto_approve_files);
  const hasBytes = 'auto_approve_bytes' in target.attributes && Number.isFinite(bytesLimit);
  const hasFiles = 'auto_approve_files' in target.attributes && Number.isFinite(filesLimit);
  if (!hasBytes && !hasFiles) return false;
  return (!hasBytes || did.bytes < bytesLimit) && (!hasFiles || did.length < filesLimit);
};

export const planRules = (request: RuleRequest, facts: RuleCreationFacts): PlannedRule[] => {
  // 1. Copies.
  if (request.copies <= 0)
    throw new InvalidValueForKey('The number of copies for a replication rule should be greater than 0.');
  // 3. The expression, without RSEs closed for writing.
  const targets = targetRsesOf(request.rseExpression, facts.rses, request.ignoreAvailability);
  // 4. Staging areas keep data only for a while.
  if (request.lifetime === null && targets.some((rse) => rse.properties.staging_area)) {
    throw new StagingAreaRuleRequiresLifetime('Rules for a staging area must include a lifetime');
  }
  // 6. Tape without expiry: the rule is locked for the owner.
  const autoLocked =
    !request.locked && request.lifetime === null && targets.some((rse) => rse.properties.rse_type === 'TAPE');
  // 7. Manual approval may be blocked by the RSEs.
  if (request.askApproval && targets.some((rse) => isTrue(rse.attributes.block_manual_approval))) {
    throw new ManualRuleApprovalBlocked('The RSE expression contains an RSE which blocks manual approval.');
  }
  // 8. The source expression.
  checkSourceExpression(request.sourceReplicaExpression, facts.rses);
  // 9. The selector, with quotas unless approval or the request waives them.
  const quota = request.askApproval || request.ignoreAccountLimit ? { ...facts.quota, unlimited: true } : facts.quota;
  let selector: Selector = createSelector(targets.map(candidateOf), request.copies, request.weight, quota);
  // 10. Expiry.
  const at = facts.now.toISOString();
  const expiresAt =
    request.lifetime === null ? null : new Date(facts.now.getTime() + request.lifetime * 1000).toISOString();
  const random = seededRandom(facts.seed);

  return facts.dids.map((did, index): PlannedRule => {
    const record: RuleRecord = {
      id: facts.ruleIds[index]!,
      scope: did.scope,
      name: did.name,
      didType: did.didType,
      account: request.account,
      rseExpression: request.rseExpression,
      copies: request.copies,
      grouping: request.grouping,
      weight: request.weight,
      locked: request.locked || autoLocked,
      subscriptionId: request.subscriptionId,
      sourceReplicaExpression: request.sourceReplicaExpression,
      activity: request.activity,
      notification: request.notification,
      purgeReplicas: request.purgeReplicas,
      ignoreAvailability: request.ignoreAvailability,
      ignoreAccountLimit: request.ignoreAccountLimit,
      priority: request.priority,
      splitContainer: request.splitContainer,
      comments: request.comment,
      meta: request.meta,
      expiresAt,
      eolAt: null,
      createdAt: at,
      injectAfter: request.delayInjection
        ? new Date(facts.now.getTime() + request.delayInjection * 1000).toISOString()
        : null,
      requestedBy: facts.requestedBy,
    };
    const base = { targetRses: targets.map((rse) => rse.rse), autoLocked, didClosed: did.closed };
    // 13. Approval.
    if (request.askApproval) {
      if (targets.length > 1)
        throw new InvalidReplicationRule('Ask approval is not allowed for rules with multiple RSEs');
      if (autoApproved(did, targets[0]!))
        return { ...base, record: { ...record, ignoreAccountLimit: true }, state: 'INJECT', placement: null };
      return { ...base, record, state: 'WAITING_APPROVAL', placement: null };
    }
    // 14. Large, asynchronous, delayed and split rules are left to the injector.
    const large = did.length * request.copies >= INJECTION_THRESHOLD;
    const split = request.splitContainer && did.didType === 'CONTAINER';
    if (large || request.asynchronous || request.delayInjection || split || !did.content) {
      return { ...base, record, state: 'INJECT', placement: null };
    }
    // 15. The locks.
    const placement = placeRule(did.content, request.grouping, request.copies, selector, random);
    selector = placement.selector;
    return { ...base, record, state: null, placement };
  });
};

const isTrue = (value: unknown): boolean =>
  value === true || (typeof value === 'string' && ['true', 'yes', '1', 'on'].includes(value.toLowerCase()));
