import { expect } from 'chai';
import { createAccount } from '../../commands/account/accountCommands.ts';
import { addException, decideException } from '../../commands/lifetimeException/lifetimeExceptionCommands.ts';
import { expireAtEndOfLife, extendEndOfLife } from '../../commands/lifetimeException/endOfLife.ts';
import { setConfigOptions } from '../../commands/config/configCommands.ts';
import { setMetadata } from '../../commands/did/didMetadataCommands.ts';
import { addRules } from '../../commands/rule/ruleCreationCommands.ts';
import { updateRule } from '../../commands/rule/ruleUpdates.ts';
import {
  addSubscription,
  updateSubscription,
  type NewSubscription,
} from '../../commands/subscription/subscriptionCommands.ts';
import {
  markDidProcessed,
  recordSubscriptionDryRun,
  transmogrifyDid,
} from '../../commands/subscription/subscriptionRuleCommands.ts';
import { AccessDenied, AccountNotFound, UnsupportedOperation } from '../../domain/shared/errors.ts';
import { LifetimeExceptionDuplicate } from '../../domain/lifetimeException/lifetimeExceptionErrors.ts';
import { SubscriptionDuplicate, SubscriptionNotFound } from '../../domain/subscription/subscriptionErrors.ts';
import { plannedRule, subscriptionRuleId } from '../../domain/subscription/subscriptionRules.ts';
import { as, commandSpec, SPEC_NOW } from '../support/commandSpec.ts';
import type { StreamedEvent } from '../support/projectionHarness.ts';
import { aDataset, aRuleRequest, aWorld, SCOPE } from '../support/rules.ts';

const types = (events: readonly StreamedEvent[]) =>
  events.map((event) => `${event.stream.replace(/-.*/, '')} ${event.type}`);
const subscription = (extra: Partial<NewSubscription> = {}): NewSubscription => ({
  account: 'root',
  name: 'daily',
  filter: { scope: [SCOPE] },
  replicationRules: [{ copies: 1, rse_expression: 'SITE_A' }],
  comments: null,
  lifetimeDays: null,
  retroactive: false,
  dryRun: false,
  priority: 3,
  ...extra,
});
const root = as('root');
const daemon = { ...root, causationId: 'transmogrifier/job-1/user.root:ds' };
type Context = Parameters<typeof aWorld>[0];
const world = async (context: Context, settle: () => Promise<void>) => {
  await aWorld(context, { SITE_A: {}, SITE_B: {} });
  await aDataset(context, 'ds', [], 'SITE_A');
  await createAccount(context, { account: 'jdoe', accountType: 'USER', email: 'jdoe@example.org' }, root);
  await settle();
};

describe('Commands: subscriptions (§7)', () => {
  const spec = commandSpec();

  it("adds a subscription, claiming its name on the account's names stream in the same step", () =>
    spec
      .given(world)
      .when((context) => addSubscription(context, subscription({ lifetimeDays: 1 }), root))
      .thenAppended((events) => {
        expect(types(events)).to.deep.equal([
          'subscriptionnames SubscriptionNameClaimed',
          'subscription SubscriptionAdded',
        ]);
        const added = events[1]!.data as { subscription: { id: string; lifetime: string }; state: string };
        expect(events[0]!.data).to.deep.equal({
          account: 'root',
          name: 'daily',
          subscriptionId: added.subscription.id,
        });
        expect(added.state).to.equal('ACTIVE');
        expect(added.subscription.lifetime).to.equal(new Date(SPEC_NOW.getTime() + 86_400_000).toISOString());
      }));

  it('refuses a name the account uses already, writing nothing (SubscriptionDuplicate)', () =>
    spec
      .given(async (context, settle) => {
        await world(context, settle);
        await addSubscription(context, subscription(), root);
      })
      .when((context) => addSubscription(context, subscription({ filter: {} }), root))
      .thenRefused(SubscriptionDuplicate));

  it('refuses non-admins and unknown owners', async () => {
    await spec
      .given(world)
      .when((context) => addSubscription(context, subscription({ account: 'jdoe' }), as('jdoe')))
      .thenRefused(AccessDenied);
  });
  it('refuses an owner that does not exist', () =>
    spec
      .given(world)
      .when((context) => addSubscription(context, subscription({ account: 'ghost' }), root))
      .thenRefused(AccountNotFound));

  it("updates the subscription the account's name points to", () =>
    spec
      .given(async (context, settle) => {
        await world(context, settle);
        await addSubscription(context, subscription(), root);
      })
      .when((context) =>
        updateSubscription(
          context,
          { account: 'root', name: 'daily', update: { comments: 'changed', deactivate: true } },
          root,
        ),
      )
      .thenAppended((events) =>
        expect(types(events)).to.deep.equal([
          'subscription SubscriptionUpdated',
          'subscription SubscriptionDeactivated',
        ]),
      ));

  it('refuses to update a name the account does not use (SubscriptionNotFound)', () =>
    spec
      .given(world)
      .when((context) =>
        updateSubscription(context, { account: 'root', name: 'nothing', update: { deactivate: false } }, root),
      )
      .thenRefused(SubscriptionNotFound));
});

describe("Commands: the transmogrifier's rules (§7)", () => {
  const spec = commandSpec();
  const did = { scope: SCOPE, name: 'ds', didType: 'DATASET' as const };
  /** One subscription's rules for the DID, made as the transmogrifier makes them (the flag left alone). */
  const make = (
    context: Parameters<typeof transmogrifyDid>[0],
    subscriptionId: string,
    rules: ReturnType<typeof rulesFor>,
    metadata = daemon,
  ) => transmogrifyDid(context, { did, subscriptions: [{ subscriptionId, rules }], markProcessed: false }, metadata);
  const rulesFor = (subscriptionId: string, templates: Record<string, unknown>[], split = false) =>
    templates.map((template, index) => ({
      ...plannedRule(template, index, { id: subscriptionId, account: 'root', comments: null }, did, {
        wildcardCopies: 1,
        defaultActivity: 'default',
        split,
      }),
      ruleId: subscriptionRuleId(subscriptionId, did, index),
    }));

  it('makes each rule through add_rule, with the subscription on it and the id derived for it', () =>
    spec
      .given(world)
      .when((context) => make(context, 'sub1', rulesFor('sub1', [{ copies: 1, rse_expression: 'SITE_A' }])))
      .thenAppended((events) => {
        const added = events.find((event) => event.type === 'RuleAdded')!.data as {
          rule: { id: string; subscriptionId: string; rseExpression: string };
        };
        expect(added.rule).to.include({
          id: subscriptionRuleId('sub1', did, 0),
          subscriptionId: 'sub1',
          rseExpression: 'SITE_A',
        });
      }));

  it('does nothing when run again: the rule exists', () =>
    spec
      .given(async (context, settle) => {
        await world(context, settle);
        await make(context, 'sub1', rulesFor('sub1', [{ copies: 1, rse_expression: 'SITE_A' }]));
      })
      .when(async (context) => {
        const outcomes = await make(context, 'sub1', rulesFor('sub1', [{ copies: 1, rse_expression: 'SITE_A' }]), {
          ...daemon,
          causationId: 'transmogrifier/job-2/x',
        });
        expect(outcomes.map((outcome) => outcome.outcome)).to.deep.equal(['exists']);
      })
      .thenNothingHappened());

  it('reports a rule add_rule refuses (a duplicate of another rule, rule 11) and makes the others', () =>
    spec
      .given(async (context, settle) => {
        await world(context, settle);
        await addRules(context, aRuleRequest('ds', 'SITE_A'), root);
      })
      .when(async (context) => {
        const outcomes = await make(
          context,
          'sub1',
          rulesFor('sub1', [
            { copies: 1, rse_expression: 'SITE_A' },
            { copies: 1, rse_expression: 'SITE_B' },
          ]),
        );
        expect(outcomes.map((outcome) => [outcome.outcome, outcome.reason?.split(':')[0]])).to.deep.equal([
          ['refused', 'DuplicateRule'],
          ['created', undefined],
        ]);
      })
      .thenAppended((events) => expect(events.filter((event) => event.type === 'RuleAdded')).to.have.length(1)));

  it('makes one rule of one copy per chosen RSE for split_rule, and none more when run again', () =>
    spec
      .given(world)
      .when(async (context) => {
        const rules = rulesFor('sub1', [{ copies: 2, rse_expression: 'SITE_A|SITE_B' }], true);
        await make(context, 'sub1', rules);
        const again = await make(context, 'sub1', rules, { ...daemon, causationId: 'again' });
        expect(again.map((outcome) => outcome.outcome)).to.deep.equal(['covered']);
      })
      .thenAppended((events) => {
        const added = events
          .filter((event) => event.type === 'RuleAdded')
          .map((event) => (event.data as { rule: { rseExpression: string; copies: number; id: string } }).rule);
        expect(added.map((rule) => [rule.rseExpression, rule.copies]).sort()).to.deep.equal([
          ['SITE_A', 1],
          ['SITE_B', 1],
        ]);
        expect(added.map((rule) => rule.id).sort()).to.deep.equal(
          [subscriptionRuleId('sub1', did, 0, 'SITE_A'), subscriptionRuleId('sub1', did, 0, 'SITE_B')].sort(),
        );
      }));

  it("makes the rules of every matching subscription and clears the DID's is_new flag in one step", () =>
    spec
      .given(world)
      .when(async (context) => {
        const subscriptions = [
          { subscriptionId: 'sub1', rules: rulesFor('sub1', [{ copies: 1, rse_expression: 'SITE_A' }]) },
          { subscriptionId: 'sub2', rules: rulesFor('sub2', [{ copies: 1, rse_expression: 'SITE_B' }]) },
        ];
        const before = await context.eventStore.headPosition();
        const outcomes = await transmogrifyDid(context, { did, subscriptions, markProcessed: true }, daemon);
        expect(outcomes.map((outcome) => outcome.outcome)).to.deep.equal(['created', 'created']);
        // One decision: every event carries the job's own cause (the one-at-a-time path derives one per rule).
        const appended = await context.eventStore.readAll({ after: before, maxCount: 100_000 });
        expect(new Set(appended.map((event) => event.metadata.causationId))).to.deep.equal(
          new Set([daemon.causationId]),
        );
      })
      .thenAppended((events) => {
        expect(
          events
            .filter((event) => event.type === 'RuleAdded')
            .map((event) => (event.data as { rule: { subscriptionId: string } }).rule.subscriptionId),
        ).to.deep.equal(['sub1', 'sub2']);
        expect(events.filter((event) => event.type === 'DidMetadataSet').map((event) => event.data)).to.deep.equal([
          { scope: SCOPE, name: 'ds', columns: { is_new: null }, json: {}, setAt: SPEC_NOW.toISOString() },
        ]);
      }));

  it('makes the rules one at a time when the step is refused, reporting the duplicate (rule 11) and still clearing the flag', () =>
    spec
      .given(async (context, settle) => {
        await world(context, settle);
        await addRules(context, aRuleRequest('ds', 'SITE_A'), root);
      })
      .when(async (context) => {
        const subscriptions = [
          { subscriptionId: 'sub1', rules: rulesFor('sub1', [{ copies: 1, rse_expression: 'SITE_A' }]) },
          { subscriptionId: 'sub2', rules: rulesFor('sub2', [{ copies: 1, rse_expression: 'SITE_B' }]) },
        ];
        const outcomes = await transmogrifyDid(context, { did, subscriptions, markProcessed: true }, daemon);
        expect(outcomes.map((outcome) => [outcome.outcome, outcome.reason?.split(':')[0]])).to.deep.equal([
          ['refused', 'DuplicateRule'],
          ['created', undefined],
        ]);
      })
      .thenAppended((events) => {
        expect(events.filter((event) => event.type === 'RuleAdded')).to.have.length(1);
        expect(events.filter((event) => event.type === 'DidMetadataSet')).to.have.length(1);
      }));

  it('records a dry run once per subscription and DID', () =>
    spec
      .given(world)
      .when(async (context) => {
        const data = { subscriptionId: 'sub1', subscriptionName: 'daily', account: 'root', did, rules: [] };
        await recordSubscriptionDryRun(context, data, daemon);
        await recordSubscriptionDryRun(context, data, { ...daemon, causationId: 'another-job' });
      })
      .thenAppended((events) =>
        expect(types(events)).to.deep.equal(['subscriptiondryrun SubscriptionDryRunRecorded']),
      ));

  it("clears a processed DID's is_new flag, once", () =>
    spec
      .given(world)
      .when(async (context) => {
        await markDidProcessed(context, did, daemon);
        await markDidProcessed(context, did, daemon);
      })
      .then([
        {
          stream: `did-${SCOPE}:ds`,
          type: 'DidMetadataSet',
          data: { scope: SCOPE, name: 'ds', columns: { is_new: null }, json: {}, setAt: SPEC_NOW.toISOString() },
        },
      ]));
});

describe('Commands: lifetime exceptions and atropos (§8)', () => {
  const spec = commandSpec();
  const noneOpen = { hasOpenException: async () => false };
  const withCutoff = async (context: Context, settle: () => Promise<void>) => {
    await world(context, settle);
    await setConfigOptions(
      context,
      { options: [{ section: 'lifetime_model', option: 'cutoff_date', value: '2027-01-01' }] },
      root,
    );
    await setMetadata(
      context,
      { scope: SCOPE, name: 'ds', meta: { eol_at: '2026-06-01' }, recursive: false, single: true },
      root,
    );
    await settle();
  };
  const ask = {
    dids: [{ scope: SCOPE, name: 'ds' }],
    pattern: null,
    comments: 'please',
    expiresAt: '2026-12-01T00:00:00.000Z',
  };

  it('records a WAITING exception for a DID past its end of life before the cutoff, by the requester', () =>
    spec
      .given(withCutoff)
      .when((context) => addException(context, ask, as('jdoe'), noneOpen))
      .thenAppended((events) => {
        expect(types(events)).to.deep.equal(['lifetimeexception ExceptionRequested']);
        expect((events[0]!.data as { exception: object }).exception).to.deep.include({
          account: 'jdoe',
          comments: 'please',
          expiresAt: '2026-12-01T00:00:00.000Z',
          dids: [{ scope: SCOPE, name: 'ds', didType: 'DATASET' }],
        });
      }));

  it('refuses requests without a cutoff date, and duplicates, writing nothing', async () => {
    await spec
      .given(world)
      .when((context) => addException(context, ask, as('jdoe'), noneOpen))
      .thenRefused(UnsupportedOperation, /Cannot submit exception at that date/);
  });
  it('refuses a DID the requester holds an exception for (LifetimeExceptionDuplicate)', () =>
    spec
      .given(withCutoff)
      .when((context) => addException(context, ask, as('jdoe'), { hasOpenException: async () => true }))
      .thenRefused(LifetimeExceptionDuplicate));

  it('lets admins approve, recording who did, and refuses the others', async () => {
    let id = '';
    const requested = async (context: Context, settle: () => Promise<void>) => {
      await withCutoff(context, settle);
      id = (await addException(context, ask, as('jdoe'), noneOpen)).exceptions[0]!.id;
    };
    await spec
      .given(requested)
      .when((context) => decideException(context, { id, state: 'A' }, root))
      .thenAppended((events) =>
        expect(events).to.deep.equal([
          {
            stream: `lifetimeexception-${id}`,
            type: 'ExceptionApproved',
            data: { id, approver: 'root', previousState: 'WAITING', at: SPEC_NOW.toISOString() },
          },
        ]),
      );
  });
  it('refuses approvals by non-admins (§9 update_lifetime_exceptions)', () =>
    spec
      .given(async (context, settle) => {
        await withCutoff(context, settle);
        await addException(context, ask, as('jdoe'), noneOpen);
      })
      .when((context) => decideException(context, { id: 'whatever', state: 'A' }, as('jdoe')))
      .thenRefused(AccessDenied, /can not update lifetime exceptions/));

  let ruleId = '';
  const withRule = async (context: Context, settle: () => Promise<void>) => {
    await world(context, settle);
    [ruleId] = (await addRules(context, aRuleRequest('ds', 'SITE_A'), root)).ruleIds as [string];
    await updateRule(context, { ruleId, update: { eolAt: '2026-06-01 00:00:00' } }, root);
    await settle();
  };
  it("atropos: condemns a rule past its end of life (a lifetime, the DID's eol_at)", () =>
    spec
      .given(withRule)
      .when((context) =>
        expireAtEndOfLife(
          context,
          {
            ruleId,
            scope: SCOPE,
            name: 'ds',
            eolAt: '2026-06-01T00:00:00.000Z',
            lifetime: 60,
            purgeReplicas: true,
            unlock: false,
          },
          { ...root, causationId: 'atropos/job/r' },
        ),
      )
      .thenAppended((events) => {
        expect(types(events)).to.deep.equal(['rule RuleUpdated', 'did DidMetadataSet']);
        expect((events[0]!.data as { changes: object }).changes).to.deep.equal({
          expiresAt: new Date(SPEC_NOW.getTime() + 60_000).toISOString(),
          purgeReplicas: true,
        });
        expect((events[1]!.data as { columns: object }).columns).to.deep.equal({ eol_at: '2026-06-01T00:00:00.000Z' });
      }));
  it('atropos: moves the end of life of a rule an approved exception covers', () =>
    spec
      .given(withRule)
      .when((context) => extendEndOfLife(context, { ruleId, eolAt: '2027-01-01T00:00:00.000Z' }, root))
      .thenAppended((events) =>
        expect((events[0]!.data as { changes: object }).changes).to.deep.equal({ eolAt: '2027-01-01T00:00:00.000Z' }),
      ));
});
