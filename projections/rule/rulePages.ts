import { RULE_STATE_LETTERS, RULE_STATES, type RuleState } from '../../domain/rule/rule.ts';
import { InvalidValueForKey } from '../../domain/shared/errors.ts';
import type { Filter } from '../../infra/readstore/readStore.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { rulesCollection, type RuleDocument } from './ruleProjection.ts';

/**
 * The console's rule list: every rule of the system, newest first, filtered by state, account,
 * activity, RSE expression or scope, a page at a time from a cursor. The cursor is the last row's
 * `created_at` and id, and each filter has an index that starts with it and goes on with
 * `created_at` and `_id` (ruleProjection.ts), so a page reads about as many index entries as it
 * shows, whatever the number of rules and however deep the page (test/projections/rulePages.test.ts
 * counts it over 100 000 rules).
 */

export type RulePageFilters = Readonly<{
  state?: string;
  account?: string;
  activity?: string;
  rse_expression?: string;
  scope?: string;
}>;

export type RulePage = Readonly<{ rules: RuleDocument[]; next: string | null }>;

export const RULE_PAGE_FILTERS = ['state', 'account', 'activity', 'rse_expression', 'scope'] as const;
export const MAX_RULE_PAGE = 200;

/** A state by name or Rucio's letter. */
const stateOf = (value: string): RuleState => {
  const state = RULE_STATE_LETTERS[value] ?? RULE_STATES.find((name) => name === value.toUpperCase());
  if (!state) throw new InvalidValueForKey(`Unknown rule state: ${value}`);
  return state;
};

/** The cursor of a row: its creation time and id, which order the list. */
export const ruleCursor = (rule: Pick<RuleDocument, 'created_at' | '_id'>): string => `${rule.created_at}|${rule._id}`;

const parseCursor = (cursor: string): { createdAt: string; id: string } => {
  const bar = cursor.lastIndexOf('|');
  const createdAt = cursor.slice(0, bar);
  const id = cursor.slice(bar + 1);
  if (bar <= 0 || !id || Number.isNaN(Date.parse(createdAt)))
    throw new InvalidValueForKey(`after: '${cursor}' is not a cursor of this list`);
  return { createdAt, id };
};

/**
 * One page of rules, newest first: at most `limit`, after the row `after` names. `next` names the
 * last row when more may follow.
 */
export const rulePage = async (
  readModels: ReadModels,
  filters: RulePageFilters,
  options: { after?: string; limit: number },
): Promise<RulePage> => {
  const filter: Record<string, unknown> = {};
  if (filters.state) filter.state = stateOf(filters.state);
  for (const key of ['account', 'activity', 'rse_expression', 'scope'] as const) {
    const value = filters[key];
    if (value) filter[key] = value;
  }
  let where: Filter = filter;
  if (options.after) {
    const { createdAt, id } = parseCursor(options.after);
    // Strictly older, or as old with a smaller id. The bound on created_at alone is what lets the
    // index start the page at the cursor; the $or then drops the rows of the same time already shown.
    where = {
      ...filter,
      created_at: { $lte: createdAt },
      $or: [{ created_at: { $lt: createdAt } }, { _id: { $lt: id } }],
    };
  }
  const limit = Math.max(1, Math.min(MAX_RULE_PAGE, Math.floor(options.limit)));
  // One more than shown tells whether a next page exists without a count.
  const found = await readModels
    .collection<RuleDocument>(rulesCollection)
    .find(where, { sort: { created_at: -1, _id: -1 }, limit: limit + 1 })
    .toArray();
  const rules = found.slice(0, limit);
  const last = rules[rules.length - 1];
  return { rules, next: found.length > limit && last ? ruleCursor(last) : null };
};
