import type { Filter } from '../readStore.ts';
import { encodeScalar, type ColumnValue } from './columns.ts';
import { isRecord } from '../../typeGuards.ts';

/**
 * Translates a MongoDB filter into a SQL WHERE clause over indexed columns.
 *
 * `exact` says whether the clause selects exactly the matching documents. When a part of the
 * filter cannot be expressed (a field without a column, `$exists`, a non-prefix regex, ...), that
 * part becomes TRUE, the clause selects a superset, and the caller checks every candidate with
 * mingo. Supersets compose: an AND or OR of supersets is a superset of the AND or OR.
 */
export type SqlFilter = Readonly<{ where: string; params: ColumnValue[]; exact: boolean }>;

/** Maps a field path to its quoted column, or undefined when the field is not indexed. */
export type ColumnLookup = (path: string) => string | undefined;

const ALWAYS: SqlFilter = { where: '1', params: [], exact: true };
const SUPERSET: SqlFilter = { where: '1', params: [], exact: false };

export const filterToSql = (filter: Filter, columnOf: ColumnLookup): SqlFilter =>
  and(Object.entries(filter).map(([key, condition]) => translateEntry(key, condition, columnOf)));

const translateEntry = (key: string, condition: unknown, columnOf: ColumnLookup): SqlFilter => {
  if (key === '$and' && Array.isArray(condition)) {
    return and(condition.map((sub) => subFilterToSql(sub, columnOf)));
  }
  if (key === '$or' && Array.isArray(condition)) {
    return or(condition.map((sub) => subFilterToSql(sub, columnOf)));
  }
  if (key.startsWith('$')) return SUPERSET;
  const column = columnOf(key);
  if (!column) return SUPERSET;
  if (isOperatorObject(condition)) {
    return and(
      Object.entries(condition).map(([operator, operand]) => translateOperator(column, operator, operand, condition)),
    );
  }
  if (condition instanceof RegExp) return regexFilter(column, condition.source, condition.flags);
  return equals(column, condition);
};

/** A member of `$and` or `$or`; one that is no filter object is left to mingo, which refuses it. */
const subFilterToSql = (filter: unknown, columnOf: ColumnLookup): SqlFilter =>
  isRecord(filter) ? filterToSql(filter, columnOf) : SUPERSET;

const isOperatorObject = (value: unknown): value is Record<string, unknown> =>
  value !== null &&
  typeof value === 'object' &&
  !Array.isArray(value) &&
  !(value instanceof RegExp) &&
  Object.keys(value).length > 0 &&
  Object.keys(value).every((key) => key.startsWith('$'));

const translateOperator = (
  column: string,
  operator: string,
  operand: unknown,
  siblings: Record<string, unknown>,
): SqlFilter => {
  switch (operator) {
    case '$eq':
      return equals(column, operand);
    case '$ne':
      return notEquals(column, operand);
    case '$in':
      return Array.isArray(operand) ? inList(column, operand) : SUPERSET;
    case '$nin':
      return Array.isArray(operand) ? notInList(column, operand) : SUPERSET;
    case '$gt':
      return range(column, '>', operand);
    case '$gte':
      return range(column, '>=', operand);
    case '$lt':
      return range(column, '<', operand);
    case '$lte':
      return range(column, '<=', operand);
    case '$regex': {
      const flags = typeof siblings.$options === 'string' ? siblings.$options : '';
      if (operand instanceof RegExp) return regexFilter(column, operand.source, operand.flags + flags);
      return typeof operand === 'string' ? regexFilter(column, operand, flags) : SUPERSET;
    }
    case '$options':
      return ALWAYS;
    default:
      return SUPERSET;
  }
};

const equals = (column: string, value: unknown): SqlFilter => {
  const encoded = encodeScalar(value);
  if (encoded === undefined) return SUPERSET;
  if (encoded === null) return { where: `${column} IS NULL`, params: [], exact: true };
  return { where: `${column} = ?`, params: [encoded], exact: true };
};

/** `$ne` also matches documents whose field is missing or null, as in MongoDB. */
const notEquals = (column: string, value: unknown): SqlFilter => {
  const encoded = encodeScalar(value);
  if (encoded === undefined) return SUPERSET;
  if (encoded === null) return { where: `${column} IS NOT NULL`, params: [], exact: true };
  return { where: `(${column} IS NULL OR ${column} != ?)`, params: [encoded], exact: true };
};

const splitList = (values: unknown[]): { encoded: ColumnValue[]; hasNull: boolean } | undefined => {
  const encoded: ColumnValue[] = [];
  let hasNull = false;
  for (const value of values) {
    const item = encodeScalar(value);
    if (item === undefined) return undefined;
    if (item === null) hasNull = true;
    else encoded.push(item);
  }
  return { encoded, hasNull };
};

const inList = (column: string, values: unknown[]): SqlFilter => {
  const list = splitList(values);
  if (!list) return SUPERSET;
  const parts: string[] = [];
  if (list.encoded.length > 0) parts.push(`${column} IN (${list.encoded.map(() => '?').join(', ')})`);
  if (list.hasNull) parts.push(`${column} IS NULL`);
  if (parts.length === 0) return { where: '0', params: [], exact: true };
  return { where: `(${parts.join(' OR ')})`, params: list.encoded, exact: true };
};

const notInList = (column: string, values: unknown[]): SqlFilter => {
  const list = splitList(values);
  if (!list) return SUPERSET;
  const notIn = list.encoded.length > 0 ? `${column} NOT IN (${list.encoded.map(() => '?').join(', ')})` : '1';
  const where = list.hasNull ? `(${column} IS NOT NULL AND ${notIn})` : `(${column} IS NULL OR ${notIn})`;
  return { where, params: list.encoded, exact: true };
};

/** MongoDB compares only within a type bracket: strings with strings, numbers with numbers. */
const range = (column: string, sqlOperator: string, value: unknown): SqlFilter => {
  if (typeof value === 'string') {
    return { where: `(typeof(${column}) = 'text' AND ${column} ${sqlOperator} ?)`, params: [value], exact: true };
  }
  if (typeof value === 'number' && Number.isFinite(value)) {
    return {
      where: `(typeof(${column}) IN ('integer', 'real') AND ${column} ${sqlOperator} ?)`,
      params: [value],
      exact: true,
    };
  }
  return SUPERSET;
};

const REGEX_SPECIALS = /[\\^$.*+?()[\]{}|]/;

/**
 * A regex narrows to text values; one anchored on a literal prefix (`^user\.abc`) becomes a range
 * scan on the index. mingo checks the candidates either way.
 */
const regexFilter = (column: string, source: string, flags: string): SqlFilter => {
  const textOnly = { where: `typeof(${column}) = 'text'`, params: [] as ColumnValue[], exact: false };
  const hasAlternation = /(^|[^\\])\|/.test(source);
  if (!source.startsWith('^') || hasAlternation || flags.includes('i') || flags.includes('m')) return textOnly;
  let prefix = '';
  for (let index = 1; index < source.length; index += 1) {
    const char = source[index]!;
    if (char === '\\' && index + 1 < source.length && REGEX_SPECIALS.test(source[index + 1]!)) {
      prefix += source[index + 1];
      index += 1;
      continue;
    }
    if (REGEX_SPECIALS.test(char)) {
      // A quantifier applies to the character before it, which is then not part of the prefix.
      if ('*?{'.includes(char) && prefix.length > 0) prefix = prefix.slice(0, -1);
      break;
    }
    prefix += char;
  }
  if (prefix.length === 0) return textOnly;
  return {
    where: `(typeof(${column}) = 'text' AND ${column} >= ? AND ${column} < ?)`,
    params: [prefix, prefixUpperBound(prefix)],
    exact: false,
  };
};

/** The smallest string greater than every string that starts with `prefix`. */
const prefixUpperBound = (prefix: string): string => prefix + '\u{10FFFF}';

const and = (parts: SqlFilter[]): SqlFilter => {
  const meaningful = parts.filter((part) => part.where !== '1');
  const exact = parts.every((part) => part.exact);
  if (meaningful.length === 0) return { where: '1', params: [], exact };
  return {
    where: meaningful.map((part) => part.where).join(' AND '),
    params: meaningful.flatMap((part) => part.params),
    exact,
  };
};

const or = (parts: SqlFilter[]): SqlFilter => {
  if (parts.length === 0) return SUPERSET;
  const exact = parts.every((part) => part.exact);
  if (parts.some((part) => part.where === '1')) return { where: '1', params: [], exact };
  return {
    where: `(${parts.map((part) => `(${part.where})`).join(' OR ')})`,
    params: parts.flatMap((part) => part.params),
    exact,
  };
};
