import type {
  DatasetLock,
  LockCounters,
  LockState,
  RuleCause,
  RuleEvent,
  RuleLock,
  RuleRecord,
  RuleState,
} from '../../domain/rule/rule.ts';
import { ruleDecider, type RuleCommand } from '../../domain/rule/ruleDecider.ts';
import { UnsupportedOperation } from '../../domain/shared/errors.ts';
import { RuleNotFound } from '../../domain/rule/ruleErrors.ts';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

/**
 * The rule decider (domain/rule/ruleDecider.ts), as the command handler runs it on a rule's
 * stream: its counters and state follow the locks the files' streams decided (§3.7), with its
 * notifications (§3.17), approval, options and deletion. Rules cited by number are those of
 * docs/behaviour-rules.md.
 */
const given = deciderSpec<RuleCommand, RuleEvent, ReturnType<typeof ruleDecider.initialState>>(ruleDecider);

const RSE_ID = 'a'.repeat(32);
const record: RuleRecord = {
  id: 'r1',
  scope: 'user.jdoe',
  name: 'ds',
  didType: 'DATASET',
  account: 'jdoe',
  rseExpression: 'SITE_A',
  copies: 1,
  grouping: 'DATASET',
  weight: null,
  locked: false,
  subscriptionId: null,
  sourceReplicaExpression: null,
  activity: 'User Subscriptions',
  notification: 'NO',
  purgeReplicas: false,
  ignoreAvailability: false,
  ignoreAccountLimit: false,
  priority: 3,
  splitContainer: false,
  comments: null,
  meta: null,
  expiresAt: null,
  eolAt: null,
  createdAt: AT,
  injectAfter: null,
  requestedBy: 'jdoe',
};
const ref = { ruleId: 'r1', scope: 'user.jdoe', name: 'ds', account: 'jdoe' };
const lock = (name: string, state: LockState = 'REPLICATING'): RuleLock => ({
  scope: 'user.jdoe',
  name,
  rseId: RSE_ID,
  rse: 'SITE_A',
  bytes: 10,
  state,
});
const lockRef = (name: string) => ({ scope: 'user.jdoe', name, rseId: RSE_ID });
const datasetLock: DatasetLock = { scope: 'user.jdoe', name: 'ds', rseId: RSE_ID, rse: 'SITE_A', length: 2, bytes: 20 };
const counters = (ok: number, replicating: number, stuck = 0): LockCounters => ({ ok, replicating, stuck });

const command = <T extends RuleCommand['type']>(type: T, data: object) =>
  ({ type, data: { ruleId: 'r1', ...data }, metadata: metadata() }) as Extract<RuleCommand, { type: T }>;

const added = (state: RuleState = 'REPLICATING', rule: RuleRecord = record): RuleEvent => ({
  type: 'RuleAdded',
  data: {
    rule,
    state,
    error: state === 'STUCK' ? 'MissingSourceReplica' : null,
    targetRses: ['SITE_A'],
    autoLocked: false,
  },
});
const locksCreated = (
  locks: RuleLock[],
  after: LockCounters,
  cause: RuleCause = { kind: 'creation' },
  datasetLocks: DatasetLock[] = [],
): RuleEvent => ({ type: 'RuleLocksCreated', data: { ...ref, locks, datasetLocks, counters: after, cause, at: AT } });
const stateChanged = (
  previousState: RuleState,
  state: RuleState,
  after: LockCounters,
  cause: RuleCause,
  extra: { error?: string | null; stuckAt?: string | null } = {},
): RuleEvent => ({
  type: 'RuleStateChanged',
  data: { ...ref, previousState, state, error: null, counters: after, stuckAt: null, cause, at: AT, ...extra },
});
const updated = (changes: object): RuleEvent => ({ type: 'RuleUpdated', data: { ...ref, changes, at: AT } });
const deleted: RuleEvent = {
  type: 'RuleDeleted',
  data: { ...ref, purgeReplicas: false, cause: { kind: 'deletion' }, at: AT },
};

/** A rule replicating one file, f1. */
const replicating = [added(), locksCreated([lock('f1')], counters(0, 1))];

describe('Rule decider: AddRule (rules 13, 14, 16)', () => {
  const add = (extra: object = {}) =>
    command('AddRule', {
      rule: record,
      state: null,
      locks: [lock('f1')],
      datasetLocks: [],
      targetRses: ['SITE_A'],
      autoLocked: false,
      didClosed: false,
      ...extra,
    });

  it('adds a rule REPLICATING its first locks', () =>
    given([])
      .when(add())
      .then([added(), locksCreated([lock('f1')], counters(0, 1))]));

  it('adds a rule in INJECT without locks', () =>
    given([])
      .when(add({ state: 'INJECT', locks: [] }))
      .then([added('INJECT')]));

  it('adds a rule STUCK when a first lock has no source', () =>
    given([])
      .when(add({ locks: [lock('f1', 'STUCK')] }))
      .then([added('STUCK'), locksCreated([lock('f1', 'STUCK')], counters(0, 0, 1))]));

  it('notifies a rule that is OK at once, with notification YES (§3.17)', () => {
    const rule = { ...record, notification: 'YES' as const };
    given([])
      .when(add({ rule, locks: [lock('f1', 'OK')], datasetLocks: [datasetLock] }))
      .then([
        added('OK', rule),
        locksCreated([lock('f1', 'OK')], counters(1, 0), { kind: 'creation' }, [datasetLock]),
        {
          type: 'RuleNotified',
          data: {
            ...ref,
            messages: [
              { eventType: 'RULE_OK', payload: { scope: 'user.jdoe', name: 'ds', rule_id: 'r1' } },
              {
                eventType: 'DATASETLOCK_OK',
                payload: { scope: 'user.jdoe', name: 'ds', rse: 'SITE_A', rse_id: RSE_ID, rule_id: 'r1' },
              },
            ],
            at: AT,
          },
        },
      ]);
  });

  it('adds nothing when the rule exists already (a step run again)', () =>
    given(replicating).when(add()).thenNothingHappened());
});

describe('Rule decider: RecordLocks (attach and injection, rules 16 and 19)', () => {
  const record_ = (locks: RuleLock[], cause: RuleCause, final = false) =>
    command('RecordLocks', { locks, datasetLocks: [], cause, didClosed: false, final });

  it('records the locks of an attach, and an OK rule replicates again', () =>
    given([added('OK'), locksCreated([lock('f1', 'OK')], counters(1, 0))])
      .when(record_([lock('f2')], { kind: 'attach' }))
      .then([
        locksCreated([lock('f2')], counters(1, 1), { kind: 'attach' }),
        stateChanged('OK', 'REPLICATING', counters(1, 1), { kind: 'attach' }),
      ]));

  it('records nothing for a lock it holds already', () =>
    given(replicating)
      .when(record_([lock('f1')], { kind: 'attach' }))
      .thenNothingHappened());

  it('records the last step of an injection with the state its locks give', () =>
    given([added('INJECT')])
      .when(record_([lock('f1')], { kind: 'injection' }, true))
      .then([
        locksCreated([lock('f1')], counters(0, 1), { kind: 'injection' }),
        stateChanged('INJECT', 'REPLICATING', counters(0, 1), { kind: 'injection' }),
      ]));

  it('keeps a rule in INJECT until the last step of its injection', () =>
    given([added('INJECT')])
      .when(record_([lock('f1')], { kind: 'injection' }))
      .then([locksCreated([lock('f1')], counters(0, 1), { kind: 'injection' })]));

  it('refuses a rule that does not exist', () =>
    given([])
      .when(record_([lock('f1')], { kind: 'attach' }))
      .thenThrows(RuleNotFound, /No rule with the id r1 found/));
});

describe('Rule decider: RemoveLocks (detach, rule 19)', () => {
  const remove = (...names: string[]) =>
    command('RemoveLocks', {
      locks: names.map(lockRef),
      datasetLocks: [],
      cause: { kind: 'detach' },
      didClosed: false,
    });

  it('removes the locks, and a rule left with OK locks only is OK', () =>
    given([added(), locksCreated([lock('f1', 'OK'), lock('f2')], counters(1, 1))])
      .when(remove('f2'))
      .then([
        {
          type: 'RuleLocksRemoved',
          data: {
            ...ref,
            locks: [lock('f2')],
            datasetLocks: [],
            counters: counters(1, 0),
            cause: { kind: 'detach' },
            at: AT,
          },
        },
        stateChanged('REPLICATING', 'OK', counters(1, 0), { kind: 'detach' }),
      ]));

  it('removes nothing for a lock it does not hold', () => given(replicating).when(remove('f9')).thenNothingHappened());
});

describe('Rule decider: ChangeLocks (transfers, rules 17 and 18)', () => {
  const change = (state: LockState, extra: object = {}) =>
    command('ChangeLocks', {
      locks: [{ ...lockRef('f1'), state }],
      cause: { kind: 'transfer' },
      error: null,
      didClosed: false,
      ...extra,
    });

  it('makes a rule whose last lock arrived OK', () =>
    given(replicating)
      .when(change('OK'))
      .then([
        {
          type: 'RuleLocksChanged',
          data: {
            ...ref,
            locks: [{ ...lock('f1', 'OK'), previousState: 'REPLICATING' }],
            counters: counters(1, 0),
            cause: { kind: 'transfer' },
            at: AT,
          },
        },
        stateChanged('REPLICATING', 'OK', counters(1, 0), { kind: 'transfer' }),
      ]));

  it('makes a rule STUCK with the transfer’s error, from now', () =>
    given(replicating)
      .when(change('STUCK', { error: 'transfer failed' }))
      .then([
        {
          type: 'RuleLocksChanged',
          data: {
            ...ref,
            locks: [{ ...lock('f1', 'STUCK'), previousState: 'REPLICATING' }],
            counters: counters(0, 0, 1),
            cause: { kind: 'transfer' },
            at: AT,
          },
        },
        stateChanged(
          'REPLICATING',
          'STUCK',
          counters(0, 0, 1),
          { kind: 'transfer' },
          {
            error: 'transfer failed',
            stuckAt: AT,
          },
        ),
      ]));

  it('reports each new tenth done of a PROGRESS rule on a closed DID (§3.17)', () => {
    const rule = { ...record, notification: 'PROGRESS' as const };
    given([added('REPLICATING', rule), locksCreated([lock('f1'), lock('f2')], counters(0, 2))])
      .when(change('OK', { didClosed: true }))
      .then([
        {
          type: 'RuleLocksChanged',
          data: {
            ...ref,
            locks: [{ ...lock('f1', 'OK'), previousState: 'REPLICATING' }],
            counters: counters(1, 1),
            cause: { kind: 'transfer' },
            at: AT,
          },
        },
        {
          type: 'RuleNotified',
          data: {
            ...ref,
            messages: [
              {
                eventType: 'RULE_PROGRESS',
                payload: { scope: 'user.jdoe', name: 'ds', rule_id: 'r1', progress: 50 },
              },
            ],
            at: AT,
          },
        },
      ]);
  });

  it('changes nothing for a lock already in that state', () =>
    given(replicating).when(change('REPLICATING')).thenNothingHappened());
});

describe('Rule decider: SetRuleState (update_rule with state)', () => {
  const set = (state: string) => command('SetRuleState', { state });

  it('hands a rule to the repairer as STUCK, whatever the case of the state asked', () =>
    given(replicating)
      .when(set('stuck'))
      .then([stateChanged('REPLICATING', 'STUCK', counters(0, 1), { kind: 'update' }, { stuckAt: AT })]));

  it('suspends a rule', () =>
    given(replicating)
      .when(set('SUSPENDED'))
      .then([stateChanged('REPLICATING', 'SUSPENDED', counters(0, 1), { kind: 'update' })]));

  it('ignores any other state, as Rucio does', () => given(replicating).when(set('OK')).thenNothingHappened());
});

describe('Rule decider: UpdateRuleOptions', () => {
  const update = (changes: object) => command('UpdateRuleOptions', { changes });

  it('records only the options that change', () =>
    given(replicating)
      .when(update({ comments: 'kept for the run', locked: false }))
      .then([updated({ comments: 'kept for the run' })]));

  it('records nothing when no option changes', () =>
    given(replicating)
      .when(update({ locked: false }))
      .thenNothingHappened());

  it('moves the usage of the rule’s locks to its new owner', () =>
    given([added(), locksCreated([lock('f1'), lock('f2', 'OK')], counters(1, 1))])
      .when(update({ account: 'alice' }))
      .then([
        {
          type: 'RuleUpdated',
          data: {
            ...ref,
            changes: { account: 'alice' },
            movedUsage: [{ rseId: RSE_ID, rse: 'SITE_A', files: 2, bytes: 20 }],
            at: AT,
          },
        },
      ]));
});

describe('Rule decider: RecountRule (the repairer, rule 18)', () => {
  const recount = command('RecountRule', { didClosed: false });

  it('makes a STUCK rule whose locks recovered OK', () =>
    given([added('STUCK'), locksCreated([lock('f1', 'OK')], counters(1, 0))])
      .when(recount)
      .then([stateChanged('STUCK', 'OK', counters(1, 0), { kind: 'repair' })]));

  it('leaves a SUSPENDED rule alone', () =>
    given([...replicating, stateChanged('REPLICATING', 'SUSPENDED', counters(0, 1), { kind: 'update' })])
      .when(recount)
      .thenNothingHappened());
});

describe('Rule decider: ApproveRule and DenyRule (rules 12 and 16)', () => {
  const waiting = [added('WAITING_APPROVAL')];

  it('approves a rule waiting for approval, naming the approver', () =>
    given(waiting)
      .when(command('ApproveRule', {}))
      .then([{ type: 'RuleApproved', data: { ...ref, approver: 'root', at: AT } }]));

  it('approves nothing of a rule not waiting', () =>
    given(replicating).when(command('ApproveRule', {})).thenNothingHappened());

  it('refuses to approve a rule that does not exist', () =>
    given([]).when(command('ApproveRule', {})).thenThrows(RuleNotFound));

  it('denies a rule waiting for approval, with the reason', () =>
    given(waiting)
      .when(command('DenyRule', { reason: 'no space' }))
      .then([{ type: 'RuleDenied', data: { ...ref, approver: 'root', reason: 'no space', at: AT } }]));

  it('denies nothing of a rule not waiting', () =>
    given(replicating)
      .when(command('DenyRule', { reason: null }))
      .thenNothingHappened());
});

describe('Rule decider: RequestRuleDeletion (the API’s DELETE, rule 20)', () => {
  const request = (purgeReplicas: boolean | null = null) => command('RequestRuleDeletion', { purgeReplicas });

  it('makes the rule expire within the hour', () =>
    given(replicating)
      .when(request())
      .then([updated({ expiresAt: '2026-11-22T11:00:00.000Z' })]));

  it('keeps a sooner expiry, and records the purge asked for', () =>
    given([added('REPLICATING', { ...record, expiresAt: '2026-11-22T10:30:00.000Z' })])
      .when(request(true))
      .then([updated({ purgeReplicas: true })]));

  it('records nothing when the rule expires sooner and nothing else is asked', () =>
    given([added('REPLICATING', { ...record, expiresAt: '2026-11-22T10:30:00.000Z' })])
      .when(request())
      .thenNothingHappened());

  it('refuses a locked rule', () =>
    given([added('REPLICATING', { ...record, locked: true })])
      .when(request())
      .thenThrows(UnsupportedOperation, /locked/));

  it('refuses a rule with a child rule', () =>
    given([...replicating, updated({ childRuleId: 'r2' })])
      .when(request())
      .thenThrows(UnsupportedOperation, /child rule/));
});

describe('Rule decider: DeleteRule (the cleaner, a denial, a replacement, rule 20)', () => {
  const remove = (extra: object = {}) =>
    command('DeleteRule', {
      purgeReplicas: null,
      cause: { kind: 'deletion' },
      ignoreLock: false,
      deleteParent: false,
      ...extra,
    });

  it('deletes the rule with all its locks', () =>
    given([added(), locksCreated([lock('f1')], counters(0, 1), { kind: 'creation' }, [datasetLock])])
      .when(remove())
      .then([
        {
          type: 'RuleLocksRemoved',
          data: {
            ...ref,
            locks: [lock('f1')],
            datasetLocks: [datasetLock],
            counters: counters(0, 0),
            cause: { kind: 'deletion' },
            at: AT,
          },
        },
        deleted,
      ]));

  it('deletes nothing of a rule deleted already', () =>
    given([...replicating, deleted])
      .when(remove())
      .thenNothingHappened());

  it('refuses a locked rule', () =>
    given([added('INJECT', { ...record, locked: true })])
      .when(remove())
      .thenThrows(UnsupportedOperation, /locked/));

  it('deletes a locked rule when told to ignore the lock', () =>
    given([added('INJECT', { ...record, locked: true })])
      .when(remove({ ignoreLock: true }))
      .then([deleted]));

  it('deletes a parent rule when told to', () =>
    given([added('INJECT'), updated({ childRuleId: 'r2' })])
      .when(remove({ deleteParent: true }))
      .then([deleted]));
});
