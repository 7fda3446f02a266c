import { parseFilterDate } from '../shared/dates.ts';
import {
  DIDFilterSyntaxError,
  InvalidMetadata,
  KeyNotFound,
  UnsupportedOperation,
  ValueError,
} from '../shared/errors.ts';
import { parsePythonLiteral, PythonLiteralError } from '../shared/pythonLiteral.ts';
import { LIMITS } from '../shared/limits.ts';
import { keyProblem } from '../shared/names.ts';
import { isKeyOf, isOneOf, keysOf } from '../shared/narrowing.ts';
import type { DidType } from './did.ts';
import { DID_COLUMNS, managedByDidColumn } from './didMetadata.ts';

/**
 * The meaning of a DID search (Rucio's `list_dids`, lib/rucio/core/did_meta_plugins/
 * filter_engine.py): `filters` is a list of OR-ed groups of AND-ed criteria `key[.operator]:
 * value`. All keys must belong to one metadata plugin; values given as text are typed as Rucio
 * types them. The result is plain data that a read model turns into a query.
 */

export type SearchTypeName = 'all' | 'collection' | 'container' | 'dataset' | 'file';
export type FilterOperator = 'eq' | 'ne' | 'gt' | 'lt' | 'gte' | 'lte';
export type FilterValue = string | number | boolean | null | Date;

/** `pattern`: a value with `*` or `%` wildcards (SQL LIKE semantics, `_` literal). */
export type Criterion = Readonly<{ key: string; operator: FilterOperator; value: FilterValue; pattern: boolean }>;
export type SearchGroup = Readonly<{ didTypes: readonly DidType[]; criteria: readonly Criterion[] }>;
export type DidSearch = Readonly<{ plugin: 'DID_COLUMN' | 'JSON'; groups: readonly SearchGroup[] }>;

const TYPES: Readonly<Record<SearchTypeName, readonly DidType[]>> = {
  all: ['CONTAINER', 'DATASET', 'FILE'],
  collection: ['CONTAINER', 'DATASET'],
  container: ['CONTAINER'],
  dataset: ['DATASET'],
  file: ['FILE'],
};

/** The type names a search takes, in Rucio's order (what its error lists). */
export const SEARCH_TYPE_NAMES = keysOf(TYPES);

/** The operators a key names after a dot; a key without one means `eq`. */
const SUFFIX_OPERATORS: readonly FilterOperator[] = ['gte', 'lte', 'lt', 'gt', 'ne'];

const isFilterValue = (value: unknown): value is FilterValue =>
  value === null || ['string', 'number', 'boolean'].includes(typeof value) || value instanceof Date;

const VALID_DATE_FORMATS =
  "('%Y-%m-%d %H:%M:%S', '%Y-%m-%dT%H:%M:%S', '%Y-%m-%d %H:%M:%S.%fZ', '%Y-%m-%dT%H:%M:%S.%fZ', '%a, %d %b %Y %H:%M:%S UTC')";

const COLUMN_NAMES: ReadonlySet<string> = new Set(DID_COLUMNS);

/** Picks the one plugin every key (but `name`, which all plugins know) belongs to. */
const searchPlugin = (groups: readonly Readonly<Record<string, unknown>>[]): DidSearch['plugin'] => {
  const plugins = new Set<DidSearch['plugin']>();
  for (const group of groups) {
    for (const key of Object.keys(group)) {
      if (key === 'name') continue;
      plugins.add(managedByDidColumn(key.split('.')[0]!) ? 'DID_COLUMN' : 'JSON');
    }
  }
  if (plugins.size > 1) throw new InvalidMetadata('Filter keys used do not all belong to the same metadata plugin.');
  return plugins.has('JSON') ? 'JSON' : 'DID_COLUMN';
};

export const planDidSearch = (groups: readonly Readonly<Record<string, unknown>>[], didType: string): DidSearch => {
  const plugin = searchPlugin(groups);
  return {
    plugin,
    groups: groups.map((group) => {
      const { type, ...rest } = group;
      // The JSON plugin knows no types: it matches DIDs of every type.
      const typeName = plugin === 'JSON' ? 'all' : String(type ?? didType).toLowerCase();
      const didTypes = isKeyOf(TYPES, typeName) ? TYPES[typeName] : undefined;
      if (!didTypes) {
        throw new UnsupportedOperation(
          `${typeName} is not a valid type. Valid types are dict_keys([${SEARCH_TYPE_NAMES.map((name) => `'${name}'`).join(', ')}])`,
        );
      }
      return { didTypes, criteria: groupCriteria(rest, plugin) };
    }),
  };
};

const groupCriteria = (group: Readonly<Record<string, unknown>>, plugin: DidSearch['plugin']): Criterion[] => {
  const criteria: Criterion[] = [];
  for (const [rawKey, rawValue] of Object.entries(group)) {
    const problem = keyProblem(rawKey, LIMITS.metadataKeyLength);
    if (problem) throw new DIDFilterSyntaxError(`The filter key ${JSON.stringify(rawKey)} ${problem}.`);
    // Rucio once had created_after/before; both are kept (Rucio itself drops the second).
    const renamed =
      rawKey === 'created_after' ? 'created_at.gte' : rawKey === 'created_before' ? 'created_at.lte' : rawKey;
    const [key = '', suffix, ...extra] = renamed.split('.');
    if (extra.length > 0) throw new DIDFilterSyntaxError(`Syntax error in filter key '${rawKey}'`);
    if (plugin === 'DID_COLUMN' && !COLUMN_NAMES.has(key)) {
      throw new KeyNotFound(`'${key}' keyword could not be coerced to model class attribute. Attribute not found.`);
    }
    if (suffix !== undefined && !isOneOf(SUFFIX_OPERATORS, suffix))
      throw new DIDFilterSyntaxError(`Unknown operator '${suffix}' in filter key '${rawKey}'`);
    const operator = suffix ?? 'eq';
    if (!isFilterValue(rawValue))
      throw new DIDFilterSyntaxError(`Filter values must be single values, not ${JSON.stringify(rawValue)}`);
    const value = typeof rawValue === 'string' ? typecast(rawValue) : rawValue;
    const pattern = typeof value === 'string' && /[*%]/.test(value);
    checkCriterion(key, operator, value, pattern);
    // A lone wildcard means "anything": no criterion at all.
    if (pattern && (value === '*' || value === '%')) continue;
    criteria.push({ key, operator, value, pattern });
  }
  return criteria;
};

/** Rucio's sanity checks (FilterEngine._sanity_check_translated_filters). */
const checkCriterion = (key: string, operator: FilterOperator, value: FilterValue, pattern: boolean): void => {
  if (key === 'name' && operator !== 'eq' && operator !== 'ne')
    throw new ValueError('Name operator must be an equality operator.');
  if (key === 'length' && !(typeof value === 'number' && Number.isInteger(value)))
    throw new ValueError('Length has to be an integer value.');
  if (pattern && operator !== 'eq' && operator !== 'ne')
    throw new DIDFilterSyntaxError('Wildcards can only be used with equality operators');
  if (key === 'created_at' && !(value instanceof Date)) {
    throw new DIDFilterSyntaxError(`Couldn't parse date '${String(value)}'. Valid formats are: ${VALID_DATE_FORMATS}`);
  }
};

/**
 * Text values are typed as Rucio types them: booleans, dates in the accepted formats, and Python
 * literals (numbers, None, quoted strings) unless the text holds an arithmetic sign.
 */
export const typecast = (text: string): FilterValue => {
  if (text === 'true' || text === 'True' || text === 'TRUE') return true;
  if (text === 'false' || text === 'False' || text === 'FALSE') return false;
  const date = parseFilterDate(text);
  if (date) return date;
  if (/[+\-*/]/.test(text)) return text;
  try {
    const value = parsePythonLiteral(text);
    return value === null || typeof value !== 'object' ? value : text;
  } catch (error) {
    if (error instanceof PythonLiteralError) return text;
    throw error;
  }
};
