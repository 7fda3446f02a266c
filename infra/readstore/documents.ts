import { Query } from 'mingo';
import { update as mingoUpdate } from 'mingo/updater';
import { randomUUID } from 'node:crypto';
import type { Document, Filter, SortSpec, Update } from './readStore.ts';

/**
 * Document logic the embedded adapter shares: MongoDB's query semantics come from mingo, so what
 * SQL cannot express is matched exactly as MongoDB would.
 */

export const getPath = (document: unknown, path: string): unknown => {
  let value: unknown = document;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
};

export const compileFilter = (filter: Filter): ((document: Document) => boolean) => {
  if (Object.keys(filter).length === 0) return () => true;
  const query = new Query(filter as Record<string, unknown>, {});
  return (document) => query.test(document);
};

const SUPPORTED_UPDATE_OPERATORS = new Set(['$set', '$unset', '$inc', '$push', '$pull', '$addToSet', '$setOnInsert']);

/** Applies a MongoDB update to a copy of `document`; `inserting` also applies `$setOnInsert`. */
export const applyUpdate = <T extends Document>(document: T, update: Update, inserting: boolean): T => {
  const { $setOnInsert, ...modifier } = update;
  for (const operator of Object.keys(update)) {
    if (!SUPPORTED_UPDATE_OPERATORS.has(operator)) throw new Error(`Unsupported update operator ${operator}`);
  }
  const updated = structuredClone(document) as Record<string, unknown>;
  if (Object.keys(modifier).length > 0)
    mingoUpdate(updated, modifier as never, undefined, undefined, { cloneMode: 'deep' });
  if (inserting && $setOnInsert)
    mingoUpdate(updated, { $set: $setOnInsert } as never, undefined, undefined, { cloneMode: 'deep' });
  if (updated._id !== document._id) throw new Error('An update may not change _id');
  return updated as T;
};

/** The document an upsert starts from: `_id` and the equality conditions of the filter. */
export const upsertSeed = (filter: Filter): Document => {
  const seed: Record<string, unknown> = {};
  for (const [key, condition] of Object.entries(filter)) {
    if (key.startsWith('$')) continue;
    const isOperatorObject =
      condition !== null &&
      typeof condition === 'object' &&
      !Array.isArray(condition) &&
      !(condition instanceof RegExp) &&
      Object.keys(condition).some((k) => k.startsWith('$'));
    const value = isOperatorObject ? (condition as Record<string, unknown>).$eq : condition;
    if (value === undefined || value instanceof RegExp) continue;
    setPath(seed, key, value);
  }
  if (typeof seed._id !== 'string') seed._id = randomUUID();
  return seed as Document;
};

const setPath = (target: Record<string, unknown>, path: string, value: unknown): void => {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (node[part] === null || typeof node[part] !== 'object') node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
};

/** MongoDB's cross-type order for sorting: null/missing < numbers < strings < objects < arrays < booleans. */
const typeRank = (value: unknown): number => {
  if (value === undefined || value === null) return 1;
  if (typeof value === 'number') return 2;
  if (typeof value === 'string') return 3;
  if (Array.isArray(value)) return 5;
  if (typeof value === 'object') return 4;
  if (typeof value === 'boolean') return 6;
  return 7;
};

export const compareValues = (a: unknown, b: unknown): number => {
  const rankA = typeRank(a);
  const rankB = typeRank(b);
  if (rankA !== rankB) return rankA - rankB;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') {
    // Byte order of UTF-8, as MongoDB's default collation and SQLite's BINARY compare strings.
    return Buffer.compare(Buffer.from(a), Buffer.from(b));
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (rankA === 4 || rankA === 5) return compareValues(JSON.stringify(a), JSON.stringify(b));
  return 0;
};

export const compareBySort =
  (sort: SortSpec) =>
  (a: Document, b: Document): number => {
    for (const [path, direction] of Object.entries(sort)) {
      const order = compareValues(getPath(a, path), getPath(b, path));
      if (order !== 0) return order * direction;
    }
    return compareValues(a._id, b._id);
  };
