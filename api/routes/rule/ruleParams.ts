import { z } from 'zod';
import type { DidRef } from '../../../domain/did/did.ts';
import type { RuleNotification } from '../../../domain/rule/rule.ts';
import type { RuleRequest } from '../../../domain/rule/ruleCreation.ts';
import type { RuleUpdate } from '../../../commands/rule/ruleUpdates.ts';
import { RULE_UPDATE_OPTIONS } from '../../../commands/rule/ruleUpdates.ts';
import { InputValidationError, InvalidObject, UnsupportedOperation } from '../../../domain/shared/errors.ts';
import type { MoveOverride } from '../../../commands/rule/ruleReplacement.ts';
import { climbProblem, NAME_RULES } from '../../../domain/shared/names.ts';
import { isRecord } from '../../../domain/shared/narrowing.ts';

/**
 * The bodies of the rule routes, checked as Rucio's `rule` schema does (lib/rucio/common/schema/
 * generic.py): a shape it refuses is InvalidObject "Problem validating rule: …" (409 on
 * POST /rules/, as Rucio answers). The zod schemas also describe the routes (OpenAPI).
 */

/** Rucio's activity names (the `activity` enum of its generic schema), and the two its daemons use. */
export const ACTIVITIES = [
  'Data Brokering',
  'Data Consolidation',
  'Data rebalancing',
  'Debug',
  'Express',
  'Functional Test',
  'Group Subscriptions',
  'Production Input',
  'Production Output',
  'Analysis Input',
  'Analysis Output',
  'Staging',
  'T0 Export',
  'T0 Tape',
  'Upload/Download (Job)',
  'Upload/Download (User)',
  'User Subscriptions',
  'Data Challenge',
  'Recovery',
  'DebugJudge',
] as const;

const NOTIFICATIONS: Readonly<Record<string, RuleNotification>> = { Y: 'YES', N: 'NO', C: 'CLOSE', P: 'PROGRESS' };

/** A scope or name that stays below an RSE's prefix as a path (no `.`, `..` or empty segment). */
const noClimbing = (kind: 'scope' | 'name') => (value: string) => climbProblem(kind, value) === undefined;
const CLIMBING = "has a '.', '..' or empty path segment";

const didRef = z.object({
  scope: z
    .string()
    .max(NAME_RULES.scope.maxLength)
    .regex(NAME_RULES.scope.pattern)
    .refine(noClimbing('scope'), CLIMBING),
  name: z.string().max(NAME_RULES.name.maxLength).regex(NAME_RULES.name.pattern).refine(noClimbing('name'), CLIMBING),
});

/** A Python-style integer: JSON numbers without a fraction. */
const integer = z.number().int().safe();

export const addRuleSchema = z
  .object({
    dids: z.array(z.looseObject(didRef.shape)).min(1).max(1000),
    account: z
      .string()
      .regex(/^[a-z0-9-_]{1,25}$/)
      .nullish(),
    copies: integer,
    rse_expression: z.string().min(1).max(3000),
    weight: z.string().max(255).nullish(),
    lifetime: z
      .number()
      .finite()
      .min(0)
      .max(100 * 365 * 86_400)
      .nullish(),
    grouping: z.enum(['ALL', 'DATASET', 'NONE']).nullish(),
    locked: z.boolean().nullish(),
    subscription_id: z.string().max(64).nullish(),
    source_replica_expression: z.string().max(3000).nullish(),
    activity: z.enum(ACTIVITIES).nullish(),
    notify: z.enum(['Y', 'N', 'C', 'P']).nullish(),
    purge_replicas: z.boolean().nullish(),
    ignore_availability: z.boolean().nullish(),
    comment: z.string().max(250).nullish(),
    ask_approval: z.boolean().nullish(),
    asynchronous: z.boolean().nullish(),
    delay_injection: integer
      .min(0)
      .max(365 * 86_400)
      .nullish(),
    priority: integer.min(0).max(5).nullish(),
    split_container: z.boolean().nullish(),
    meta: z.union([z.string().max(3999), z.record(z.string(), z.unknown())]).nullish(),
  })
  .strict();

/** The first problem zod found, as jsonschema would word it. */
const problemOf = (error: z.ZodError, schema: string): Error => {
  const issue = error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return new InvalidObject(`Problem validating ${schema}: ${where}${issue?.message ?? 'invalid'}`);
};

/** `POST /rules/`: the request of `add_rule`, with Rucio's defaults; `issuer` owns it by default. */
export const ruleRequestOf = (body: unknown, issuer: string): RuleRequest => {
  const parsed = addRuleSchema.safeParse(body);
  if (!parsed.success) throw problemOf(parsed.error, 'rule');
  const rule = parsed.data;
  let meta: Readonly<Record<string, unknown>> | null = null;
  if (typeof rule.meta === 'string') {
    try {
      const value = JSON.parse(rule.meta) as unknown;
      meta = isRecord(value) ? value : { value };
    } catch {
      throw new InvalidObject('Problem validating rule: meta is not a JSON document');
    }
  } else if (rule.meta) meta = rule.meta;
  return {
    dids: rule.dids.map((did): DidRef => ({ scope: did.scope, name: did.name })),
    account: rule.account ?? issuer,
    copies: rule.copies,
    rseExpression: rule.rse_expression,
    weight: rule.weight ?? null,
    lifetime: rule.lifetime ?? null,
    grouping: rule.grouping ?? 'DATASET',
    locked: rule.locked ?? false,
    subscriptionId: rule.subscription_id ?? null,
    sourceReplicaExpression: rule.source_replica_expression ?? null,
    activity: rule.activity ?? 'User Subscriptions',
    notification: NOTIFICATIONS[rule.notify ?? 'N']!,
    purgeReplicas: rule.purge_replicas ?? false,
    ignoreAvailability: rule.ignore_availability ?? false,
    ignoreAccountLimit: false,
    comment: rule.comment ?? null,
    askApproval: rule.ask_approval ?? false,
    asynchronous: rule.asynchronous ?? false,
    delayInjection: rule.delay_injection ?? null,
    priority: rule.priority ?? 3,
    splitContainer: rule.split_container ?? false,
    meta,
  };
};

/**
 * The override of `move_rule`: the options `add_rule` was given for the old rule, by Rucio's
 * names (core/rule.py `move_rule`): `dids` is not allowed, anything else unknown is not valid
 * (both UnsupportedOperation), and each value is checked as `POST /rules/` checks it.
 */
const MOVE_OVERRIDE_KEYS = {
  account: true,
  copies: true,
  rse_expression: true,
  grouping: true,
  weight: true,
  lifetime: true,
  locked: true,
  subscription_id: true,
  source_replica_expression: true,
  activity: true,
  notify: true,
  purge_replicas: true,
  ignore_availability: true,
  comment: true,
} as const;

const moveOverrideSchema = addRuleSchema.pick(MOVE_OVERRIDE_KEYS).partial();

export const moveOverrideOf = (override: Readonly<Record<string, unknown>>): MoveOverride => {
  for (const key of Object.keys(override)) {
    if (key === 'dids' || key === 'session') throw new UnsupportedOperation(`Not allowed to override option ${key}`);
    if (!Object.hasOwn(MOVE_OVERRIDE_KEYS, key)) throw new UnsupportedOperation(`Non-valid override option ${key}`);
  }
  const parsed = moveOverrideSchema.safeParse(override);
  if (!parsed.success) throw problemOf(parsed.error, 'rule');
  const given = parsed.data;
  const result: { -readonly [K in keyof MoveOverride]: MoveOverride[K] } = {};
  if (given.account != null) result.account = given.account;
  if (given.copies !== undefined) result.copies = given.copies;
  if (given.rse_expression !== undefined) result.rseExpression = given.rse_expression;
  if (given.grouping != null) result.grouping = given.grouping;
  if (given.weight !== undefined) result.weight = given.weight ?? null;
  if (given.lifetime !== undefined) result.lifetime = given.lifetime ?? null;
  if (given.locked != null) result.locked = given.locked;
  if (given.subscription_id !== undefined) result.subscriptionId = given.subscription_id ?? null;
  if (given.source_replica_expression !== undefined)
    result.sourceReplicaExpression = given.source_replica_expression ?? null;
  if (given.activity != null) result.activity = given.activity;
  if (given.notify != null) result.notification = NOTIFICATIONS[given.notify]!;
  if (given.purge_replicas != null) result.purgeReplicas = given.purge_replicas;
  if (given.ignore_availability != null) result.ignoreAvailability = given.ignore_availability;
  if (given.comment !== undefined) result.comment = given.comment ?? null;
  return result;
};

export const updateRuleSchema = z.object({
  options: z.record(z.string(), z.unknown()),
});

/**
 * The `options` of `PUT /rules/{id}`: known keys only (InputValidationError, as Rucio's core
 * answers, 409 on this route), each of its type. `approve` is read apart (approval or denial).
 */
export const ruleUpdateOf = (options: Readonly<Record<string, unknown>>): RuleUpdate => {
  for (const key of Object.keys(options)) {
    if (!(RULE_UPDATE_OPTIONS as readonly string[]).includes(key))
      throw new InputValidationError(`${key} is not a valid option to set.`);
  }
  const checked = z
    .object({
      comment: z.string().max(250).nullable().optional(),
      locked: z.boolean().optional(),
      lifetime: z
        .number()
        .finite()
        .min(-100 * 365 * 86_400)
        .max(100 * 365 * 86_400)
        .nullable()
        .optional(),
      account: z
        .string()
        .regex(/^[a-z0-9-_]{1,25}$/)
        .optional(),
      state: z.string().max(32).optional(),
      activity: z.enum(ACTIVITIES).optional(),
      source_replica_expression: z.string().max(3000).nullable().optional(),
      cancel_requests: z.boolean().optional(),
      priority: integer.min(0).max(5).optional(),
      child_rule_id: z.string().max(64).nullable().optional(),
      eol_at: z.string().max(64).nullable().optional(),
      meta: z.record(z.string(), z.unknown()).nullable().optional(),
      purge_replicas: z.boolean().optional(),
      boost_rule: z.boolean().optional(),
    })
    .safeParse(options);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new InputValidationError(`${issue?.path.join('.') ?? 'options'}: ${issue?.message ?? 'invalid'}`);
  }
  const given = checked.data;
  const update: Record<string, unknown> = {};
  const copy = (from: keyof typeof given, to: keyof RuleUpdate) => {
    if (from in given) update[to] = given[from];
  };
  copy('comment', 'comment');
  copy('locked', 'locked');
  copy('lifetime', 'lifetime');
  copy('account', 'account');
  copy('state', 'state');
  copy('activity', 'activity');
  copy('source_replica_expression', 'sourceReplicaExpression');
  copy('cancel_requests', 'cancelRequests');
  copy('priority', 'priority');
  copy('child_rule_id', 'childRuleId');
  copy('eol_at', 'eolAt');
  copy('meta', 'meta');
  copy('purge_replicas', 'purgeReplicas');
  copy('boost_rule', 'boostRule');
  return update;
};
