import type { NewSubscription, SubscriptionUpdate } from '../../../commands/subscription/subscriptionCommands.ts';
import { checkText } from '../../../domain/shared/limits.ts';
import { InvalidObject, TypeError_ } from '../../../domain/shared/errors.ts';
import { NAME_RULES } from '../../../domain/shared/names.ts';
import {
  DEFAULT_SUBSCRIPTION_PRIORITY,
  SUBSCRIPTION_STATE_LETTERS,
  SUBSCRIPTION_STATES,
} from '../../../domain/subscription/subscription.ts';
import { parseSubscriptionFilter, type SubscriptionFilter } from '../../../domain/subscription/subscriptionFilter.ts';
import {
  parseReplicationRules,
  type SubscriptionRuleTemplate,
} from '../../../domain/subscription/subscriptionRules.ts';
import { z } from 'zod';
import { boundedText, optionalBoolean, orNull, requiredValue, rucioBoolean } from '../../params.ts';
import { convertedBy, refusedAs, type Refusal } from '../../routeInput.ts';
import { ACTIVITIES } from '../rule/ruleParams.ts';

/**
 * The bodies of the subscription routes, read as Rucio's views read them
 * (`param_get`: a missing required key is KeyError) and checked as its gateway and schemas do,
 * with clear InvalidObject messages where Rucio would fail later or never.
 */

/** Rucio's `subscriptions.name` column: String(64). */
const NAME_LENGTH = 64;
/** Rucio's `comments` columns: String(4000). */
export const COMMENTS_LENGTH = 4000;
/** A century of days: longer lifetimes leave every store's range. */
const MAX_LIFETIME_DAYS = 36_500;
/** Rucio's `policyid`: a SmallInteger. */
const PRIORITY_RANGE = [-32_768, 32_767] as const;

const isActivity = (activity: string): boolean => (ACTIVITIES as readonly string[]).includes(activity);

/** A subscription name from the path: 1 to 64 characters, no control characters. */
export const subscriptionName = (name: string): string => {
  if (name === '') throw new InvalidObject('Problem validating subscription: the name is empty');
  return checkText('subscription name', name, NAME_LENGTH);
};

/** An account from the path of a write: an account name, or InvalidObject. */
export const accountName = (account: string): string => {
  if (account.length > NAME_RULES.account.maxLength || !NAME_RULES.account.pattern.test(account)) {
    throw new InvalidObject(`Problem validating account: '${account.slice(0, 50)}' is not an account name`);
  }
  return account;
};

const invalidSubscription = (detail: (refusal: Refusal) => string) => (refusal: Refusal) =>
  new InvalidObject(`Problem validating subscription: ${detail(refusal)}`);

const filter = () => convertedBy(requiredValue(), parseSubscriptionFilter);
const replicationRules = () => convertedBy(requiredValue(), (rules) => parseReplicationRules(rules, isActivity));

const comments = () =>
  orNull(
    refusedAs(
      boundedText('comments', COMMENTS_LENGTH, { multiline: true }),
      invalidSubscription(() => 'comments must be a string'),
    ),
  );

/** A lifetime in days (Rucio's unit); null, false and 0 mean none. */
const lifetimeDays = () =>
  z.preprocess(
    (value) => (value === false || value === 0 ? null : value),
    orNull(
      refusedAs(
        z.number().min(0).max(MAX_LIFETIME_DAYS),
        invalidSubscription(
          ({ input }) =>
            `lifetime must be a number of days between 0 and ${MAX_LIFETIME_DAYS}, not ${JSON.stringify(input)}`,
        ),
      ),
    ),
  );

/** Rucio's `policyid`: an integer; null and false mean unset. */
const priority = () =>
  z.preprocess(
    (value) => (value === false ? null : value),
    orNull(
      refusedAs(
        z.number().refine(Number.isInteger).min(PRIORITY_RANGE[0]).max(PRIORITY_RANGE[1]),
        invalidSubscription(({ input }) => `priority must be a whole number, not ${JSON.stringify(input)}`),
      ),
    ),
  );

/** The `options` object of both subscription bodies: required, a dictionary (TypeError otherwise). */
const optionsObject = () =>
  refusedAs(z.record(z.string(), z.unknown()), () => new TypeError_(`'options' must be a dictionary`));

/**
 * `POST /subscriptions/{account}/{name}`: `filter`, `replication_rules`, `comments` and `lifetime`
 * are required (null allowed where Rucio allows it) and looked for before the values of
 * `comments` and `lifetime` are read; `retroactive`, `dry_run` and `priority` optional (false,
 * false, 3).
 */
const NEW_SUBSCRIPTION_VALUES = z.looseObject({
  filter: z.custom<SubscriptionFilter>(),
  replication_rules: z.custom<SubscriptionRuleTemplate[]>(),
  comments: comments(),
  lifetime: lifetimeDays(),
  retroactive: optionalBoolean(false),
  dry_run: optionalBoolean(false),
  priority: priority(),
});
const NEW_SUBSCRIPTION_OPTIONS = optionsObject().pipe(
  z
    .looseObject({
      filter: filter(),
      replication_rules: replicationRules(),
      comments: requiredValue(),
      lifetime: requiredValue(),
    })
    // Only looked for here: their values are read once every required key is found.
    .transform(
      ({
        filter,
        replication_rules,
        ...options
      }): { [key: string]: unknown; filter: SubscriptionFilter; replication_rules: SubscriptionRuleTemplate[] } => ({
        ...options,
        filter,
        replication_rules,
      }),
    )
    .pipe(NEW_SUBSCRIPTION_VALUES)
    .transform((options): Omit<NewSubscription, 'account' | 'name'> => ({
      filter: options.filter,
      replicationRules: options.replication_rules,
      comments: options.comments,
      lifetimeDays: options.lifetime,
      retroactive: options.retroactive,
      dryRun: options.dry_run,
      priority: options.priority ?? DEFAULT_SUBSCRIPTION_PRIORITY,
    })),
);
export const NEW_SUBSCRIPTION = z
  .looseObject({ options: NEW_SUBSCRIPTION_OPTIONS })
  .transform(({ options }) => options);
export const newSubscriptionSchema = z.object({
  options: NEW_SUBSCRIPTION_VALUES.extend({ filter: z.unknown(), replication_rules: z.array(z.unknown()) }),
});

/** Rucio's `SubscriptionState(value)`: a letter (I, A, ...); the names are taken too. */
const stateOf = (value: unknown): string => {
  const state =
    typeof value === 'string'
      ? (SUBSCRIPTION_STATE_LETTERS[value] ??
        (SUBSCRIPTION_STATES as readonly string[]).find((name) => name === value.toUpperCase()))
      : undefined;
  if (!state)
    throw new InvalidObject(
      `Invalid subscription state: ${typeof value === 'string' ? value.slice(0, 50) : JSON.stringify(value)}`,
    );
  return state;
};

/** Python's truth of a value: null, false, 0, '', [] and {} are false. */
const truthy = (value: unknown) =>
  value !== undefined &&
  value !== null &&
  value !== false &&
  value !== '' &&
  value !== 0 &&
  !(Array.isArray(value) && value.length === 0) &&
  !(typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0);

/** An option of an update that changes nothing unless it is true in Python's sense. */
const whenTruthy = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (truthy(value) ? value : undefined), schema.optional());

/**
 * `PUT /subscriptions/{account}/{name}`: the options Rucio's view reads (`filter`,
 * `replication_rules`, `comments`, `lifetime`, `retroactive`, `priority`, `state`); as Rucio's
 * core, an option that is null, false, empty or absent changes nothing (except `priority: 0`,
 * the highest, which is taken). `dry_run` and other keys are ignored, as Rucio's view ignores
 * them.
 */
const SUBSCRIPTION_UPDATE_VALUES = z.looseObject({
  filter: whenTruthy(filter()),
  replication_rules: whenTruthy(replicationRules()),
  comments: whenTruthy(comments()),
  lifetime: whenTruthy(lifetimeDays()),
  retroactive: whenTruthy(rucioBoolean()),
  priority: priority(),
  state: orNull(convertedBy(z.unknown(), stateOf)),
});
const SUBSCRIPTION_UPDATE_OPTIONS = optionsObject().pipe(
  SUBSCRIPTION_UPDATE_VALUES.transform((options): SubscriptionUpdate => {
    const update: { -readonly [K in keyof SubscriptionUpdate]: SubscriptionUpdate[K] } = { deactivate: false };
    if (options.filter !== undefined) update.filter = options.filter;
    if (options.replication_rules !== undefined) update.replicationRules = options.replication_rules;
    if (options.comments != null) update.comments = options.comments;
    if (options.lifetime != null) update.lifetimeDays = options.lifetime;
    if (options.retroactive === true) update.retroactive = true;
    if (options.priority !== null) update.priority = options.priority;
    if (options.state !== null) update.deactivate = options.state === 'INACTIVE';
    return update;
  }),
);
export const SUBSCRIPTION_UPDATE = z
  .looseObject({ options: SUBSCRIPTION_UPDATE_OPTIONS })
  .transform(({ options }) => options);
export const subscriptionUpdateSchema = z.object({ options: SUBSCRIPTION_UPDATE_VALUES });

/** Rucio's ids: 32 hexadecimal digits. Anything else names nothing. */
export const isRucioId = (id: string): boolean => /^[0-9a-fA-F]{32}$/.test(id);
