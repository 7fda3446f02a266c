import type { NewSubscription, SubscriptionUpdate } from '../../../commands/subscription/subscriptionCommands.ts';
import { checkText } from '../../../domain/shared/limits.ts';
import { InvalidObject, TypeError_ } from '../../../domain/shared/errors.ts';
import { NAME_RULES } from '../../../domain/shared/names.ts';
import {
  DEFAULT_SUBSCRIPTION_PRIORITY,
  SUBSCRIPTION_STATE_LETTERS,
  SUBSCRIPTION_STATES,
} from '../../../domain/subscription/subscription.ts';
import { parseSubscriptionFilter } from '../../../domain/subscription/subscriptionFilter.ts';
import { parseReplicationRules } from '../../../domain/subscription/subscriptionRules.ts';
import { requiredKey, rucioBooleanOf } from '../../params.ts';
import { ACTIVITIES } from '../rule/ruleParams.ts';
import { isRecord } from '../../../domain/shared/narrowing.ts';

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

/** The `options` object of both subscription bodies; a body without it is KeyError, one of another type TypeError. */
export const subscriptionOptions = (body: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const options = requiredKey(body, 'options');
  if (!isRecord(options)) throw new TypeError_(`'options' must be a dictionary`);
  return options;
};

const comments = (value: unknown): string | null => {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw new InvalidObject('Problem validating subscription: comments must be a string');
  return checkText('comments', value, COMMENTS_LENGTH, { multiline: true });
};

/** A lifetime in days (Rucio's unit); null, false and 0 mean none. */
const lifetimeDays = (value: unknown): number | null => {
  if (value === null || value === false || value === 0 || value === undefined) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_LIFETIME_DAYS) {
    throw new InvalidObject(
      `Problem validating subscription: lifetime must be a number of days between 0 and ${MAX_LIFETIME_DAYS}, not ${JSON.stringify(value)}`,
    );
  }
  return value;
};

/** Rucio's `policyid`: an integer; unset means 3. */
const priority = (value: unknown): number | undefined => {
  if (value === null || value === undefined || value === false) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < PRIORITY_RANGE[0] || value > PRIORITY_RANGE[1]) {
    throw new InvalidObject(
      `Problem validating subscription: priority must be a whole number, not ${JSON.stringify(value)}`,
    );
  }
  return value;
};

/**
 * `POST /subscriptions/{account}/{name}`: `filter`, `replication_rules`, `comments` and `lifetime`
 * are required (null allowed where Rucio allows it), `retroactive`, `dry_run` and `priority`
 * optional (false, false, 3).
 */
export const newSubscriptionOf = (
  account: string,
  name: string,
  body: Readonly<Record<string, unknown>>,
): NewSubscription => {
  const options = subscriptionOptions(body);
  const filter = parseSubscriptionFilter(requiredKey(options, 'filter'));
  const replicationRules = parseReplicationRules(requiredKey(options, 'replication_rules'), isActivity);
  const given = { comments: requiredKey(options, 'comments'), lifetime: requiredKey(options, 'lifetime') };
  return {
    account: accountName(account),
    name: subscriptionName(name),
    filter,
    replicationRules,
    comments: comments(given.comments),
    lifetimeDays: lifetimeDays(given.lifetime),
    retroactive:
      options.retroactive === undefined || options.retroactive === null
        ? false
        : rucioBooleanOf(options.retroactive, 'retroactive'),
    dryRun:
      options.dry_run === undefined || options.dry_run === null ? false : rucioBooleanOf(options.dry_run, 'dry_run'),
    priority: priority(options.priority) ?? DEFAULT_SUBSCRIPTION_PRIORITY,
  };
};

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

/**
 * `PUT /subscriptions/{account}/{name}`: the options Rucio's view reads (`filter`,
 * `replication_rules`, `comments`, `lifetime`, `retroactive`, `priority`, `state`); as Rucio's
 * core, an option that is null, false, empty or absent changes nothing (except `priority: 0`,
 * the highest, which is taken). `dry_run` and other keys are ignored, as Rucio's view ignores
 * them.
 */
export const subscriptionUpdateOf = (body: Readonly<Record<string, unknown>>): SubscriptionUpdate => {
  const options = subscriptionOptions(body);
  const truthy = (value: unknown) =>
    value !== undefined &&
    value !== null &&
    value !== false &&
    value !== '' &&
    value !== 0 &&
    !(Array.isArray(value) && value.length === 0) &&
    !(typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0);
  const update: { -readonly [K in keyof SubscriptionUpdate]: SubscriptionUpdate[K] } = { deactivate: false };
  if (truthy(options.filter)) update.filter = parseSubscriptionFilter(options.filter);
  if (truthy(options.replication_rules))
    update.replicationRules = parseReplicationRules(options.replication_rules, isActivity);
  if (truthy(options.comments)) update.comments = comments(options.comments) ?? undefined;
  if (truthy(options.lifetime)) update.lifetimeDays = lifetimeDays(options.lifetime) ?? undefined;
  if (truthy(options.retroactive) && rucioBooleanOf(options.retroactive, 'retroactive')) update.retroactive = true;
  const newPriority = priority(options.priority);
  if (newPriority !== undefined) update.priority = newPriority;
  if (options.state !== undefined && options.state !== null) update.deactivate = stateOf(options.state) === 'INACTIVE';
  return update;
};

/** Rucio's ids: 32 hexadecimal digits. Anything else names nothing. */
export const isRucioId = (id: string): boolean => /^[0-9a-fA-F]{32}$/.test(id);
