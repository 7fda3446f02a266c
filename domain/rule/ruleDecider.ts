import { unknownCommand, type Decider } from '../shared/decider.ts';
import { UnsupportedOperation } from '../shared/errors.ts';
import { RuleNotFound } from './ruleErrors.ts';
import type { Command, CommandMetadata } from '../shared/event.ts';
import {
  evolveRule,
  initialRule,
  lockKey,
  type DatasetLock,
  type HeldLock,
  type LiveRule,
  type LockState,
  type Rule,
  type RuleCause,
  type RuleEvent,
  type RuleLock,
  type RuleRecord,
  type RuleState,
  type RuleUpdated,
} from './rule.ts';
import {
  countLocks,
  moveCounters,
  okMessages,
  progressMessages,
  stateAfterLocks,
  stateFromCounters,
} from './ruleState.ts';

/**
 * Decisions on one rule's stream. The locks themselves are decided on the files' streams in the
 * same step (domain/replica/replicaLocks.ts); the rule records them with the counters and the
 * state they lead to.
 */

/**
 * Adds a rule. Its state is `state` when given (INJECT, WAITING_APPROVAL: no locks yet),
 * otherwise what its first locks make it. `didClosed` decides the notifications of a rule that is
 * OK at once.
 */
export type AddRule = Command<
  'AddRule',
  {
    rule: RuleRecord;
    state: 'INJECT' | 'WAITING_APPROVAL' | null;
    locks: readonly RuleLock[];
    datasetLocks: readonly DatasetLock[];
    targetRses: readonly string[];
    autoLocked: boolean;
    didClosed: boolean;
  }
>;
/**
 * Records locks created by a later step (injection, an attach); the rule must be live. An
 * injection written in several steps changes the rule's state only with its `final` step.
 */
export type RecordLocks = Command<
  'RecordLocks',
  {
    ruleId: string;
    locks: readonly RuleLock[];
    datasetLocks: readonly DatasetLock[];
    cause: RuleCause;
    didClosed: boolean;
    final: boolean;
  }
>;
export type RemoveLocks = Command<
  'RemoveLocks',
  { ruleId: string; locks: readonly LockRef[]; datasetLocks: readonly LockRef[]; cause: RuleCause; didClosed: boolean }
>;
/** Locks that changed state on their replicas; `error` is the transfer's when locks went STUCK. */
export type ChangeLocks = Command<
  'ChangeLocks',
  {
    ruleId: string;
    locks: readonly (LockRef & { state: LockState })[];
    cause: RuleCause;
    error: string | null;
    didClosed: boolean;
  }
>;
/**
 * `update_rule` with `state`: STUCK hands the rule to the repairer (also how a SUSPENDED rule is
 * resumed), SUSPENDED stops it. Other states are silently ignored, as Rucio does.
 */
export type SetRuleState = Command<'SetRuleState', { ruleId: string; state: string; error?: string | null }>;
/** Plain option changes of `update_rule` (validated by the command layer). */
export type UpdateRuleOptions = Command<
  'UpdateRuleOptions',
  { ruleId: string; changes: RuleUpdated['data']['changes'] }
>;
/** The repairer's recount: the state the counters give (a STUCK rule whose locks recovered turns OK). */
export type RecountRule = Command<'RecountRule', { ruleId: string; didClosed: boolean }>;
export type ApproveRule = Command<'ApproveRule', { ruleId: string }>;
export type DenyRule = Command<'DenyRule', { ruleId: string; reason: string | null }>;
/** The API's deletion: the rule expires within the hour; the cleaner deletes it then. */
export type RequestRuleDeletion = Command<'RequestRuleDeletion', { ruleId: string; purgeReplicas: boolean | null }>;
/**
 * Deletes the rule with all its locks (the files' locks are removed on their streams in the same
 * step). A locked rule or one with a child is refused unless `ignoreLock` / `deleteParent`.
 */
export type DeleteRule = Command<
  'DeleteRule',
  { ruleId: string; purgeReplicas: boolean | null; cause: RuleCause; ignoreLock: boolean; deleteParent: boolean }
>;

export type LockRef = Readonly<{ scope: string; name: string; rseId: string }>;

export type RuleCommand =
  | AddRule
  | RecordLocks
  | RemoveLocks
  | ChangeLocks
  | SetRuleState
  | UpdateRuleOptions
  | RecountRule
  | ApproveRule
  | DenyRule
  | RequestRuleDeletion
  | DeleteRule;

/** Rucio's message for a rule id it does not know. */
export const ruleNotFound = (ruleId: string) => new RuleNotFound(`No rule with the id ${ruleId} found`);

export const requireLive = (state: Rule, ruleId: string): LiveRule => {
  if (state.status !== 'Live') throw ruleNotFound(ruleId);
  return state;
};

/** A held lock as events record it (without the time the rule keeps). */
const recorded = ({ since: _since, repairs: _repairs, ...lock }: HeldLock): RuleLock => lock;

const refOf = (rule: LiveRule) => ({
  ruleId: rule.record.id,
  scope: rule.record.scope,
  name: rule.record.name,
  account: rule.record.account,
});

/** The state event and notifications a change of state brings, if the state changed. */
const stateEvents = (
  rule: LiveRule,
  state: RuleState,
  error: string | null,
  counters: LiveRule['counters'],
  cause: RuleCause,
  didClosed: boolean,
  metadata: CommandMetadata,
): RuleEvent[] => {
  if (state === rule.state && error === rule.error) return [];
  const at = metadata.now.toISOString();
  const stuckAt = state === 'STUCK' ? (rule.stuckAt ?? at) : null;
  const events: RuleEvent[] = [
    {
      type: 'RuleStateChanged',
      data: {
        ...refOf(rule),
        previousState: rule.state,
        state,
        error: state === 'OK' ? null : error,
        counters,
        stuckAt,
        cause,
        at,
      },
    },
  ];
  if (state === 'OK' && rule.state !== 'OK') {
    const messages = okMessages(
      { ...refOf(rule), notification: rule.record.notification },
      [...rule.datasetLocks.values()],
      didClosed,
    );
    if (messages.length > 0) events.push({ type: 'RuleNotified', data: { ...refOf(rule), messages, at } });
  }
  return events;
};

export const addRule = ({ data, metadata }: AddRule, state: Rule): RuleEvent[] => {
  if (state.status !== 'Absent') return [];
  const counters = countLocks(data.locks);
  const ruleState = data.state ?? stateFromCounters(counters);
  const at = metadata.now.toISOString();
  const ref = { ruleId: data.rule.id, scope: data.rule.scope, name: data.rule.name, account: data.rule.account };
  const events: RuleEvent[] = [
    {
      type: 'RuleAdded',
      data: {
        rule: data.rule,
        state: ruleState,
        error: ruleState === 'STUCK' ? 'MissingSourceReplica' : null,
        targetRses: data.targetRses,
        autoLocked: data.autoLocked,
      },
    },
  ];
  if (data.locks.length > 0 || data.datasetLocks.length > 0) {
    events.push({
      type: 'RuleLocksCreated',
      data: { ...ref, locks: data.locks, datasetLocks: data.datasetLocks, counters, cause: { kind: 'creation' }, at },
    });
  }
  if (ruleState === 'OK') {
    const messages = okMessages({ ...ref, notification: data.rule.notification }, data.datasetLocks, data.didClosed);
    if (messages.length > 0) events.push({ type: 'RuleNotified', data: { ...ref, messages, at } });
  }
  return events;
};

export const recordLocks = ({ data, metadata }: RecordLocks, state: Rule): RuleEvent[] => {
  const rule = requireLive(state, data.ruleId);
  const locks = data.locks.filter((lock) => !rule.locks.has(lockKey(lock.scope, lock.name, lock.rseId)));
  const datasetLocks = data.datasetLocks.filter(
    (lock) => !rule.datasetLocks.has(lockKey(lock.scope, lock.name, lock.rseId)),
  );
  const injecting = rule.state === 'INJECT' && data.cause.kind === 'injection' && data.final;
  if (locks.length === 0 && datasetLocks.length === 0 && !injecting) return [];
  const counters = countLocks([...rule.locks.values(), ...locks]);
  const at = metadata.now.toISOString();
  const events: RuleEvent[] = [];
  if (locks.length > 0 || datasetLocks.length > 0) {
    events.push({
      type: 'RuleLocksCreated',
      data: { ...refOf(rule), locks, datasetLocks, counters, cause: data.cause, at },
    });
  }
  const newStuck = locks.some((lock) => lock.state === 'STUCK');
  if (rule.state === 'INJECT' && !injecting) return events;
  const next = injecting
    ? stateFromCounters(counters)
    : stateAfterLocks(rule.state, counters, data.cause.kind, newStuck);
  const error = next === 'STUCK' && newStuck ? 'MissingSourceReplica' : next === 'STUCK' ? rule.error : null;
  const withLocks = {
    ...rule,
    datasetLocks: new Map([
      ...rule.datasetLocks,
      ...datasetLocks.map((lock) => [lockKey(lock.scope, lock.name, lock.rseId), lock] as const),
    ]),
  };
  return [...events, ...stateEvents(withLocks, next, error, counters, data.cause, data.didClosed, metadata)];
};

export const removeLocks = ({ data, metadata }: RemoveLocks, state: Rule): RuleEvent[] => {
  const rule = requireLive(state, data.ruleId);
  const locks = data.locks.flatMap((ref) => {
    const held = rule.locks.get(lockKey(ref.scope, ref.name, ref.rseId));
    return held ? [recorded(held)] : [];
  });
  const datasetLocks = data.datasetLocks.flatMap(
    (ref) => rule.datasetLocks.get(lockKey(ref.scope, ref.name, ref.rseId)) ?? [],
  );
  if (locks.length === 0 && datasetLocks.length === 0) return [];
  const removed = new Set(locks.map((lock) => lockKey(lock.scope, lock.name, lock.rseId)));
  const counters = countLocks([...rule.locks.entries()].filter(([key]) => !removed.has(key)).map(([, lock]) => lock));
  const at = metadata.now.toISOString();
  const next = stateAfterLocks(rule.state, counters, data.cause.kind, false);
  return [
    { type: 'RuleLocksRemoved', data: { ...refOf(rule), locks, datasetLocks, counters, cause: data.cause, at } },
    ...stateEvents(rule, next, next === 'STUCK' ? rule.error : null, counters, data.cause, data.didClosed, metadata),
  ];
};

export const changeLocks = ({ data, metadata }: ChangeLocks, state: Rule): RuleEvent[] => {
  const rule = requireLive(state, data.ruleId);
  const changed = data.locks.flatMap((change) => {
    const lock = rule.locks.get(lockKey(change.scope, change.name, change.rseId));
    return lock && lock.state !== change.state
      ? [{ ...recorded(lock), state: change.state, previousState: lock.state }]
      : [];
  });
  if (changed.length === 0) return [];
  const counters = moveCounters(
    rule.counters,
    changed.map((lock) => ({ from: lock.previousState, to: lock.state })),
  );
  const at = metadata.now.toISOString();
  const newStuck = changed.some((lock) => lock.state === 'STUCK');
  const next = stateAfterLocks(rule.state, counters, data.cause.kind, newStuck);
  const error = next === 'STUCK' ? (newStuck ? (data.error ?? rule.error) : rule.error) : null;
  const events: RuleEvent[] = [
    { type: 'RuleLocksChanged', data: { ...refOf(rule), locks: changed, counters, cause: data.cause, at } },
    ...stateEvents(rule, next, error, counters, data.cause, data.didClosed, metadata),
  ];
  // A PROGRESS rule still replicating reports each new tenth of its locks done.
  if (rule.state === 'REPLICATING' && next === 'REPLICATING') {
    const messages = progressMessages(
      { ...refOf(rule), notification: rule.record.notification },
      rule.counters,
      counters,
      data.didClosed,
    );
    if (messages.length > 0) events.push({ type: 'RuleNotified', data: { ...refOf(rule), messages, at } });
  }
  return events;
};

export const setRuleState = ({ data, metadata }: SetRuleState, state: Rule): RuleEvent[] => {
  const rule = requireLive(state, data.ruleId);
  const wanted = data.state.toUpperCase();
  if (wanted !== 'STUCK' && wanted !== 'SUSPENDED') return [];
  return stateEvents(
    rule,
    wanted,
    data.error === undefined ? rule.error : data.error,
    rule.counters,
    { kind: 'update' },
    false,
    metadata,
  );
};

export const updateRuleOptions = ({ data, metadata }: UpdateRuleOptions, state: Rule): RuleEvent[] => {
  const rule = requireLive(state, data.ruleId);
  const current: Record<string, unknown> = { ...rule.record, childRuleId: rule.childRuleId };
  const changes = Object.fromEntries(
    Object.entries(data.changes).filter(([key, value]) => JSON.stringify(current[key]) !== JSON.stringify(value)),
  );
  if (Object.keys(changes).length === 0) return [];
  const movedUsage = 'account' in changes ? usageByRse(rule) : undefined;
  return [
    {
      type: 'RuleUpdated',
      data: { ...refOf(rule), changes, ...(movedUsage ? { movedUsage } : {}), at: metadata.now.toISOString() },
    },
  ];
};

/** The bytes and files of a rule's locks per RSE: what its owner's usage holds for it. */
const usageByRse = (rule: LiveRule) => {
  const byRse = new Map<string, { rseId: string; rse: string; files: number; bytes: number }>();
  for (const lock of rule.locks.values()) {
    const entry = byRse.get(lock.rseId) ?? { rseId: lock.rseId, rse: lock.rse, files: 0, bytes: 0 };
    entry.files += 1;
    entry.bytes += lock.bytes;
    byRse.set(lock.rseId, entry);
  }
  return [...byRse.values()];
};

export const recountRule = ({ data, metadata }: RecountRule, state: Rule): RuleEvent[] => {
  const rule = requireLive(state, data.ruleId);
  if (rule.state === 'SUSPENDED' || rule.state === 'WAITING_APPROVAL' || rule.state === 'INJECT') return [];
  const next = stateFromCounters(rule.counters);
  return stateEvents(
    rule,
    next,
    next === 'STUCK' ? rule.error : null,
    rule.counters,
    { kind: 'repair' },
    data.didClosed,
    metadata,
  );
};

/** Approval only acts on a rule waiting for it; otherwise nothing happens (as in Rucio). */
export const approveRule = ({ data, metadata }: ApproveRule, state: Rule): RuleEvent[] => {
  const rule = requireLive(state, data.ruleId);
  if (rule.state !== 'WAITING_APPROVAL') return [];
  return [
    { type: 'RuleApproved', data: { ...refOf(rule), approver: metadata.account, at: metadata.now.toISOString() } },
  ];
};

/** Denial deletes a waiting rule, locked or not (it holds no locks yet). */
export const denyRule = ({ data, metadata }: DenyRule, state: Rule): RuleEvent[] => {
  const rule = requireLive(state, data.ruleId);
  if (rule.state !== 'WAITING_APPROVAL') return [];
  return [
    {
      type: 'RuleDenied',
      data: { ...refOf(rule), approver: metadata.account, reason: data.reason, at: metadata.now.toISOString() },
    },
  ];
};

const refuseProtected = (rule: LiveRule, ignoreLock: boolean, deleteParent: boolean): void => {
  if (rule.record.locked && !ignoreLock)
    throw new UnsupportedOperation(`The replication rule is locked and has to be unlocked before it can be deleted.`);
  if (rule.childRuleId !== null && !deleteParent) {
    throw new UnsupportedOperation(`The replication rule has a child rule and thus cannot be deleted.`);
  }
};

const HOUR_MS = 3_600_000;

export const requestRuleDeletion = ({ data, metadata }: RequestRuleDeletion, state: Rule): RuleEvent[] => {
  const rule = requireLive(state, data.ruleId);
  refuseProtected(rule, false, false);
  const soon = new Date(metadata.now.getTime() + HOUR_MS).toISOString();
  const expiresAt = rule.record.expiresAt !== null && rule.record.expiresAt < soon ? rule.record.expiresAt : soon;
  const changes: RuleUpdated['data']['changes'] = {
    ...(expiresAt !== rule.record.expiresAt ? { expiresAt } : {}),
    ...(data.purgeReplicas !== null && data.purgeReplicas !== rule.record.purgeReplicas
      ? { purgeReplicas: data.purgeReplicas }
      : {}),
  };
  if (Object.keys(changes).length === 0) return [];
  return [{ type: 'RuleUpdated', data: { ...refOf(rule), changes, at: metadata.now.toISOString() } }];
};

export const deleteRule = ({ data, metadata }: DeleteRule, state: Rule): RuleEvent[] => {
  if (state.status === 'Deleted') return [];
  const rule = requireLive(state, data.ruleId);
  refuseProtected(rule, data.ignoreLock, data.deleteParent);
  const at = metadata.now.toISOString();
  const events: RuleEvent[] = [];
  if (rule.locks.size > 0 || rule.datasetLocks.size > 0) {
    events.push({
      type: 'RuleLocksRemoved',
      data: {
        ...refOf(rule),
        locks: [...rule.locks.values()].map(recorded),
        datasetLocks: [...rule.datasetLocks.values()],
        counters: { ok: 0, replicating: 0, stuck: 0 },
        cause: data.cause,
        at,
      },
    });
  }
  events.push({
    type: 'RuleDeleted',
    data: { ...refOf(rule), purgeReplicas: data.purgeReplicas ?? rule.record.purgeReplicas, cause: data.cause, at },
  });
  return events;
};

export const decideRule = (command: RuleCommand, state: Rule): RuleEvent[] => {
  switch (command.type) {
    case 'AddRule':
      return addRule(command, state);
    case 'RecordLocks':
      return recordLocks(command, state);
    case 'RemoveLocks':
      return removeLocks(command, state);
    case 'ChangeLocks':
      return changeLocks(command, state);
    case 'SetRuleState':
      return setRuleState(command, state);
    case 'UpdateRuleOptions':
      return updateRuleOptions(command, state);
    case 'RecountRule':
      return recountRule(command, state);
    case 'ApproveRule':
      return approveRule(command, state);
    case 'DenyRule':
      return denyRule(command, state);
    case 'RequestRuleDeletion':
      return requestRuleDeletion(command, state);
    case 'DeleteRule':
      return deleteRule(command, state);
    default:
      return unknownCommand('rule', command);
  }
};

export const ruleDecider: Decider<Rule, RuleCommand, RuleEvent> = {
  name: 'rule',
  initialState: initialRule,
  evolve: evolveRule,
  decide: decideRule,
};
