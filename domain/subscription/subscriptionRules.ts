import { createHash } from 'node:crypto';
import type { DidRef } from '../did/did.ts';
import { parseRseExpression, RSE_EXPRESSION_MAX_LENGTH } from '../rse/rseExpression.ts';
import { RULE_GROUPINGS } from '../rule/rule.ts';
import type { RuleRequest } from '../rule/ruleCreation.ts';
import { InvalidObject, RucioError } from '../shared/errors.ts';
import { NAME_RULES } from '../shared/names.ts';
import type { SubscriptionRecord } from './subscription.ts';
import { isOneOf, isRecord } from '../shared/narrowing.ts';

/**
 * The `replication_rules` of a subscription (behaviour reference §7, Rucio's transmogrifier
 * `__get_rule_dict`): a list of rule dictionaries, each turned into an `add_rule` request for
 * every DID the subscription matches. Stored as given; checked when the subscription is added or
 * updated, so that a subscription never holds a rule that could not be made.
 */
export type SubscriptionRuleTemplate = Readonly<Record<string, unknown>>;

/** Rucio's column width for the rules: String(4000). */
export const MAX_RULES_LENGTH = 4000;
/** Rucio's rule comment column: String(255). */
const COMMENT_LENGTH = 255;
const KNOWN_KEYS = new Set([
  'copies',
  'rse_expression',
  'weight',
  'lifetime',
  'locked',
  'purge_replicas',
  'activity',
  'grouping',
  'account',
  'comments',
  'source_replica_expression',
  'ignore_availability',
  'delay_injection',
]);
/** Chained subscriptions (Rucio's `associated_site` algorithm) are not offered. */
const CHAINED_KEYS = new Set(['chained_idx', 'algorithm', 'associated_site_idx']);

// A declaration, so that the compiler narrows what follows a call (an arrow function's `never` does not).
function problem(index: number, message: string): never {
  throw new InvalidObject(`Problem validating replication_rules: rule ${index + 1}: ${message}`);
}

/** Rucio reads `copies` with `int()`: whole numbers, also as text; `*` means one per RSE of the expression. */
const copiesOf = (value: unknown): number | '*' | undefined => {
  if (value === '*') return '*';
  const number = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) && number >= 1 ? number : undefined;
};

/** Rucio takes only the text "True" as true for `locked` and `purge_replicas`; JSON booleans are taken here too. */
const flagOf = (value: unknown): boolean | undefined => {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (value === 'True' || value === 'true') return true;
  if (value === 'False' || value === 'false') return false;
  return undefined;
};

const wholeSeconds = (value: unknown): number | null | undefined => {
  if (value === undefined || value === null || value === 0 || value === false) return null;
  const number = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) && number >= 0 && number <= 100 * 365 * 86_400
    ? number
    : undefined;
};

const checkExpression = (index: number, key: string, value: unknown): void => {
  if (typeof value !== 'string' || value === '' || value.length > RSE_EXPRESSION_MAX_LENGTH) {
    problem(index, `${key} must be a non-empty string of at most ${RSE_EXPRESSION_MAX_LENGTH} characters`);
  }
  try {
    parseRseExpression(value);
  } catch (error) {
    if (!(error instanceof RucioError)) throw error;
    problem(index, `${key} ${JSON.stringify(value)}: ${error.message}`);
  }
};

/**
 * Checks the rules as given in a request: a non-empty list (Rucio: "You must specify a rule") of
 * dictionaries with `copies` and `rse_expression` and known options of their types. `isActivity`
 * says which activity names are valid.
 */
export const parseReplicationRules = (
  value: unknown,
  isActivity: (activity: string) => boolean,
): SubscriptionRuleTemplate[] => {
  if (value === null || value === undefined || (Array.isArray(value) && value.length === 0))
    throw new InvalidObject('You must specify a rule');
  if (!Array.isArray(value)) throw new InvalidObject('replication_rules should be a list');
  if (JSON.stringify(value).length > MAX_RULES_LENGTH)
    throw new InvalidObject(`Problem validating replication_rules: longer than ${MAX_RULES_LENGTH} characters of JSON`);
  return value.map((rule, index): SubscriptionRuleTemplate => {
    if (!isRecord(rule)) return problem(index, 'a rule must be a dictionary');
    const given = rule;
    for (const key of Object.keys(given)) {
      if (CHAINED_KEYS.has(key)) problem(index, `${key}: chained subscriptions are not supported`);
      if (!KNOWN_KEYS.has(key))
        problem(index, `unknown option ${JSON.stringify(key.slice(0, 50))} (known: ${[...KNOWN_KEYS].join(', ')})`);
    }
    if (copiesOf(given.copies) === undefined)
      problem(index, `copies must be a whole number of at least 1, or "*" (got ${JSON.stringify(given.copies)})`);
    checkExpression(index, 'rse_expression', given.rse_expression);
    if (given.source_replica_expression !== undefined && given.source_replica_expression !== null) {
      checkExpression(index, 'source_replica_expression', given.source_replica_expression);
    }
    if (
      given.weight !== undefined &&
      given.weight !== null &&
      (typeof given.weight !== 'string' || given.weight.length > 255)
    )
      problem(index, 'weight must be the name of an RSE attribute');
    if (wholeSeconds(given.lifetime) === undefined) problem(index, 'lifetime must be a whole number of seconds');
    if (wholeSeconds(given.delay_injection) === undefined)
      problem(index, 'delay_injection must be a whole number of seconds');
    if (flagOf(given.locked) === undefined) problem(index, 'locked must be a boolean');
    if (flagOf(given.purge_replicas) === undefined) problem(index, 'purge_replicas must be a boolean');
    if (given.ignore_availability !== undefined && typeof given.ignore_availability !== 'boolean')
      problem(index, 'ignore_availability must be a boolean');
    if (given.activity !== undefined && (typeof given.activity !== 'string' || !isActivity(given.activity)))
      problem(index, `activity ${JSON.stringify(given.activity)} is not a known activity`);
    if (given.grouping !== undefined && !isOneOf(RULE_GROUPINGS, given.grouping))
      problem(index, `grouping must be one of ${RULE_GROUPINGS.join(', ')}`);
    if (
      given.account !== undefined &&
      (typeof given.account !== 'string' ||
        given.account.length > NAME_RULES.account.maxLength ||
        !NAME_RULES.account.pattern.test(given.account))
    ) {
      problem(index, `account ${JSON.stringify(given.account)} is not an account name`);
    }
    if (
      given.comments !== undefined &&
      given.comments !== null &&
      (typeof given.comments !== 'string' || given.comments.length > COMMENT_LENGTH)
    ) {
      problem(index, `comments must be a string of at most ${COMMENT_LENGTH} characters`);
    }
    return given;
  });
};

/** One rule a subscription gives a DID, as `add_rule` will be asked for it. */
export type PlannedRule = Readonly<{
  /** The rule's place in the subscription's list (from 0). */
  index: number;
  /** With `split_rule`: `copies` rules of one copy each on single RSEs of the expression, chosen when they are made. */
  split: boolean;
  request: RuleRequest;
}>;

/**
 * The `add_rule` request of a rule dictionary for one DID (`__get_rule_dict`): the owner is the
 * rule's `account` or the subscription's; comments the rule's or the subscription's (cut at 255);
 * `copies: "*"` is the number of RSEs the expression selects (`wildcardCopies`); grouping DATASET
 * and the default activity unless given.
 */
export const plannedRule = (
  template: SubscriptionRuleTemplate,
  index: number,
  subscription: Pick<SubscriptionRecord, 'id' | 'account' | 'comments'>,
  did: DidRef,
  options: Readonly<{ wildcardCopies: number; defaultActivity: string; split: boolean }>,
): PlannedRule => {
  const copies = copiesOf(template.copies);
  const comments =
    template.comments !== undefined && template.comments !== null
      ? String(template.comments)
      : subscription.comments === null
        ? null
        : subscription.comments.slice(0, COMMENT_LENGTH);
  return {
    index,
    split: options.split,
    request: {
      dids: [{ scope: did.scope, name: did.name }],
      account: typeof template.account === 'string' ? template.account : subscription.account,
      copies: copies === '*' ? options.wildcardCopies : (copies ?? 1),
      rseExpression: String(template.rse_expression),
      weight: typeof template.weight === 'string' ? template.weight : null,
      lifetime: wholeSeconds(template.lifetime) ?? null,
      grouping: isOneOf(RULE_GROUPINGS, template.grouping) ? template.grouping : 'DATASET',
      locked: flagOf(template.locked) ?? false,
      subscriptionId: subscription.id,
      sourceReplicaExpression:
        typeof template.source_replica_expression === 'string' ? template.source_replica_expression : null,
      activity: typeof template.activity === 'string' ? template.activity : options.defaultActivity,
      notification: 'NO',
      purgeReplicas: flagOf(template.purge_replicas) ?? false,
      ignoreAvailability: template.ignore_availability === true,
      ignoreAccountLimit: false,
      comment: comments,
      askApproval: false,
      asynchronous: false,
      delayInjection: wholeSeconds(template.delay_injection) ?? null,
      priority: 3,
      splitContainer: false,
      meta: null,
    },
  };
};

/** Whether a rule dictionary asks for one copy per RSE of its expression (`copies: "*"`). */
export const wantsEveryRse = (template: SubscriptionRuleTemplate): boolean => template.copies === '*';

/**
 * The id of the rule a subscription gives a DID: derived from the subscription, the DID, the
 * rule's place in the list and (with `split_rule`) the RSE, as 32 hex digits like Rucio's ids.
 * The transmogrifier and the retroactive pass reach the same DID with the same ids, and a job run
 * again makes no second rule.
 */
export const subscriptionRuleId = (
  subscriptionId: string,
  did: DidRef,
  index: number,
  rse: string | null = null,
): string =>
  createHash('sha1')
    .update(`subscription/${subscriptionId}/${did.scope}:${did.name}/${index}${rse === null ? '' : `/${rse}`}`)
    .digest('hex')
    .slice(0, 32);
