import { wildcardRegexSource } from '../../domain/shared/wildcards.ts';
import type { Criterion, DidSearch, FilterValue } from '../../domain/did/didSearch.ts';
import type { Filter } from '../../infra/readstore/readStore.ts';
import { didContentsCollection, EDGE_ORDER, edgesOf, type ContentDocument } from './didContentsProjection.ts';
import { didsCollection, type DidDocument } from './didsProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { numberOrNull } from '../../domain/shared/narrowing.ts';

/**
 * Answers a planned DID search (domain/did/didSearch.ts) from the DID read model with one MongoDB
 * filter: an OR of the groups, each an AND of the scope, the types and the criteria. Scope, type,
 * name, length, bytes and creation time are indexed; a name pattern with a literal start becomes an
 * index range; other metadata is matched among what the indexed criteria select.
 */

/** DID columns holding text: a number in a filter means its digits there, as SQL compares it. */
const TEXT_COLUMNS = new Set([
  'name',
  'md5',
  'adler32',
  'guid',
  'project',
  'datatype',
  'stream_name',
  'prod_step',
  'version',
  'campaign',
  'provenance',
  'phys_group',
]);

/** SQL LIKE with `*` and `%` as wildcards and every other character literal, anchored at both ends, without backtracking. */
export const likePattern = (pattern: string): RegExp => new RegExp(wildcardRegexSource(pattern, /[*%]/));

const stored = (value: FilterValue, key: string, plugin: DidSearch['plugin']): unknown => {
  if (value instanceof Date) return value.toISOString();
  if (plugin === 'DID_COLUMN' && typeof value === 'number' && TEXT_COLUMNS.has(key)) return String(value);
  return value;
};

const fieldOf = (key: string, plugin: DidSearch['plugin']): string =>
  plugin === 'DID_COLUMN' || key === 'name' || key === 'scope' ? key : `meta.${key}`;

const criterionFilter = (criterion: Criterion, plugin: DidSearch['plugin']): Filter => {
  const field = fieldOf(criterion.key, plugin);
  const value = stored(criterion.value, criterion.key, plugin);
  // A JSON key that is absent compares as SQL NULL: it matches no criterion, `ne` included.
  const present: Filter = field.startsWith('meta.') ? { [field]: { $ne: null } } : {};
  if (criterion.pattern) {
    const regex = likePattern(String(criterion.value));
    return criterion.operator === 'eq'
      ? { [field]: { $regex: regex } }
      : { $and: [present, { [field]: { $not: regex } }] };
  }
  switch (criterion.operator) {
    case 'eq':
      return { [field]: value };
    case 'ne':
      return { $and: [present, { [field]: { $ne: value } }] };
    default:
      return { [field]: { [`$${criterion.operator}`]: value } };
  }
};

/**
 * The MongoDB filter of a search in one scope. Rucio also excludes suppressed DIDs; nothing in dms
 * can suppress a DID (the column is reserved), so that condition would only cost an index.
 */
export const searchFilter = (search: DidSearch, scope: string): Filter => {
  const groups = search.groups.map((group) => {
    const conditions: Filter[] = [{ scope }];
    if (search.plugin === 'DID_COLUMN') conditions.push({ did_type: { $in: [...group.didTypes] } });
    else conditions.push({ meta: { $ne: null } });
    for (const criterion of group.criteria) conditions.push(criterionFilter(criterion, search.plugin));
    return { $and: conditions };
  });
  return groups.length === 1 ? groups[0]! : { $or: groups };
};

export type SearchHit = Readonly<{
  scope: string;
  name: string;
  did_type: string | null;
  bytes: number | null;
  length: number | null;
}>;

/**
 * Runs a search, lazily. With `recursive`, the children of every matching collection are searched
 * too, each under the same criteria with its own name, before the matches themselves (Rucio's
 * order); every DID comes out once.
 */
export async function* runDidSearch(
  readModels: ReadModels,
  search: DidSearch,
  scope: string,
  options: { limit?: number; recursive: boolean },
  seen: Set<string> = new Set(),
): AsyncGenerator<SearchHit> {
  const dids = readModels.collection<DidDocument>(didsCollection);
  const query = () => dids.find(searchFilter(search, scope), options.limit ? { limit: options.limit } : {});
  if (options.recursive) {
    const contents = readModels.collection<ContentDocument>(didContentsCollection);
    const children: { scope: string; name: string }[] = [];
    for await (const did of query()) {
      if (did.did_type === 'FILE') continue;
      for await (const child of contents.find(edgesOf(did._id), { sort: EDGE_ORDER })) children.push(child);
    }
    for (const child of children) {
      const named: DidSearch = {
        ...search,
        groups: search.groups.map((group) => ({
          ...group,
          criteria: [
            ...group.criteria.filter((criterion) => criterion.key !== 'name'),
            { key: 'name', operator: 'eq', value: child.name, pattern: false },
          ],
        })),
      };
      yield* runDidSearch(readModels, named, child.scope, options, seen);
    }
  }
  for await (const did of query()) {
    if (seen.has(did._id)) continue;
    seen.add(did._id);
    yield search.plugin === 'JSON'
      ? { scope: did.scope, name: did.name, did_type: null, bytes: null, length: null }
      : {
          scope: did.scope,
          name: did.name,
          did_type: did.did_type,
          bytes: numberOrNull(did.bytes),
          length: numberOrNull(did.length),
        };
  }
}
