import type {
  DatasetLock,
  LockCounters,
  LockState,
  RuleCause,
  RuleLock,
  RuleNotification,
  RuleNotified,
  RuleState,
} from './rule.ts';

/**
 * How a rule's lock counters drive its state (Rucio's §3.7 table), and the messages a rule emits
 * when it is done. Pure helpers of the rule decider.
 */

export const countLocks = (locks: Iterable<Pick<RuleLock, 'state'>>): LockCounters => {
  let ok = 0;
  let replicating = 0;
  let stuck = 0;
  for (const lock of locks) {
    if (lock.state === 'OK') ok += 1;
    else if (lock.state === 'REPLICATING') replicating += 1;
    else stuck += 1;
  }
  return { ok, replicating, stuck };
};

const bump = (counters: LockCounters, state: LockState, delta: number): LockCounters => {
  switch (state) {
    case 'OK':
      return { ...counters, ok: counters.ok + delta };
    case 'REPLICATING':
      return { ...counters, replicating: counters.replicating + delta };
    case 'STUCK':
      return { ...counters, stuck: counters.stuck + delta };
  }
};

/** Counters after some locks moved from one state to another. */
export const moveCounters = (
  counters: LockCounters,
  moves: readonly Readonly<{ from: LockState; to: LockState }>[],
): LockCounters => moves.reduce((current, move) => bump(bump(current, move.from, -1), move.to, 1), counters);

/** The state a rule gets from its counters when its locks are (re)computed: creation, injection, repair. */
export const stateFromCounters = (counters: LockCounters): RuleState =>
  counters.stuck > 0 ? 'STUCK' : counters.replicating > 0 ? 'REPLICATING' : 'OK';

/**
 * The state after a step changed the locks, given the state before. SUSPENDED and
 * WAITING_APPROVAL never change this way; INJECT only through injection.
 */
export const stateAfterLocks = (
  state: RuleState,
  counters: LockCounters,
  cause: RuleCause['kind'],
  newStuck: boolean,
): RuleState => {
  if (state === 'SUSPENDED' || state === 'WAITING_APPROVAL') return state;
  switch (cause) {
    case 'creation':
    case 'injection':
    case 'repair':
      return stateFromCounters(counters);
    case 'attach':
      if (state === 'STUCK') return 'STUCK';
      if (newStuck) return 'STUCK';
      return counters.replicating > 0 ? 'REPLICATING' : 'OK';
    case 'detach':
    case 'deletion':
      if (state === 'STUCK') return state;
      return counters.replicating === 0 && counters.stuck === 0 ? 'OK' : state;
    case 'recovery':
      // A bad replica copied again puts its locks back to REPLICATING; a lost one takes its locks away.
      if (state === 'STUCK') return state;
      if (counters.replicating > 0) return 'REPLICATING';
      return counters.stuck === 0 ? 'OK' : state;
    case 'transfer':
      if (newStuck) return 'STUCK';
      // A STUCK rule whose last stuck lock turns OK stays STUCK until the repairer runs (Rucio does so).
      if (state === 'REPLICATING' && counters.replicating === 0 && counters.stuck === 0) return 'OK';
      return state;
    case 'update':
      return state;
  }
};

/**
 * What a rule that just became OK tells the world (§3.17): with `notify` YES a RULE_OK and a
 * DATASETLOCK_OK per dataset lock; with CLOSE or PROGRESS only once its DID is closed (PROGRESS
 * adds RULE_PROGRESS at 100 %, CLOSE DATASETLOCK_OK for closed datasets).
 */
export const okMessages = (
  rule: Readonly<{ ruleId: string; scope: string; name: string; notification: RuleNotification }>,
  datasetLocks: readonly DatasetLock[],
  didClosed: boolean,
): RuleNotified['data']['messages'] => {
  const ruleOk = {
    eventType: 'RULE_OK' as const,
    payload: { scope: rule.scope, name: rule.name, rule_id: rule.ruleId },
  };
  const datasetOk = (lock: DatasetLock) => ({
    eventType: 'DATASETLOCK_OK' as const,
    payload: { scope: lock.scope, name: lock.name, rse: lock.rse, rse_id: lock.rseId, rule_id: rule.ruleId },
  });
  switch (rule.notification) {
    case 'NO':
      return [];
    case 'YES':
      return [ruleOk, ...datasetLocks.map(datasetOk)];
    case 'CLOSE':
      return didClosed ? [ruleOk, ...datasetLocks.filter((lock) => lock.length !== null).map(datasetOk)] : [];
    case 'PROGRESS':
      return didClosed
        ? [
            ruleOk,
            {
              eventType: 'RULE_PROGRESS',
              payload: { scope: rule.scope, name: rule.name, rule_id: rule.ruleId, progress: 100 },
            },
          ]
        : [];
  }
};

/** Rucio's progress class of a rule: the share of its locks no longer replicating, in tens of percent, rounded down. */
export const progressClass = (replicating: number, total: number): number =>
  total <= 0 ? 0 : Math.floor(((total - replicating) / total) * 10) * 10;

/**
 * What a PROGRESS rule still REPLICATING tells the world when some of its locks turned OK (§3.17):
 * RULE_PROGRESS with the new class, once its DID is closed and when the class changed.
 */
export const progressMessages = (
  rule: Readonly<{ ruleId: string; scope: string; name: string; notification: RuleNotification }>,
  before: LockCounters,
  after: LockCounters,
  didClosed: boolean,
): RuleNotified['data']['messages'] => {
  if (rule.notification !== 'PROGRESS' || !didClosed || before.replicating === 0 || after.replicating === 0) return [];
  const total = after.ok + after.replicating;
  const progress = progressClass(after.replicating, total);
  if (progressClass(before.replicating, total) === progress) return [];
  return [
    { eventType: 'RULE_PROGRESS', payload: { scope: rule.scope, name: rule.name, rule_id: rule.ruleId, progress } },
  ];
};
