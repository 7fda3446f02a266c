import { didKey } from '../../domain/did/did.ts';
import type { DidEvent } from '../../domain/did/did.ts';
import {
  RULE_EVENT_TYPES,
  type DatasetLock,
  type LockCounters,
  type RuleEvent,
  type RuleLock,
  type RuleLocksChanged,
  type RuleLocksRemoved,
  type RuleRecord,
  type RuleState,
  type RuleUpdated,
} from '../../domain/rule/rule.ts';
import type { CollectionSpec, Filter } from '../../infra/readstore/readStore.ts';
import type { EventsOf, Projected, Projection } from '../projection.ts';
import type { ProjectionContext } from '../runtime/projectionContext.ts';

/**
 * The rules read models: one document per rule with Rucio's column names (`rules`), one per
 * replica lock (`rule_locks`), one per dataset lock (`dataset_locks`), the rule history auditors
 * and `list_rule_history` read (`rule_history`). The messages rules emit (`RuleNotified`) are read
 * from the event log by projections/message/messageFeed.ts.
 * One projection keeps them all, so that a change of state reaches the rule's dataset locks by a
 * query on its own collection.
 */

export type RuleDocument = Projected<{
  id: string;
  subscription_id: string | null;
  account: string;
  scope: string;
  name: string;
  did_type: string;
  state: RuleState;
  error: string | null;
  rse_expression: string;
  copies: number;
  expires_at: string | null;
  weight: string | null;
  locked: boolean;
  locks_ok_cnt: number;
  locks_replicating_cnt: number;
  locks_stuck_cnt: number;
  source_replica_expression: string | null;
  activity: string;
  grouping: string;
  notification: string;
  stuck_at: string | null;
  purge_replicas: boolean;
  ignore_availability: boolean;
  ignore_account_limit: boolean;
  priority: number;
  comments: string | null;
  child_rule_id: string | null;
  eol_at: string | null;
  split_container: boolean;
  meta: Readonly<Record<string, unknown>> | null;
  created_at: string;
  updated_at: string;
  /** When the injector may take the rule (delay_injection). */
  inject_after: string | null;
}>;

export type RuleLockDocument = Projected<{
  rule_id: string;
  scope: string;
  name: string;
  didKey: string;
  rse_id: string;
  rse: string;
  account: string;
  bytes: number;
  state: string;
  created_at: string;
  updated_at: string;
}>;

export type DatasetLockDocument = Projected<{
  rule_id: string;
  scope: string;
  name: string;
  didKey: string;
  rse_id: string;
  rse: string;
  account: string;
  state: RuleState;
  length: number | null;
  bytes: number | null;
  accessed_at: string | null;
  created_at: string;
  updated_at: string;
}>;

/** A snapshot of a rule, kept on every change of state and at creation and deletion. */
export type RuleHistoryDocument = Projected<{
  rule_id: string;
  scope: string;
  name: string;
  didKey: string;
  account: string;
  rse_expression: string;
  state: RuleState | 'DELETED';
  locks_ok_cnt: number;
  locks_replicating_cnt: number;
  locks_stuck_cnt: number;
  created_at: string;
  updated_at: string;
  /** What changed and who did it, for auditors (not part of Rucio's row). */
  event: string;
  actor: string;
  cause: string | null;
  /** The request that wrote the row: the creation row takes the counters of the locks its own request made. */
  request_id: string;
}>;

export const rulesCollection: CollectionSpec = {
  name: 'rules',
  // The console's list pages newest first by (created_at, _id), unfiltered or filtered by one of
  // state, account, activity or RSE expression (rulePages.ts): one index for each, ending with the
  // order, so that a page reads what it shows. An account's own listing reads the same index.
  indexes: [
    { fields: ['scope', 'name'] },
    { fields: ['created_at', '_id'] },
    { fields: ['account', 'created_at', '_id'] },
    { fields: ['state', 'created_at', '_id'] },
    { fields: ['activity', 'created_at', '_id'] },
    { fields: ['rse_expression', 'created_at', '_id'] },
    { fields: ['state', 'updated_at'] },
    { fields: ['subscription_id'] },
    { fields: ['expires_at'] },
    { fields: ['child_rule_id'] },
    { fields: ['eol_at'] },
  ],
};
/**
 * A lock's id starts with its rule's id and a space (`ruleLockId`), so a rule's locks are one
 * range of the primary key, in order (`locksOfRule`), and need no index of their own; the
 * `didKey` index answers "which rules lock this file". (Before version 3 an index on
 * `rule_id, _id` held every lock's id a second time.)
 */
export const ruleLocksCollection: CollectionSpec = {
  name: 'rule_locks',
  indexes: [{ fields: ['didKey'] }],
};
export const datasetLocksCollection: CollectionSpec = {
  name: 'dataset_locks',
  indexes: [{ fields: ['rule_id'] }, { fields: ['didKey'] }, { fields: ['rse_id', 'didKey'] }],
};
export const ruleHistoryCollection: CollectionSpec = {
  name: 'rule_history',
  indexes: [{ fields: ['didKey', 'updated_at'] }],
};

export const ruleLockId = (ruleId: string, scope: string, name: string, rseId: string): string =>
  `${ruleId} ${didKey(scope, name)} ${rseId}`;

/**
 * A rule's locks, in id order with `LOCK_ORDER`: the ids from `<ruleId> ` up to `<ruleId>!` (`!`
 * follows the space). `rule_id` keeps out another rule's locks should the id asked for hold a
 * space itself (a path parameter may).
 */
export const locksOfRule = (ruleId: string): Filter => ({
  _id: { $gt: `${ruleId} `, $lt: `${ruleId}!` },
  rule_id: ruleId,
});

export const LOCK_ORDER = { _id: 1 } as const;

const ruleDocument = (rule: RuleRecord, state: RuleState, error: string | null): RuleDocument => ({
  _id: rule.id,
  id: rule.id,
  subscription_id: rule.subscriptionId,
  account: rule.account,
  scope: rule.scope,
  name: rule.name,
  did_type: rule.didType,
  state,
  error,
  rse_expression: rule.rseExpression,
  copies: rule.copies,
  expires_at: rule.expiresAt,
  weight: rule.weight,
  locked: rule.locked,
  locks_ok_cnt: 0,
  locks_replicating_cnt: 0,
  locks_stuck_cnt: 0,
  source_replica_expression: rule.sourceReplicaExpression,
  activity: rule.activity,
  grouping: rule.grouping,
  notification: rule.notification,
  stuck_at: state === 'STUCK' ? rule.createdAt : null,
  purge_replicas: rule.purgeReplicas,
  ignore_availability: rule.ignoreAvailability,
  ignore_account_limit: rule.ignoreAccountLimit,
  priority: rule.priority,
  comments: rule.comments,
  child_rule_id: null,
  eol_at: rule.eolAt,
  split_container: rule.splitContainer,
  meta: rule.meta,
  created_at: rule.createdAt,
  updated_at: rule.createdAt,
  inject_after: rule.injectAfter,
});

const withCounters = (document: RuleDocument, counters: LockCounters, at: string): RuleDocument => ({
  ...document,
  locks_ok_cnt: counters.ok,
  locks_replicating_cnt: counters.replicating,
  locks_stuck_cnt: counters.stuck,
  updated_at: at,
});

/** The record's option names as the rule document calls them. */
/** The columns an update of a rule's options changes: those it names. */
const changedColumns = (changes: RuleUpdated['data']['changes']): Partial<RuleDocument> => ({
  ...(changes.expiresAt !== undefined ? { expires_at: changes.expiresAt } : {}),
  ...(changes.locked !== undefined ? { locked: changes.locked } : {}),
  ...(changes.account !== undefined ? { account: changes.account } : {}),
  ...(changes.comments !== undefined ? { comments: changes.comments } : {}),
  ...(changes.activity !== undefined ? { activity: changes.activity } : {}),
  ...(changes.sourceReplicaExpression !== undefined
    ? { source_replica_expression: changes.sourceReplicaExpression }
    : {}),
  ...(changes.priority !== undefined ? { priority: changes.priority } : {}),
  ...(changes.childRuleId !== undefined ? { child_rule_id: changes.childRuleId } : {}),
  ...(changes.eolAt !== undefined ? { eol_at: changes.eolAt } : {}),
  ...(changes.meta !== undefined ? { meta: changes.meta } : {}),
  ...(changes.purgeReplicas !== undefined ? { purge_replicas: changes.purgeReplicas } : {}),
  ...(changes.ignoreAccountLimit !== undefined ? { ignore_account_limit: changes.ignoreAccountLimit } : {}),
});

/**
 * The creation row has a fixed id (sorting first among the rule's rows), so the locks its own
 * request makes can give it their counters, as Rucio writes that row after `apply_rule`.
 */
const creationHistoryId = (ruleId: string): string => `${ruleId} ${'0'.repeat(20)}`;

const history = async (
  context: ProjectionContext,
  rule: RuleDocument,
  state: RuleDocument['state'] | 'DELETED',
  event: string,
  cause: string | null,
  at: string,
) => {
  const recorded = context.currentEvent();
  const id =
    event === 'RuleAdded' ? creationHistoryId(rule.id) : `${rule.id} ${String(recorded.position).padStart(20, '0')}`;
  await context.collection<RuleHistoryDocument>(ruleHistoryCollection).create(id, {
    _id: '',
    rule_id: rule.id,
    scope: rule.scope,
    name: rule.name,
    didKey: didKey(rule.scope, rule.name),
    account: rule.account,
    rse_expression: rule.rse_expression,
    state,
    locks_ok_cnt: rule.locks_ok_cnt,
    locks_replicating_cnt: rule.locks_replicating_cnt,
    locks_stuck_cnt: rule.locks_stuck_cnt,
    created_at: rule.created_at,
    updated_at: at,
    event,
    actor: recorded.metadata.account,
    cause,
    request_id: recorded.metadata.requestId,
  });
};

/** A lost replica takes its lock away, or changes it, without changing the rule's state: the history says so. */
const recoveryHistory = async (
  context: ProjectionContext,
  rule: RuleDocument,
  event: RuleLocksRemoved | RuleLocksChanged,
): Promise<void> => {
  if (event.data.cause.kind !== 'recovery') return;
  await history(context, rule, rule.state, event.type, `recovery: ${event.data.cause.detail ?? ''}`, event.data.at);
};

const lockDocuments = (context: ProjectionContext) => context.collection<RuleLockDocument>(ruleLocksCollection);
const datasetLockDocuments = (context: ProjectionContext) =>
  context.collection<DatasetLockDocument>(datasetLocksCollection);

const createLocks = async (
  context: ProjectionContext,
  account: string,
  ruleId: string,
  locks: readonly RuleLock[],
  at: string,
) => {
  for (const lock of locks) {
    const id = ruleLockId(ruleId, lock.scope, lock.name, lock.rseId);
    await lockDocuments(context).create(id, {
      _id: id,
      rule_id: ruleId,
      scope: lock.scope,
      name: lock.name,
      didKey: didKey(lock.scope, lock.name),
      rse_id: lock.rseId,
      rse: lock.rse,
      account,
      bytes: lock.bytes,
      state: lock.state,
      created_at: at,
      updated_at: at,
    });
  }
};

const createDatasetLocks = async (
  context: ProjectionContext,
  rule: RuleDocument,
  locks: readonly DatasetLock[],
  at: string,
) => {
  for (const lock of locks) {
    const id = ruleLockId(rule.id, lock.scope, lock.name, lock.rseId);
    await datasetLockDocuments(context).create(id, {
      _id: id,
      rule_id: rule.id,
      scope: lock.scope,
      name: lock.name,
      didKey: didKey(lock.scope, lock.name),
      rse_id: lock.rseId,
      rse: lock.rse,
      account: rule.account,
      state: rule.state,
      length: lock.length,
      bytes: lock.bytes,
      accessed_at: null,
      created_at: at,
      updated_at: at,
    });
  }
};

/** Dataset locks mirror their rule's state and owner. */
const alignDatasetLocks = async (
  context: ProjectionContext,
  ruleId: string,
  change: Partial<Pick<DatasetLockDocument, 'state' | 'account'>>,
  at: string,
) => {
  for (const lock of await datasetLockDocuments(context).find({ rule_id: ruleId })) {
    await datasetLockDocuments(context).update(lock._id, (current) =>
      current ? { ...current, ...change, updated_at: at } : undefined,
    );
  }
};

const applyRuleEvent = async (event: RuleEvent, context: ProjectionContext): Promise<void> => {
  const rules = context.collection<RuleDocument>(rulesCollection);
  if (event.type === 'RuleAdded') {
    const document = ruleDocument(event.data.rule, event.data.state, event.data.error);
    await rules.create(document._id, document);
    await history(context, document, document.state, event.type, null, event.data.rule.createdAt);
    return;
  }
  const { ruleId } = event.data;
  // The rule as the event leaves it (as it was, for a deletion), for the documents that follow it.
  const seen: { rule: RuleDocument | null } = { rule: null };
  await rules.update(ruleId, (document) => {
    if (!document) return undefined;
    switch (event.type) {
      case 'RuleLocksCreated':
      case 'RuleLocksRemoved':
      case 'RuleLocksChanged':
        seen.rule = withCounters(document, event.data.counters, event.data.at);
        return seen.rule;
      case 'RuleStateChanged':
        seen.rule = {
          ...withCounters(document, event.data.counters, event.data.at),
          state: event.data.state,
          error: event.data.error,
          stuck_at: event.data.stuckAt,
        };
        return seen.rule;
      case 'RuleUpdated': {
        seen.rule = { ...document, updated_at: event.data.at, ...changedColumns(event.data.changes) };
        return seen.rule;
      }
      case 'RuleApproved':
        seen.rule = { ...document, state: 'INJECT', ignore_account_limit: true, updated_at: event.data.at };
        return seen.rule;
      case 'RuleDenied':
      case 'RuleDeleted':
        seen.rule = document;
        return null;
      case 'RuleNotified':
        seen.rule = document;
        return undefined;
    }
  });
  const rule = seen.rule;
  if (!rule) return;
  switch (event.type) {
    case 'RuleLocksCreated': {
      const requestId = context.currentEvent().metadata.requestId;
      await context.collection<RuleHistoryDocument>(ruleHistoryCollection).update(creationHistoryId(ruleId), (row) =>
        row && row.request_id === requestId
          ? {
              ...row,
              locks_ok_cnt: rule.locks_ok_cnt,
              locks_replicating_cnt: rule.locks_replicating_cnt,
              locks_stuck_cnt: rule.locks_stuck_cnt,
            }
          : undefined,
      );
      await createLocks(context, rule.account, ruleId, event.data.locks, event.data.at);
      await createDatasetLocks(context, rule, event.data.datasetLocks, event.data.at);
      return;
    }
    case 'RuleLocksRemoved':
      await recoveryHistory(context, rule, event);
      for (const lock of event.data.locks)
        await lockDocuments(context).update(ruleLockId(ruleId, lock.scope, lock.name, lock.rseId), (document) =>
          document ? null : undefined,
        );
      for (const lock of event.data.datasetLocks) {
        await datasetLockDocuments(context).update(ruleLockId(ruleId, lock.scope, lock.name, lock.rseId), (document) =>
          document ? null : undefined,
        );
      }
      return;
    case 'RuleLocksChanged':
      await recoveryHistory(context, rule, event);
      for (const lock of event.data.locks) {
        await lockDocuments(context).update(ruleLockId(ruleId, lock.scope, lock.name, lock.rseId), (document) =>
          document ? { ...document, state: lock.state, updated_at: event.data.at } : undefined,
        );
      }
      return;
    case 'RuleStateChanged':
      await alignDatasetLocks(context, ruleId, { state: event.data.state }, event.data.at);
      await history(
        context,
        rule,
        event.data.state,
        event.type,
        event.data.cause.detail ? `${event.data.cause.kind}: ${event.data.cause.detail}` : event.data.cause.kind,
        event.data.at,
      );
      return;
    case 'RuleUpdated':
      if (event.data.changes.account !== undefined) {
        await alignDatasetLocks(context, ruleId, { account: event.data.changes.account }, event.data.at);
        for await (const lock of lockDocuments(context).stream(locksOfRule(ruleId), { sort: LOCK_ORDER })) {
          await lockDocuments(context).update(lock._id, (document) =>
            document ? { ...document, account: event.data.changes.account! } : undefined,
          );
        }
      }
      await history(context, rule, rule.state, event.type, Object.keys(event.data.changes).join(', '), event.data.at);
      return;
    case 'RuleApproved':
      await history(context, rule, 'INJECT', event.type, `approved by ${event.data.approver}`, event.data.at);
      return;
    case 'RuleDenied':
    case 'RuleDeleted':
      for (const lock of await datasetLockDocuments(context).find({ rule_id: ruleId }))
        await datasetLockDocuments(context).update(lock._id, () => null);
      await history(
        context,
        rule,
        'DELETED',
        event.type,
        event.type === 'RuleDenied' ? `denied by ${event.data.approver}` : event.data.cause.kind,
        event.data.at,
      );
      return;
    case 'RuleNotified':
      // No read model: the message feed reads notifications from the log (projections/message/).
      return;
  }
};

export const rulesProjection: Projection<RuleEvent | EventsOf<DidEvent, 'DidClosed'>> = {
  name: 'rules',
  version: 3,
  collections: [rulesCollection, ruleLocksCollection, datasetLocksCollection, ruleHistoryCollection],
  handles: { ...RULE_EVENT_TYPES, DidClosed: true },
  async apply(event, context) {
    if (event.type === 'DidClosed') {
      // Dataset locks copy a dataset's size once it is closed (Rucio fills them only then).
      const key = didKey(event.data.scope, event.data.name);
      for (const lock of await datasetLockDocuments(context).find({ didKey: key })) {
        await datasetLockDocuments(context).update(lock._id, (document) =>
          document
            ? {
                ...document,
                length: event.data.totals.length,
                bytes: event.data.totals.bytes,
                updated_at: event.data.closedAt,
              }
            : undefined,
        );
      }
      return;
    }
    await applyRuleEvent(event, context);
  },
};
