import type { DidRef, DidType } from '../did/did.ts';
import type { Event } from '../shared/event.ts';
import { keysOf } from '../shared/narrowing.ts';

/**
 * A replication rule: N copies of a DID on the RSEs an expression selects, kept by locks, one per
 * (file, RSE). Each rule is an aggregate with its own stream (`rule-<id>`). Its locks are also
 * recorded on the files' streams (the replica they hold), in the same atomic step, so that the
 * decision to delete a replica always sees its locks.
 */

export const ruleStreamName = (ruleId: string): string => `rule-${ruleId}`;

export const RULE_STATES = ['REPLICATING', 'OK', 'STUCK', 'SUSPENDED', 'WAITING_APPROVAL', 'INJECT'] as const;
export type RuleState = (typeof RULE_STATES)[number];

/** The letters Rucio stores; filters take them as well as the names. */
export const RULE_STATE_LETTERS: Readonly<Record<string, RuleState>> = {
  R: 'REPLICATING',
  O: 'OK',
  S: 'STUCK',
  U: 'SUSPENDED',
  W: 'WAITING_APPROVAL',
  I: 'INJECT',
};

export const LOCK_STATES = ['REPLICATING', 'OK', 'STUCK'] as const;
export type LockState = (typeof LOCK_STATES)[number];

export const RULE_GROUPINGS = ['ALL', 'DATASET', 'NONE'] as const;
export type RuleGrouping = (typeof RULE_GROUPINGS)[number];

export const RULE_NOTIFICATIONS = ['YES', 'NO', 'CLOSE', 'PROGRESS'] as const;
export type RuleNotification = (typeof RULE_NOTIFICATIONS)[number];

/** Rucio's default priority of a rule's transfers. */
export const DEFAULT_RULE_PRIORITY = 3;

/** What a rule asks for and how it behaves: every option of `add_rule`, as recorded. */
export type RuleRecord = Readonly<{
  id: string;
  scope: string;
  name: string;
  didType: DidType;
  /** The owner, charged for the locks' bytes. */
  account: string;
  rseExpression: string;
  copies: number;
  grouping: RuleGrouping;
  /** An RSE attribute whose numeric values weigh the random choice; null for equal weights. */
  weight: string | null;
  locked: boolean;
  subscriptionId: string | null;
  sourceReplicaExpression: string | null;
  activity: string;
  notification: RuleNotification;
  purgeReplicas: boolean;
  ignoreAvailability: boolean;
  ignoreAccountLimit: boolean;
  priority: number;
  splitContainer: boolean;
  comments: string | null;
  meta: Readonly<Record<string, unknown>> | null;
  /** ISO times; null when not set. */
  expiresAt: string | null;
  eolAt: string | null;
  createdAt: string;
  /** With `delay_injection`: when the injector may take the rule (Rucio moves `created_at` there). */
  injectAfter: string | null;
  /** The account that asked for the rule (the owner may be another, for admins). */
  requestedBy: string;
}>;

/** Locks per state; they decide the rule's state (Rucio's locks_*_cnt). */
export type LockCounters = Readonly<{ ok: number; replicating: number; stuck: number }>;

export const NO_LOCKS: LockCounters = { ok: 0, replicating: 0, stuck: 0 };

/** One lock as the rule keeps it: the file, the RSE, the bytes it counts, its state. */
export type RuleLock = Readonly<{
  scope: string;
  name: string;
  rseId: string;
  rse: string;
  bytes: number;
  state: LockState;
}>;

/**
 * A lock in the rule's state: also since when it is in its state (the repairer's back-off counts
 * from it) and how often the repairer retried it (Rucio's `repair_cnt`).
 */
export type HeldLock = RuleLock & Readonly<{ since: string; repairs: number }>;

/** One dataset lock: the rule's hold on a whole dataset at one RSE (grouping ALL or DATASET). */
export type DatasetLock = Readonly<{
  scope: string;
  name: string;
  rseId: string;
  rse: string;
  length: number | null;
  bytes: number | null;
}>;

/** Why locks or the state changed: the step's kind and, for daemons, the event or job behind it. */
export type RuleCause = Readonly<{
  kind: 'creation' | 'injection' | 'attach' | 'detach' | 'transfer' | 'repair' | 'update' | 'deletion' | 'recovery';
  detail?: string;
}>;

type RuleRef = { ruleId: string; scope: string; name: string; account: string };

/**
 * A rule was added. `state` is its state right after creation (INJECT, WAITING_APPROVAL, or what
 * its first locks make it, recorded with them by `RuleLocksCreated` and `RuleStateChanged`);
 * `targetRses` the RSEs its expression selected then.
 */
export type RuleAdded = Event<
  'RuleAdded',
  { rule: RuleRecord; state: RuleState; error: string | null; targetRses: readonly string[]; autoLocked: boolean }
>;
/** Locks created in one step (creation, injection, an attach), batched; counters after the step. */
export type RuleLocksCreated = Event<
  'RuleLocksCreated',
  RuleRef & {
    locks: readonly RuleLock[];
    datasetLocks: readonly DatasetLock[];
    counters: LockCounters;
    cause: RuleCause;
    at: string;
  }
>;
/** Locks removed in one step (files detached, repair, rule deletion); counters after the step. */
export type RuleLocksRemoved = Event<
  'RuleLocksRemoved',
  RuleRef & {
    locks: readonly RuleLock[];
    datasetLocks: readonly DatasetLock[];
    counters: LockCounters;
    cause: RuleCause;
    at: string;
  }
>;
/** Locks that changed state (a transfer done or failed, a repair); counters after the step. */
export type RuleLocksChanged = Event<
  'RuleLocksChanged',
  RuleRef & {
    locks: readonly (RuleLock & { previousState: LockState })[];
    counters: LockCounters;
    cause: RuleCause;
    at: string;
  }
>;
export type RuleStateChanged = Event<
  'RuleStateChanged',
  RuleRef & {
    previousState: RuleState;
    state: RuleState;
    error: string | null;
    counters: LockCounters;
    /** When the rule first went STUCK (kept while it stays STUCK); null otherwise. */
    stuckAt: string | null;
    cause: RuleCause;
    at: string;
  }
>;
/** Options changed by `update_rule` (only the changed keys, with their new values). */
export type RuleUpdated = Event<
  'RuleUpdated',
  RuleRef & {
    changes: Readonly<{
      expiresAt?: string | null;
      locked?: boolean;
      account?: string;
      comments?: string | null;
      activity?: string;
      sourceReplicaExpression?: string | null;
      priority?: number;
      childRuleId?: string | null;
      eolAt?: string | null;
      meta?: Readonly<Record<string, unknown>> | null;
      purgeReplicas?: boolean;
      ignoreAccountLimit?: boolean;
    }>;
    /** With a change of owner: the bytes and files of the rule's locks per RSE, which move to the new owner's usage. */
    movedUsage?: readonly Readonly<{ rseId: string; rse: string; files: number; bytes: number }>[];
    at: string;
  }
>;
export type RuleApproved = Event<'RuleApproved', RuleRef & { approver: string; at: string }>;
export type RuleDenied = Event<'RuleDenied', RuleRef & { approver: string; reason: string | null; at: string }>;
/** The rule and its locks are gone (the cleaner, a denial, a replacement); its id stays taken. */
export type RuleDeleted = Event<'RuleDeleted', RuleRef & { purgeReplicas: boolean; cause: RuleCause; at: string }>;
/**
 * Messages a rule emits for outside systems (Rucio's messages table): RULE_OK, RULE_PROGRESS,
 * DATASETLOCK_OK. Recorded here; delivering them to a broker is another matter.
 */
export type RuleNotified = Event<
  'RuleNotified',
  RuleRef & {
    messages: readonly Readonly<{
      eventType: 'RULE_OK' | 'RULE_PROGRESS' | 'DATASETLOCK_OK';
      payload: Readonly<Record<string, unknown>>;
    }>[];
    at: string;
  }
>;

export type RuleEvent =
  | RuleAdded
  | RuleLocksCreated
  | RuleLocksRemoved
  | RuleLocksChanged
  | RuleStateChanged
  | RuleUpdated
  | RuleApproved
  | RuleDenied
  | RuleDeleted
  | RuleNotified;

/** Every rule event type, each once: a type added to the union and missing here does not compile. */
export const RULE_EVENT_TYPE_SET = {
  RuleAdded: true,
  RuleLocksCreated: true,
  RuleLocksRemoved: true,
  RuleLocksChanged: true,
  RuleStateChanged: true,
  RuleUpdated: true,
  RuleApproved: true,
  RuleDenied: true,
  RuleDeleted: true,
  RuleNotified: true,
} as const satisfies Readonly<Record<RuleEvent['type'], true>>;

export const RULE_EVENT_TYPES: readonly RuleEvent['type'][] = keysOf(RULE_EVENT_TYPE_SET);

/** `scope:name` then the RSE id: one lock. */
export const lockKey = (scope: string, name: string, rseId: string): string => `${scope}:${name} ${rseId}`;

export type LiveRule = Readonly<{
  status: 'Live';
  record: RuleRecord;
  state: RuleState;
  error: string | null;
  stuckAt: string | null;
  childRuleId: string | null;
  counters: LockCounters;
  /** Locks by `lockKey`. Copied on change, never mutated: cached states stay valid. */
  locks: ReadonlyMap<string, HeldLock>;
  /** Dataset locks by `lockKey` of the dataset. */
  datasetLocks: ReadonlyMap<string, DatasetLock>;
}>;

export type Rule = Readonly<{ status: 'Absent' }> | LiveRule | Readonly<{ status: 'Deleted'; record: RuleRecord }>;

export const initialRule = (): Rule => ({ status: 'Absent' });

export const evolveRule = (state: Rule, event: RuleEvent): Rule => {
  if (event.type === 'RuleAdded') {
    return {
      status: 'Live',
      record: event.data.rule,
      state: event.data.state,
      error: event.data.error,
      stuckAt: event.data.state === 'STUCK' ? event.data.rule.createdAt : null,
      childRuleId: null,
      counters: NO_LOCKS,
      locks: new Map(),
      datasetLocks: new Map(),
    };
  }
  if (state.status !== 'Live') return state;
  switch (event.type) {
    case 'RuleLocksCreated': {
      const locks = new Map(state.locks);
      for (const lock of event.data.locks)
        locks.set(lockKey(lock.scope, lock.name, lock.rseId), { ...lock, since: event.data.at, repairs: 0 });
      const datasetLocks = new Map(state.datasetLocks);
      for (const lock of event.data.datasetLocks) datasetLocks.set(lockKey(lock.scope, lock.name, lock.rseId), lock);
      return { ...state, locks, datasetLocks, counters: event.data.counters };
    }
    case 'RuleLocksRemoved': {
      const locks = new Map(state.locks);
      for (const lock of event.data.locks) locks.delete(lockKey(lock.scope, lock.name, lock.rseId));
      const datasetLocks = new Map(state.datasetLocks);
      for (const lock of event.data.datasetLocks) datasetLocks.delete(lockKey(lock.scope, lock.name, lock.rseId));
      return { ...state, locks, datasetLocks, counters: event.data.counters };
    }
    case 'RuleLocksChanged': {
      const locks = new Map(state.locks);
      const retried = event.data.cause.kind === 'repair';
      for (const { previousState: _previous, ...lock } of event.data.locks) {
        const key = lockKey(lock.scope, lock.name, lock.rseId);
        const repairs = (state.locks.get(key)?.repairs ?? 0) + (retried && lock.state === 'REPLICATING' ? 1 : 0);
        locks.set(key, { ...lock, since: event.data.at, repairs });
      }
      return { ...state, locks, counters: event.data.counters };
    }
    case 'RuleStateChanged':
      return {
        ...state,
        state: event.data.state,
        error: event.data.error,
        stuckAt: event.data.stuckAt,
        counters: event.data.counters,
      };
    case 'RuleUpdated': {
      const { childRuleId, ...changes } = event.data.changes;
      return {
        ...state,
        record: { ...state.record, ...changes },
        childRuleId: childRuleId === undefined ? state.childRuleId : childRuleId,
      };
    }
    case 'RuleApproved':
      return { ...state, state: 'INJECT', record: { ...state.record, ignoreAccountLimit: true } };
    case 'RuleDenied':
    case 'RuleDeleted':
      return { status: 'Deleted', record: state.record };
    case 'RuleNotified':
      return state;
    default:
      return state;
  }
};

/** The rule's DID. */
export const ruleDid = (record: RuleRecord): DidRef => ({ scope: record.scope, name: record.name });
