import { Query } from 'mingo';
import { update as mingoUpdate, type Modifier } from 'mingo/updater';
import { randomUUID } from 'node:crypto';
import type { Document, Filter, Selected, SortSpec, Update } from './readStore.ts';
import { isObject, isRecord } from '../typeGuards.ts';

/**
 * Document logic the embedded adapter shares: MongoDB's query semantics come from mingo, so what
 * SQL cannot express is matched exactly as MongoDB would.
 */

export const getPath = (document: unknown, path: string): unknown => {
  let value: unknown = document;
  for (const part of path.split('.')) {
    if (!isObject(value)) return undefined;
    value = value[part];
  }
  return value;
};

/**
 * A stored document as the type its collection was opened with. A collection holds only what
 * code opening it with that type wrote (a projection writes its documents, its query module reads
 * them), so the collection's type parameter is the claim, made where the collection is opened;
 * the adapters hand every document back through here rather than cast where they read it.
 */
export const asDocument = <T extends Document>(stored: unknown): T =>
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- a collection's type parameter names what its writers stored (see above)
  stored as T;

/** The fields of a document a `select` asks for, missing ones as null. */
export const selectedOf = <T extends Document, K extends keyof T & string>(
  document: T,
  fields: readonly K[],
): Selected<T, K> => {
  const selected: Record<string, unknown> = { _id: document._id };
  for (const field of fields) selected[field] = document[field] ?? null;
  // The record holds exactly the fields asked for, each of its type or null.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- built field by field from T just above
  return selected as Selected<T, K>;
};

export const compileFilter = (filter: Filter): ((document: Document) => boolean) => {
  if (Object.keys(filter).length === 0) return () => true;
  const query = new Query(filter, {});
  return (document) => query.test(document);
};

const SUPPORTED_UPDATE_OPERATORS = new Set(['$set', '$unset', '$inc', '$push', '$pull', '$addToSet', '$setOnInsert']);

/** Applies a MongoDB update to a copy of `document`; `inserting` also applies `$setOnInsert`. */
export const applyUpdate = <T extends Document>(document: T, update: Update, inserting: boolean): T => {
  const { $setOnInsert, ...modifier } = update;
  for (const operator of Object.keys(update)) {
    if (!SUPPORTED_UPDATE_OPERATORS.has(operator)) throw new Error(`Unsupported update operator ${operator}`);
  }
  const updated = structuredClone(document);
  // mingo changes the copy in place; what an update makes of a document is still a T, as the
  // collection's writers promise.
  const apply = (modifier: Modifier<Record<string, unknown>>) =>
    mingoUpdate<Record<string, unknown>>(updated, modifier, undefined, undefined, { cloneMode: 'deep' });
  if (Object.keys(modifier).length > 0) apply(mingoModifier(modifier));
  if (inserting && $setOnInsert) apply({ $set: $setOnInsert });
  if (updated._id !== document._id) throw new Error('An update may not change _id');
  return updated;
};

/** MongoDB's update operators as mingo types them (it reads only the paths of `$unset`). */
const mingoModifier = ({ $unset, ...operators }: Omit<Update, '$setOnInsert'>): Modifier<Record<string, unknown>> => ({
  ...operators,
  ...($unset ? { $unset: Object.fromEntries(Object.keys($unset).map((path) => [path, ''] as const)) } : {}),
});

/** The document an upsert starts from: `_id` and the equality conditions of the filter. */
export const upsertSeed = (filter: Filter): Document => {
  const seed: Record<string, unknown> = {};
  for (const [key, condition] of Object.entries(filter)) {
    if (key.startsWith('$')) continue;
    const isOperatorObject =
      isRecord(condition) && !(condition instanceof RegExp) && Object.keys(condition).some((k) => k.startsWith('$'));
    const value = isOperatorObject ? condition.$eq : condition;
    if (value === undefined || value instanceof RegExp) continue;
    setPath(seed, key, value);
  }
  return { ...seed, _id: typeof seed._id === 'string' ? seed._id : randomUUID() };
};

const setPath = (target: Record<string, unknown>, path: string, value: unknown): void => {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const child = node[part];
    if (isObject(child)) {
      node = child;
    } else {
      const created: Record<string, unknown> = {};
      node[part] = created;
      node = created;
    }
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
