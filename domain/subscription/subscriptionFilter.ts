import type { ColumnValue, DidType } from '../did/did.ts';
import { DID_COLUMNS } from '../did/didMetadata.ts';
import { InvalidObject } from '../shared/errors.ts';
import { keyProblem, NAME_RULES } from '../shared/names.ts';
import { isOneOf, isRecord } from '../shared/narrowing.ts';
import { compilePythonRegex, literalPrefix } from './filterPatterns.ts';

/**
 * A subscription's filter (behaviour reference §7; Rucio's `subscription_filter` schema and the
 * transmogrifier's `__is_matching_subscription`): which new datasets and containers get the
 * subscription's rules. Stored as the client gave it; checked when added or updated, compiled
 * once when subscriptions are indexed.
 *
 * - `pattern`: a regular expression matched at the start of the name; `excluded_pattern`: one
 *   that must not match;
 * - `scope`: regular expressions, one of which must match the scope (at its start);
 * - `account`: the DID's owner is one of these; `did_type`: DATASET, CONTAINER;
 * - `min_avg_file_size`, `max_avg_file_size`: bytes per file, ignored while unknown;
 * - `split_rule`: not a condition but how rules are made (one rule per RSE);
 * - any DID metadata column (`datatype`, `project`, `stream_name`, `prod_step`, `provenance`,
 *   `run_number`, ...): one of the values, as a regular expression, matches the column's value
 *   as Python prints it;
 * - hidden DIDs never match.
 */

/** A filter as stored: a JSON object, checked. */
export type SubscriptionFilter = Readonly<Record<string, unknown>>;

/** What a filter looks at of a DID: its identity and every DID_COLUMN value (null when unset). */
export type DidFacts = Readonly<{
  scope: string;
  name: string;
  didType: DidType;
  account: string;
  /** DID_COLUMN metadata by column (`hidden`, `length`, `bytes`, `datatype`, ...), dates as ISO strings. */
  columns: Readonly<Record<string, ColumnValue>>;
}>;

/** Rucio's column width for the filter: String(4000). */
export const MAX_FILTER_LENGTH = 4000;

const LIST_KEYS = new Set(['datatype', 'prod_step', 'stream_name', 'project', 'scope']);
const TEXT_KEYS = new Set(['pattern', 'excluded_pattern', 'group', 'provenance', 'grouping']);
const DID_TYPES: readonly DidType[] = ['DATASET', 'CONTAINER', 'FILE'];
/** Keys that are no condition on a DID (Rucio's schema has `grouping`; `split_rule` says how rules are made). */
const NOT_CONDITIONS = new Set(['split_rule', 'grouping']);
/** `group` in Rucio's schema names the DID column `phys_group`. */
const COLUMN_OF: Readonly<Record<string, string>> = { group: 'phys_group' };
const COLUMNS: ReadonlySet<string> = new Set(DID_COLUMNS);
const DATE_COLUMNS = new Set([
  'created_at',
  'updated_at',
  'expired_at',
  'accessed_at',
  'closed_at',
  'eol_at',
  'deleted_at',
]);

// A declaration, so that the compiler narrows what follows a call (an arrow function's `never` does not).
function problem(message: string): never {
  throw new InvalidObject(`Problem validating subscription filter: ${message}`);
}

const isScalar = (value: unknown): value is string | number | boolean =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

/** A value or list of values as a list (Rucio accepts both for `account`, `did_type` and metadata keys). */
const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

/*
 * The values of a stored filter, read as `parseSubscriptionFilter` checked them when the filter
 * was stored; one that is not (a store edited by hand) is refused as it would have been then.
 */
const textOf = (key: string, value: unknown): string =>
  typeof value === 'string' ? value : problem(`${key} must be a string`);
const scalarOf = (key: string, value: unknown): string | number | boolean =>
  isScalar(value) ? value : problem(`the values of ${key} must be strings, numbers or booleans`);
const didTypeOf = (value: unknown): DidType =>
  isOneOf(DID_TYPES, value) ? value : problem(`did_type ${JSON.stringify(value)} is none of ${DID_TYPES.join(', ')}`);
const bytesOf = (key: string, value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0
    ? value
    : problem(`${key} must be a number of bytes`);

/**
 * Checks a filter as given in a request: a JSON object of known keys with values of their
 * types, valid regular expressions and account names. Throws InvalidObject saying what is wrong.
 */
export const parseSubscriptionFilter = (value: unknown): SubscriptionFilter => {
  if (!isRecord(value)) return problem('filter should be a dict');
  const filter = value;
  if (JSON.stringify(filter).length > MAX_FILTER_LENGTH)
    problem(`the filter is longer than ${MAX_FILTER_LENGTH} characters of JSON`);
  for (const [key, given] of Object.entries(filter)) {
    const keyIssue = keyProblem(key, 255);
    if (keyIssue) problem(`the key ${JSON.stringify(key.slice(0, 50))} ${keyIssue}`);
    if (LIST_KEYS.has(key) && !Array.isArray(given)) problem(`${key} must be an array`);
    if (TEXT_KEYS.has(key) && typeof given !== 'string') problem(`${key} must be a string`);
    switch (key) {
      case 'split_rule':
        if (typeof given !== 'boolean') problem('split_rule must be a boolean');
        continue;
      case 'grouping':
        continue;
      case 'pattern':
      case 'excluded_pattern':
        compilePythonRegex(textOf(key, given), key);
        continue;
      case 'scope':
        for (const scope of asList(given)) {
          if (typeof scope !== 'string' || scope === '')
            problem('scope must be an array of non-empty strings (regular expressions)');
          compilePythonRegex(scope, 'scope');
        }
        continue;
      case 'account':
        for (const account of asList(given)) {
          if (
            typeof account !== 'string' ||
            account.length > NAME_RULES.account.maxLength ||
            !NAME_RULES.account.pattern.test(account)
          ) {
            problem(`account ${JSON.stringify(account)} is not an account name`);
          }
        }
        continue;
      case 'did_type':
        for (const didType of asList(given)) didTypeOf(didType);
        continue;
      case 'min_avg_file_size':
      case 'max_avg_file_size':
        bytesOf(key, given);
        continue;
      default: {
        const column = COLUMN_OF[key] ?? key;
        if (!COLUMNS.has(column)) {
          problem(
            `${JSON.stringify(key)} is neither a filter option nor a DID metadata column: no DID would ever match`,
          );
        }
        const values = asList(given);
        if (values.length === 0) problem(`${key} lists no value: no DID would ever match`);
        for (const item of values) compilePythonRegex(pythonString(scalarOf(key, item)), key);
      }
    }
  }
  return filter;
};

/** How Python's `str()` prints a column value (what Rucio's filter expressions are matched against). */
const pythonString = (value: ColumnValue): string => {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value);
};

/** Python's `str(datetime)`: `2026-11-22 10:00:00`, with microseconds when there are any. */
const pythonDate = (iso: string): string => {
  const [day, time = ''] = iso.replace('Z', '').split('T');
  const [seconds, fraction] = time.split('.');
  return fraction && Number(fraction) !== 0 ? `${day} ${seconds}.${fraction.padEnd(6, '0')}` : `${day} ${seconds}`;
};

const columnText = (did: DidFacts, column: string): string | undefined => {
  if (column === 'scope') return did.scope;
  if (column === 'name') return did.name;
  if (column === 'account') return did.account;
  if (column === 'did_type') return did.didType;
  if (!COLUMNS.has(column)) return undefined;
  const value = did.columns[column] ?? null;
  return typeof value === 'string' && DATE_COLUMNS.has(column) ? pythonDate(value) : pythonString(value);
};

/** A filter ready to test DIDs: regular expressions compiled once. */
export type CompiledFilter = Readonly<{
  matches(did: DidFacts): boolean;
  /** Literal prefixes of the scope expressions (what every matching scope starts with); null when any scope matches. */
  scopePrefixes: readonly string[] | null;
  /** Whether DIDs of the scope may match (the `scope` condition alone). */
  scopeMatches(scope: string): boolean;
  /** The DID types it can match; null when any. */
  didTypes: readonly DidType[] | null;
  splitRule: boolean;
}>;

type Condition = (did: DidFacts) => boolean;

/** Compiles a stored filter (checked when it was stored). */
export const compileFilter = (filter: SubscriptionFilter): CompiledFilter => {
  const conditions: Condition[] = [(did) => did.columns.hidden !== true];
  let scopePrefixes: string[] | null = null;
  let scopeMatches: (scope: string) => boolean = () => true;
  let didTypes: DidType[] | null = null;
  for (const [key, given] of Object.entries(filter)) {
    if (NOT_CONDITIONS.has(key)) continue;
    switch (key) {
      case 'pattern': {
        const matcher = compilePythonRegex(textOf(key, given), key);
        conditions.push((did) => matcher(did.name));
        break;
      }
      case 'excluded_pattern': {
        const matcher = compilePythonRegex(textOf(key, given), key);
        conditions.push((did) => !matcher(did.name));
        break;
      }
      case 'scope': {
        const scopes = asList(given).map((scope) => textOf(key, scope));
        const matchers = scopes.map((scope) => compilePythonRegex(scope, key));
        scopePrefixes = scopes.map(literalPrefix);
        scopeMatches = (scope) => matchers.some((matcher) => matcher(scope));
        conditions.push((did) => scopeMatches(did.scope));
        break;
      }
      case 'account': {
        const accounts = new Set(asList(given).map((account) => textOf(key, account)));
        conditions.push((did) => accounts.has(did.account));
        break;
      }
      case 'did_type': {
        didTypes = [...new Set(asList(given).map(didTypeOf))];
        const types = new Set(didTypes);
        conditions.push((did) => types.has(did.didType));
        break;
      }
      case 'min_avg_file_size':
      case 'max_avg_file_size': {
        const bound = bytesOf(key, given);
        conditions.push((did) => {
          const length = did.columns.length;
          const bytes = did.columns.bytes;
          // Unknown sizes (a DID judged at its creation) ignore the condition, as Rucio does.
          if (typeof length !== 'number' || typeof bytes !== 'number' || length === 0 || bytes === 0) return true;
          const average = bytes / length;
          return key === 'min_avg_file_size' ? average >= bound : average <= bound;
        });
        break;
      }
      default: {
        const column = COLUMN_OF[key] ?? key;
        const matchers = asList(given).map((value) => compilePythonRegex(pythonString(scalarOf(key, value)), key));
        conditions.push((did) => {
          const text = columnText(did, column);
          return text !== undefined && matchers.some((matcher) => matcher(text));
        });
      }
    }
  }
  return {
    matches: (did) => conditions.every((condition) => condition(did)),
    scopePrefixes,
    scopeMatches: (scope) => scopeMatches(scope),
    didTypes,
    splitRule: filter.split_rule === true,
  };
};
