import { wildcardRegexSource } from '../../domain/shared/wildcards.ts';
import { didKey } from '../../domain/did/did.ts';
import { RULE_STATE_LETTERS, RULE_STATES } from '../../domain/rule/rule.ts';
import { parseFilterDate, parseRucioDate } from '../../domain/shared/dates.ts';
import { InvalidValueForKey } from '../../domain/shared/errors.ts';
import type { Filter } from '../../infra/readstore/readStore.ts';
import { didsCollection, type DidDocument } from '../did/didsProjection.ts';
import { BY_FILE, replicasCollection, type ReplicaDocument } from '../replica/replicaDocuments.ts';
import { rsesCollection, type RseDocument } from '../rse/rsesProjection.ts';
import type { ReadModels } from '../runtime/readModels.ts';
import { requestsHistoryCollection, type RequestDocument } from '../request/requestsProjection.ts';
import {
  datasetLocksCollection,
  ruleHistoryCollection,
  ruleLocksCollection,
  locksOfRule as locksOfRuleFilter,
  LOCK_ORDER,
  rulesCollection,
  type DatasetLockDocument,
  type RuleDocument,
  type RuleHistoryDocument,
  type RuleLockDocument,
} from './ruleProjection.ts';

/** What the rule routes read: rules, their locks, dataset locks, history and messages. */

const rules = (readModels: ReadModels) => readModels.collection<RuleDocument>(rulesCollection);
const locks = (readModels: ReadModels) => readModels.collection<RuleLockDocument>(ruleLocksCollection);
const datasetLocks = (readModels: ReadModels) => readModels.collection<DatasetLockDocument>(datasetLocksCollection);

export const findRule = (readModels: ReadModels, ruleId: string): Promise<RuleDocument | null> =>
  rules(readModels).get(ruleId);

/** A `*` wildcard as a regular expression anchored at both ends. */
const wildcard = (value: string): Filter => ({ $regex: wildcardRegexSource(value) });

const DATE_FILTERS: Readonly<Record<string, [string, '$lt' | '$gt']>> = {
  created_before: ['created_at', '$lt'],
  created_after: ['created_at', '$gt'],
  updated_before: ['updated_at', '$lt'],
  updated_after: ['updated_at', '$gt'],
};

/** Columns a filter may name besides the special ones; anything else is refused. */
const COLUMNS = new Set([
  'id',
  'subscription_id',
  'account',
  'scope',
  'name',
  'did_type',
  'state',
  'rse_expression',
  'copies',
  'locked',
  'grouping',
  'activity',
  'notification',
  'purge_replicas',
  'priority',
  'child_rule_id',
  'weight',
  'source_replica_expression',
]);

/**
 * Rucio's `list_rules` filters: `*` wildcards on account and scope, the state by letter or name,
 * created/updated before/after a date, any other column by equality (texts as given, booleans
 * and numbers read from the query string).
 */
export const ruleFilter = (query: Readonly<Record<string, string>>): Filter => {
  const filter: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    if (Object.hasOwn(DATE_FILTERS, key)) {
      const [column, operator] = DATE_FILTERS[key]!;
      const date = parseRucioDate(value) ?? parseFilterDate(value);
      if (!date) throw new InvalidValueForKey(`${key}: '${value}' is not a date`);
      filter[column] = { ...(filter[column] ?? {}), [operator]: date.toISOString() };
      continue;
    }
    if (!COLUMNS.has(key)) throw new InvalidValueForKey(`Unknown rule filter: ${key}`);
    if (key === 'state') {
      const state =
        RULE_STATE_LETTERS[value] ?? (RULE_STATES as readonly string[]).find((name) => name === value.toUpperCase());
      if (!state) throw new InvalidValueForKey(`Unknown rule state: ${value}`);
      filter.state = state;
    } else if ((key === 'account' || key === 'scope' || key === 'name') && value.includes('*')) {
      filter[key] = wildcard(value);
    } else if (key === 'copies' || key === 'priority') {
      filter[key] = Number(value);
    } else if (key === 'locked' || key === 'purge_replicas') {
      filter[key] = ['true', '1', 'True'].includes(value);
    } else {
      filter[key] = value;
    }
  }
  return filter;
};

export const listRules = (readModels: ReadModels, filter: Filter): AsyncIterable<RuleDocument> =>
  rules(readModels).find(filter, { sort: { _id: 1 } });

/** The DID's bytes, which `list_rules` adds to each rule. */
export const didBytes = async (readModels: ReadModels, scope: string, name: string): Promise<number | null> => {
  const did = await readModels.collection<DidDocument>(didsCollection).get(didKey(scope, name));
  const bytes = did?.bytes;
  return typeof bytes === 'number' ? bytes : null;
};

export const rulesOfDid = (readModels: ReadModels, scope: string, name: string): AsyncIterable<RuleDocument> =>
  rules(readModels).find({ scope, name }, { sort: { _id: 1 } });

/** Rules holding a lock on a file (Rucio's `list_associated_rules_for_file`), each once. */
export async function* rulesLockingFile(
  readModels: ReadModels,
  scope: string,
  name: string,
): AsyncGenerator<RuleDocument> {
  const seen = new Set<string>();
  for await (const lock of locks(readModels).find({ didKey: didKey(scope, name) })) {
    if (seen.has(lock.rule_id)) continue;
    seen.add(lock.rule_id);
    const rule = await findRule(readModels, lock.rule_id);
    if (rule) yield rule;
  }
}

export const locksOfRule = (readModels: ReadModels, ruleId: string): AsyncIterable<RuleLockDocument> =>
  locks(readModels).find(locksOfRuleFilter(ruleId), { sort: LOCK_ORDER });

export const datasetLocksOnRse = (readModels: ReadModels, rseId: string): AsyncIterable<DatasetLockDocument> =>
  datasetLocks(readModels).find({ rse_id: rseId }, { sort: { rse_id: 1, didKey: 1 } });

export const datasetLocksOfDid = (
  readModels: ReadModels,
  scope: string,
  name: string,
): AsyncIterable<DatasetLockDocument> => datasetLocks(readModels).find({ didKey: didKey(scope, name) });

/** Every history row of every rule of a DID, oldest first (`list_rule_full_history`). */
export const ruleHistoryOfDid = (
  readModels: ReadModels,
  scope: string,
  name: string,
): AsyncIterable<RuleHistoryDocument> =>
  readModels
    .collection<RuleHistoryDocument>(ruleHistoryCollection)
    .find({ didKey: didKey(scope, name) }, { sort: { didKey: 1, updated_at: 1 } });

/** Rules past their expiry, soonest expired first (the cleaner's candidates, locked ones included to say why they stay). */
export const expiredRules = (readModels: ReadModels, now: string, limit: number): Promise<RuleDocument[]> =>
  rules(readModels)
    .find({ expires_at: { $lt: now } }, { sort: { expires_at: 1 }, limit })
    .toArray();

/** Rules whose end of life (`eol_at`) is past, soonest first (atropos's candidates). */
export const rulesBeyondEndOfLife = (readModels: ReadModels, now: string, limit: number): Promise<RuleDocument[]> =>
  rules(readModels)
    .find({ eol_at: { $ne: null, $lt: now } }, { sort: { eol_at: 1 }, limit })
    .toArray();

/** Rules waiting for a child rule, with the child's state (null when the child is gone). */
export const parentRules = async (
  readModels: ReadModels,
  limit: number,
): Promise<{ ruleId: string; childState: RuleDocument['state'] | null }[]> => {
  const parents = await rules(readModels)
    .find({ child_rule_id: { $ne: null } }, { limit })
    .toArray();
  const found = [];
  for (const parent of parents)
    found.push({ ruleId: parent.id, childState: (await findRule(readModels, parent.child_rule_id!))?.state ?? null });
  return found;
};

/** Rules in a state, least recently updated first (the injector's INJECT, the repairer's STUCK). */
export const rulesInState = (
  readModels: ReadModels,
  state: string,
  updatedBefore: string,
  limit: number,
): Promise<RuleDocument[]> =>
  rules(readModels)
    .find({ state, updated_at: { $lt: updatedBefore } }, { sort: { state: 1, updated_at: 1 }, limit })
    .toArray();

/** Locked rules on a DID: the undertaker leaves the DID alone. */
export const lockedRuleCount = (readModels: ReadModels, scope: string, name: string): Promise<number> =>
  rules(readModels).count({ scope, name, locked: true });

/** The archived attempts of a transfer of a file to an RSE, oldest first (examine_rule). */
export const transferAttempts = (
  readModels: ReadModels,
  scope: string,
  name: string,
  rseId: string,
): Promise<RequestDocument[]> =>
  readModels
    .collection<RequestDocument>(requestsHistoryCollection)
    .find({ didKey: didKey(scope, name), dest_rse_id: rseId }, { sort: { didKey: 1, dest_rse_id: 1, updated_at: 1 } })
    .toArray();

/** Where a file has an AVAILABLE copy, with whether each RSE is open for reading (examine_rule's sources). */
export const availableSources = async (
  readModels: ReadModels,
  scope: string,
  name: string,
): Promise<{ rse: string; availabilityRead: boolean }[]> => {
  const replicas = await readModels
    .collection<ReplicaDocument>(replicasCollection)
    .find({ didKey: didKey(scope, name) }, { sort: BY_FILE })
    .toArray();
  const sources: { rse: string; availabilityRead: boolean }[] = [];
  for (const replica of replicas) {
    if (replica.state !== 'AVAILABLE') continue;
    const rse = await readModels.collection<RseDocument>(rsesCollection).get(replica.rse);
    sources.push({ rse: replica.rse, availabilityRead: rse?.properties.availability_read ?? false });
  }
  return sources;
};
