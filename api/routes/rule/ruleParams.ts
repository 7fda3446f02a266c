import { z } from 'zod';
import type { DidRef } from '../../../domain/did/did.ts';
import { RULE_GROUPINGS, type RuleNotification } from '../../../domain/rule/rule.ts';
import type { RuleRequest } from '../../../domain/rule/ruleCreation.ts';
import type { RuleUpdate } from '../../../commands/rule/ruleUpdates.ts';
import { RULE_UPDATE_OPTIONS } from '../../../commands/rule/ruleUpdates.ts';
import {
  InputValidationError,
  InvalidObject,
  type RucioError,
  TypeError_,
  UnsupportedOperation,
} from '../../../domain/shared/errors.ts';
import { rucioBoolean } from '../../params.ts';
import { convertedBy, missingAs, parsed, refusedAs, type Refusal } from '../../routeInput.ts';
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
    grouping: z.enum(RULE_GROUPINGS).nullish(),
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

/** The first problem zod found, as jsonschema would word it: InvalidObject "Problem validating rule: …". */
const ruleProblem = ({ issue }: Refusal): RucioError => {
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return new InvalidObject(`Problem validating rule: ${where}${issue.message}`);
};

/**
 * `POST /rules/`: the request of `add_rule`, with Rucio's defaults; without an `account`, the
 * caller (whom only the handler knows) owns it.
 */
export const RULE_REQUEST = convertedBy(
  missingAs(refusedAs(addRuleSchema, ruleProblem), ruleProblem),
  (rule): Omit<RuleRequest, 'account'> & { account: string | null } => {
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
      account: rule.account ?? null,
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
  },
);

/** A rule request read from `body` (a DID's rule, a test's): the caller `issuer` owns it unless it names an account. */
export const ruleRequestOf = (body: unknown, issuer: string): RuleRequest => {
  const request = parsed(RULE_REQUEST, body);
  return { ...request, account: request.account ?? issuer };
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

/**
 * The override of `move_rule`: its keys first, in the order given (`dids` is not allowed, anything
 * else unknown is not valid: UnsupportedOperation), then each value as `POST /rules/` checks it.
 */
export const MOVE_OVERRIDE = z
  .object(Object.fromEntries(Object.keys(MOVE_OVERRIDE_KEYS).map((key) => [key, z.unknown().optional()])))
  .catchall(
    refusedAs(
      z.custom(() => false),
      ({ key }) =>
        new UnsupportedOperation(
          key === 'dids' || key === 'session'
            ? `Not allowed to override option ${String(key)}`
            : `Non-valid override option ${String(key)}`,
        ),
    ),
  )
  .pipe(refusedAs(addRuleSchema.pick(MOVE_OVERRIDE_KEYS).partial(), ruleProblem))
  .transform((given): MoveOverride => {
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
  });

/**
 * The `options` of `PUT /rules/{id}` that change a rule: known keys only, the first unknown one
 * in the order given refused (InputValidationError, as Rucio's core answers, 409 on this route),
 * then each of its type.
 */
const RULE_UPDATE = z
  .object(Object.fromEntries(RULE_UPDATE_OPTIONS.map((key) => [key, z.unknown().optional()])))
  .catchall(
    refusedAs(
      z.custom(() => false),
      ({ key }) => new InputValidationError(`${String(key)} is not a valid option to set.`),
    ),
  )
  .pipe(
    refusedAs(
      z.object({
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
      }),
      ({ issue }) => new InputValidationError(`${issue.path.join('.')}: ${issue.message}`),
    ),
  )
  .transform((given) => {
    const update: { -readonly [K in keyof RuleUpdate]: RuleUpdate[K] } = {};
    const copy = <From extends keyof typeof given, To extends keyof RuleUpdate>(from: From, to: To) => {
      if (from in given) Object.assign(update, { [to]: given[from] });
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
    return { approval: false as const, update };
  });

/** `options` holding `approve`: an approval or a denial (its other keys are not read). */
const RULE_APPROVAL = z
  .looseObject({ approve: rucioBoolean(), comment: z.unknown().optional() })
  .transform(({ approve, comment }) => ({
    approval: true as const,
    approve,
    reason: typeof comment === 'string' ? comment : null,
  }));

/** `PUT /rules/{id}`: `options`, a dictionary (required), read as an approval when it holds `approve`. */
export const RULE_OPTIONS = z
  .looseObject({
    options: convertedBy(
      refusedAs(z.record(z.string(), z.unknown()), () => new TypeError_(`'options' must be a dictionary`)),
      (options) => ('approve' in options ? parsed(RULE_APPROVAL, options) : parsed(RULE_UPDATE, options)),
    ),
  })
  .transform(({ options }) => options);

/** What the OpenAPI document shows of `PUT /rules/{id}`'s body. */
export const updateRuleSchema = z.object({ options: z.union([RULE_APPROVAL, RULE_UPDATE]) });
