import type { SubscriptionEvent, SubscriptionRecord } from '../../domain/subscription/subscription.ts';
import { subscriptionDecider, type SubscriptionCommand } from '../../domain/subscription/subscriptionDecider.ts';
import { subscriptionDryRunDecider } from '../../domain/subscription/subscriptionDryRun.ts';
import { subscriptionNamesDecider } from '../../domain/subscription/subscriptionNames.ts';
import { SubscriptionDuplicate, SubscriptionNotFound } from '../../domain/subscription/subscriptionErrors.ts';
import { AT, deciderSpec, metadata, NOW } from '../support/deciderSpec.ts';

const given = deciderSpec(subscriptionDecider);
const record = (extra: Partial<SubscriptionRecord> = {}): SubscriptionRecord => ({
  id: 'sub1',
  name: 'daily',
  account: 'root',
  filter: { scope: ['mc16_.*'] },
  replicationRules: [{ copies: 1, rse_expression: 'CERN_DISK' }],
  comments: null,
  lifetime: null,
  retroactive: false,
  dryRun: false,
  priority: 3,
  createdAt: AT,
  ...extra,
});
const added = (extra: Partial<SubscriptionRecord> = {}, state: 'ACTIVE' | 'NEW' = 'ACTIVE'): SubscriptionEvent => ({
  type: 'SubscriptionAdded',
  data: { subscription: record(extra), state },
});
const ref = { id: 'sub1', account: 'root', name: 'daily' };
const update = (changes: object, deactivate = false): SubscriptionCommand => ({
  type: 'UpdateSubscription',
  data: { ...ref, changes, deactivate },
  metadata: metadata(),
});

describe('Decider: subscriptions (§7)', () => {
  describe('adding', () => {
    it('adds it ACTIVE', () =>
      given([])
        .when({ type: 'AddSubscription', data: { subscription: record() }, metadata: metadata() })
        .then([added()]));
    it('adds a retroactive one NEW', () =>
      given([])
        .when({ type: 'AddSubscription', data: { subscription: record({ retroactive: true }) }, metadata: metadata() })
        .then([added({ retroactive: true }, 'NEW')]));
    it('adds nothing when its id exists', () =>
      given([added()])
        .when({ type: 'AddSubscription', data: { subscription: record() }, metadata: metadata() })
        .thenNothingHappened());
  });

  describe('updating', () => {
    it('records the changed options and leaves it UPDATED', () =>
      given([added()])
        .when(update({ comments: 'new', priority: 3 }))
        .then([
          { type: 'SubscriptionUpdated', data: { ...ref, changes: { comments: 'new' }, state: 'UPDATED', at: AT } },
        ]));
    it('leaves it UPDATED even without options, as Rucio', () =>
      given([added()])
        .when(update({}))
        .then([{ type: 'SubscriptionUpdated', data: { ...ref, changes: {}, state: 'UPDATED', at: AT } }]));
    it('appends nothing for an update that changes nothing on an UPDATED subscription', () =>
      given([added(), { type: 'SubscriptionUpdated', data: { ...ref, changes: {}, state: 'UPDATED', at: AT } }])
        .when(update({ comments: null }))
        .thenNothingHappened());
    it('makes it INACTIVE with state I', () =>
      given([added()])
        .when(update({}, true))
        .then([{ type: 'SubscriptionDeactivated', data: { ...ref, reason: 'requested', at: AT } }]));
    it('records options given with state I before stopping it', () =>
      given([added()])
        .when(update({ comments: 'last words' }, true))
        .then([
          {
            type: 'SubscriptionUpdated',
            data: { ...ref, changes: { comments: 'last words' }, state: 'UPDATED', at: AT },
          },
          { type: 'SubscriptionDeactivated', data: { ...ref, reason: 'requested', at: AT } },
        ]));
    it('brings an INACTIVE subscription back as UPDATED', () =>
      given([added(), { type: 'SubscriptionDeactivated', data: { ...ref, reason: 'requested', at: AT } }])
        .when(update({}))
        .then([{ type: 'SubscriptionUpdated', data: { ...ref, changes: {}, state: 'UPDATED', at: AT } }]));
    it('refuses a subscription that does not exist (SubscriptionNotFound)', () =>
      given([])
        .when(update({}))
        .thenThrows(SubscriptionNotFound, /account 'root' named 'daily' not found/));
  });

  describe('its lifetime', () => {
    const past = new Date(NOW.getTime() - 1000).toISOString();
    it('makes it INACTIVE once over', () =>
      given([added({ lifetime: past })])
        .when({ type: 'ExpireSubscription', data: { id: 'sub1' }, metadata: metadata() })
        .then([{ type: 'SubscriptionDeactivated', data: { ...ref, reason: 'lifetime', at: AT } }]));
    describe('does nothing to a subscription', () => {
      it('that still runs', () =>
        given([added({ lifetime: new Date(NOW.getTime() + 1000).toISOString() })])
          .when({ type: 'ExpireSubscription', data: { id: 'sub1' }, metadata: metadata() })
          .thenNothingHappened());
      it('that is INACTIVE already', () =>
        given([
          added({ lifetime: past }),
          { type: 'SubscriptionDeactivated', data: { ...ref, reason: 'requested', at: AT } },
        ])
          .when({ type: 'ExpireSubscription', data: { id: 'sub1' }, metadata: metadata() })
          .thenNothingHappened());
    });
  });

  describe('the retroactive pass', () => {
    const after = { scope: 's', didType: 'DATASET' as const, name: 'ds9' };
    describe('records how far it got, once per position', () => {
      it('a new position', () =>
        given([added({ retroactive: true }, 'NEW')])
          .when({ type: 'RecordRetroactiveProgress', data: { id: 'sub1', after, dids: 10 }, metadata: metadata() })
          .then([{ type: 'SubscriptionRetroactiveProgressed', data: { ...ref, after, dids: 10, at: AT } }]));
      it('not the same position again', () =>
        given([
          added({ retroactive: true }, 'NEW'),
          { type: 'SubscriptionRetroactiveProgressed', data: { ...ref, after, dids: 10, at: AT } },
        ])
          .when({ type: 'RecordRetroactiveProgress', data: { id: 'sub1', after, dids: 10 }, metadata: metadata() })
          .thenNothingHappened());
    });
    describe('when it is over', () => {
      it('makes a NEW subscription ACTIVE', () =>
        given([added({ retroactive: true }, 'NEW')])
          .when({ type: 'CompleteRetroactivePass', data: { id: 'sub1' }, metadata: metadata() })
          .then([{ type: 'SubscriptionRetroactiveCompleted', data: { ...ref, state: 'ACTIVE', at: AT } }]));
      it('keeps another state', () =>
        given([
          added({ retroactive: true }, 'NEW'),
          { type: 'SubscriptionUpdated', data: { ...ref, changes: {}, state: 'UPDATED', at: AT } },
        ])
          .when({ type: 'CompleteRetroactivePass', data: { id: 'sub1' }, metadata: metadata() })
          .then([{ type: 'SubscriptionRetroactiveCompleted', data: { ...ref, state: 'UPDATED', at: AT } }]));
    });
    it('has nothing to do for a subscription that is not retroactive', () =>
      given([added()])
        .when({ type: 'CompleteRetroactivePass', data: { id: 'sub1' }, metadata: metadata() })
        .thenNothingHappened());
    it('starts again when an update turns retroactive on', () =>
      given([
        added(),
        { type: 'SubscriptionUpdated', data: { ...ref, changes: { retroactive: true }, state: 'UPDATED', at: AT } },
      ])
        .when({ type: 'CompleteRetroactivePass', data: { id: 'sub1' }, metadata: metadata() })
        .then([{ type: 'SubscriptionRetroactiveCompleted', data: { ...ref, state: 'UPDATED', at: AT } }]));
  });
});

describe('Decider: subscription names (§7: unique per account)', () => {
  const names = deciderSpec(subscriptionNamesDecider);
  const claim = (subscriptionId: string) => ({
    type: 'ClaimSubscriptionName' as const,
    data: { account: 'root', name: 'daily', subscriptionId },
    metadata: metadata(),
  });
  const claimed = {
    type: 'SubscriptionNameClaimed' as const,
    data: { account: 'root', name: 'daily', subscriptionId: 'sub1' },
  };
  it('claims a free name', () => names([]).when(claim('sub1')).then([claimed]));
  it('refuses a name another subscription holds (SubscriptionDuplicate)', () =>
    names([claimed])
      .when(claim('sub2'))
      .thenThrows(SubscriptionDuplicate, /Subscription 'daily' owned by 'root' already exists!/));
  it('does nothing when the same subscription claims it again', () =>
    names([claimed]).when(claim('sub1')).thenNothingHappened());
});

describe('Decider: dry runs of a subscription', () => {
  const dryRuns = deciderSpec(subscriptionDryRunDecider);
  const data = {
    subscriptionId: 'sub1',
    subscriptionName: 'daily',
    account: 'root',
    scope: 's',
    name: 'ds',
    didType: 'DATASET' as const,
    rules: [],
  };
  describe('records what would have been made, once', () => {
    it('the first time', () =>
      dryRuns([])
        .when({ type: 'RecordDryRun', data, metadata: metadata() })
        .then([{ type: 'SubscriptionDryRunRecorded', data: { ...data, at: AT } }]));
    it('not again', () =>
      dryRuns([{ type: 'SubscriptionDryRunRecorded', data: { ...data, at: AT } }])
        .when({ type: 'RecordDryRun', data, metadata: metadata() })
        .thenNothingHappened());
  });
});
