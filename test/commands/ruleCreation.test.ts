import { expect } from 'chai';
import { addRules } from '../../commands/rule/ruleCreationCommands.ts';
import { setLocalAccountLimit } from '../../commands/account/accountLimitCommands.ts';
import { createAccount } from '../../commands/account/accountCommands.ts';
import { addScope } from '../../commands/scope/scopeCommands.ts';
import { InvalidRSEExpression, InvalidValueForKey } from '../../domain/shared/errors.ts';
import {
  DuplicateRule,
  InsufficientAccountLimit,
  InsufficientTargetRSEs,
  InvalidReplicationRule,
  InvalidRuleWeight,
  ManualRuleApprovalBlocked,
  RSEWriteBlocked,
  StagingAreaRuleRequiresLifetime,
} from '../../domain/rule/ruleErrors.ts';
import { setDidStatus } from '../../commands/did/didLifecycleCommands.ts';
import { injectRule } from '../../commands/rule/ruleInjection.ts';
import { SPEC_NOW } from '../support/commandSpec.ts';
import { as, commandSpec } from '../support/commandSpec.ts';
import type { StreamedEvent } from '../support/projectionHarness.ts';
import { aDataset, aRuleRequest, aWorld, SCOPE } from '../support/rules.ts';

const ofType = (events: readonly StreamedEvent[], type: string) => events.filter((event) => event.type === type);
const dataOf = <T>(events: readonly StreamedEvent[], type: string) =>
  ofType(events, type).map((event) => event.data as T);
type FileLock = { name: string; rse: string; lockState: string; requestId: string | null };
/**
 * The locks the files' streams recorded: a replica created for its lock carries it (`ReplicaAdded`),
 * an existing replica gets `ReplicaLocked`; one event per replica either way.
 */
const fileLocks = (events: readonly StreamedEvent[]): FileLock[] =>
  events.flatMap((event) => {
    const data = event.data as Record<string, unknown>;
    if (event.type === 'ReplicaLocked') return [data as FileLock];
    if (event.type === 'ReplicaAdded' && data.lock)
      return [{ ...(data.lock as FileLock), name: data.name as string, rse: data.rse as string }];
    return [];
  });

describe('Commands: adding a replication rule', () => {
  const spec = commandSpec();
  type Context = Parameters<typeof aWorld>[0];
  const twoRses = async (context: Context, settle: () => Promise<void>) => {
    await aWorld(context, { SITE_A: {}, SITE_B: {} });
    await aDataset(context, 'ds', ['f1', 'f2'], 'SITE_A');
    await settle();
  };

  describe('on a dataset whose files are elsewhere (rule 14)', () => {
    it('creates COPYING replicas, REPLICATING locks and one queued request per file, and is REPLICATING', () =>
      spec
        .given(twoRses)
        .when((context) => addRules(context, aRuleRequest('ds', 'SITE_B'), as('root')))
        .thenAppended((events) => {
          expect(
            dataOf<{ state: string; rse: string }>(events, 'ReplicaAdded').map(({ state, rse }) => [state, rse]),
          ).to.deep.equal([
            ['COPYING', 'SITE_B'],
            ['COPYING', 'SITE_B'],
          ]);
          expect(
            fileLocks(events).map(({ name, lockState, requestId }) => [name, lockState, typeof requestId]),
          ).to.deep.equal([
            ['f1', 'REPLICATING', 'string'],
            ['f2', 'REPLICATING', 'string'],
          ]);
          expect(ofType(events, 'ReplicaLocked')).to.have.length(0);
          expect(
            dataOf<{ requests: { state: string; request: { name: string; destRse: string } }[] }>(
              events,
              'RequestQueued',
            )
              .flatMap((queued) => queued.requests)
              .map((queued) => [queued.state, queued.request.name, queued.request.destRse])
              .sort(),
          ).to.deep.equal([
            ['QUEUED', 'f1', 'SITE_B'],
            ['QUEUED', 'f2', 'SITE_B'],
          ]);
          const [added] = dataOf<{ state: string; targetRses: string[] }>(events, 'RuleAdded');
          expect(added).to.include({ state: 'REPLICATING' });
          const [locks] = dataOf<{ counters: object; locks: unknown[]; datasetLocks: { name: string; rse: string }[] }>(
            events,
            'RuleLocksCreated',
          );
          expect(locks!.counters).to.deep.equal({ ok: 0, replicating: 2, stuck: 0 });
          expect(locks!.datasetLocks.map((lock) => [lock.name, lock.rse])).to.deep.equal([['ds', 'SITE_B']]);
          expect(ofType(events, 'DidRuleAttached').map((event) => event.stream)).to.deep.equal([`did-${SCOPE}:ds`]);
        }));

    it('queues no second request for a replica another rule is already bringing', () =>
      spec
        .given(async (context, settle) => {
          await twoRses(context, settle);
          await addRules(context, aRuleRequest('ds', 'SITE_B'), as('root'));
        })
        .when((context) => addRules(context, aRuleRequest('ds', 'SITE_B|SITE_A', { copies: 2 }), as('root')))
        .thenAppended((events) => {
          expect(ofType(events, 'RequestQueued')).to.have.length(0);
          expect(
            fileLocks(events)
              .map((lock) => lock.lockState)
              .sort(),
          ).to.deep.equal(['OK', 'OK', 'REPLICATING', 'REPLICATING']);
        }));
  });

  describe('on a dataset whose files are on the chosen RSE already (rule 13)', () => {
    it('is OK at once, with OK locks, no request and no new replica', () =>
      spec
        .given(twoRses)
        .when((context) => addRules(context, aRuleRequest('ds', 'SITE_A'), as('root')))
        .thenAppended((events) => {
          expect(ofType(events, 'ReplicaAdded')).to.have.length(0);
          expect(ofType(events, 'RequestQueued')).to.have.length(0);
          expect(fileLocks(events).map((lock) => lock.lockState)).to.deep.equal(['OK', 'OK']);
          expect(dataOf<{ state: string }>(events, 'RuleAdded')[0]).to.include({ state: 'OK' });
        }));
  });

  describe('refusals (rule 11)', () => {
    it('refuses zero copies', () =>
      spec
        .given(twoRses)
        .when((context) => addRules(context, aRuleRequest('ds', 'SITE_B', { copies: 0 }), as('root')))
        .thenRefused(InvalidValueForKey));

    it('refuses more copies than the expression has RSEs', () =>
      spec
        .given(twoRses)
        .when((context) => addRules(context, aRuleRequest('ds', 'SITE_B', { copies: 2 }), as('root')))
        .thenRefused(InsufficientTargetRSEs, /2 copies requested, RSE set size 1/));

    it('refuses an expression that selects nothing', () =>
      spec
        .given(twoRses)
        .when((context) => addRules(context, aRuleRequest('ds', 'NOWHERE'), as('root')))
        .thenRefused(InvalidRSEExpression));

    it('refuses a second rule with the same DID, account, expression and copies', () =>
      spec
        .given(async (context, settle) => {
          await twoRses(context, settle);
          await addRules(context, aRuleRequest('ds', 'SITE_B'), as('root'));
        })
        .when((context) => addRules(context, aRuleRequest('ds', 'SITE_B'), as('root')))
        .thenRefused(DuplicateRule));
  });

  describe('quotas (rule 12)', () => {
    const withUser = async (context: Context, settle: () => Promise<void>) => {
      await twoRses(context, settle);
      await createAccount(context, { account: 'jdoe', accountType: 'USER', email: null }, as('root'));
    };

    it('refuses a user without a limit on any candidate RSE', () =>
      spec
        .given(withUser)
        .when((context) => addRules(context, aRuleRequest('ds', 'SITE_B', { account: 'jdoe' }), as('jdoe')))
        .thenRefused(InsufficientAccountLimit));

    it('lets a user with room under a local limit add the rule', () =>
      spec
        .given(async (context, settle) => {
          await withUser(context, settle);
          await setLocalAccountLimit(context, { account: 'jdoe', rse: 'SITE_B', bytes: 1_000_000 }, as('root'));
        })
        .when((context) => addRules(context, aRuleRequest('ds', 'SITE_B', { account: 'jdoe' }), as('jdoe')))
        .thenAppended((events) =>
          expect(dataOf<{ state: string }>(events, 'RuleAdded')[0]).to.include({ state: 'REPLICATING' }),
        ));
  });

  describe('rules left for later (rule 16)', () => {
    it('puts an asynchronous rule in INJECT without locks', () =>
      spec
        .given(twoRses)
        .when((context) => addRules(context, aRuleRequest('ds', 'SITE_B', { asynchronous: true }), as('root')))
        .thenAppended((events) => {
          expect(dataOf<{ state: string }>(events, 'RuleAdded')[0]).to.include({ state: 'INJECT' });
          expect(ofType(events, 'ReplicaLocked')).to.have.length(0);
        }));

    it('locks a rule on tape without a lifetime by itself', () =>
      spec
        .given(async (context, settle) => {
          await aWorld(context, { SITE_A: {}, TAPE_B: { properties: { rse_type: 'TAPE' } } });
          await aDataset(context, 'ds', ['f1'], 'SITE_A');
          await settle();
        })
        .when((context) => addRules(context, aRuleRequest('ds', 'TAPE_B'), as('root')))
        .thenAppended((events) =>
          expect(dataOf<{ autoLocked: boolean; rule: { locked: boolean } }>(events, 'RuleAdded')[0]).to.deep.include({
            autoLocked: true,
          }),
        ));
  });

  describe('where a rule may go and when it starts (rule 16)', () => {
    /** SITE_A holding ds (f1, f2), and a target T with the given properties and attributes. */
    const withTarget =
      (target: Parameters<typeof aWorld>[1][string], close = false) =>
      async (context: Context, settle: () => Promise<void>) => {
        await aWorld(context, { SITE_A: {}, T: target });
        await aDataset(context, 'ds', ['f1', 'f2'], 'SITE_A');
        if (close) await setDidStatus(context, { scope: SCOPE, name: 'ds', open: false }, as('root'));
        await settle();
      };

    it('refuses a rule without a lifetime on a staging area (rule 16)', () =>
      spec
        .given(withTarget({ properties: { staging_area: true } }))
        .when((context) => addRules(context, aRuleRequest('ds', 'T'), as('root')))
        .thenRefused(StagingAreaRuleRequiresLifetime));

    it('takes a rule with a lifetime on a staging area, whose copies are staged in (rule 16)', () =>
      spec
        .given(withTarget({ properties: { staging_area: true } }))
        .when((context) => addRules(context, aRuleRequest('ds', 'T', { lifetime: 3600 }), as('root')))
        .thenAppended((events) =>
          expect(
            dataOf<{ requests: { request: { requestType: string } }[] }>(events, 'RequestQueued')
              .flatMap((queued) => queued.requests)
              .map((queued) => queued.request.requestType),
          ).to.deep.equal(['STAGEIN', 'STAGEIN']),
        ));

    it("approves a closed dataset at once under the RSE's auto-approval thresholds, for the injector (rule 16)", () =>
      spec
        .given(withTarget({ attributes: { auto_approve_bytes: '1000' } }, true))
        .when((context) => addRules(context, aRuleRequest('ds', 'T', { askApproval: true }), as('root')))
        .thenAppended((events) => {
          const [added] = dataOf<{ state: string; rule: { ignoreAccountLimit: boolean } }>(events, 'RuleAdded');
          expect([added!.state, added!.rule.ignoreAccountLimit]).to.deep.equal(['INJECT', true]);
        }));

    it('keeps a rule waiting for approval above the thresholds (rule 16)', () =>
      spec
        .given(withTarget({ attributes: { auto_approve_bytes: '150' } }, true))
        .when((context) => addRules(context, aRuleRequest('ds', 'T', { askApproval: true }), as('root')))
        .thenAppended((events) =>
          expect(dataOf<{ state: string }>(events, 'RuleAdded')[0]).to.include({ state: 'WAITING_APPROVAL' }),
        ));

    it('keeps a rule on an open dataset waiting for approval, thresholds or not (rule 16)', () =>
      spec
        .given(withTarget({ attributes: { auto_approve_bytes: '1000' } }))
        .when((context) => addRules(context, aRuleRequest('ds', 'T', { askApproval: true }), as('root')))
        .thenAppended((events) =>
          expect(dataOf<{ state: string }>(events, 'RuleAdded')[0]).to.include({ state: 'WAITING_APPROVAL' }),
        ));

    it('refuses to ask approval for an expression of several RSEs (rule 16)', () =>
      spec
        .given(withTarget({}))
        .when((context) => addRules(context, aRuleRequest('ds', 'T|SITE_A', { askApproval: true }), as('root')))
        .thenRefused(InvalidReplicationRule, /multiple RSEs/));

    it('refuses to ask approval where an RSE blocks manual approval', () =>
      spec
        .given(withTarget({ attributes: { block_manual_approval: true } }))
        .when((context) => addRules(context, aRuleRequest('ds', 'T', { askApproval: true }), as('root')))
        .thenRefused(ManualRuleApprovalBlocked));

    it('puts a delayed rule in INJECT until its delay has passed (rule 16)', () =>
      spec
        .given(withTarget({}))
        .when((context) => addRules(context, aRuleRequest('ds', 'T', { delayInjection: 600 }), as('root')))
        .thenAppended((events) => {
          const [added] = dataOf<{ state: string; rule: { injectAfter: string } }>(events, 'RuleAdded');
          expect(added!.state).to.equal('INJECT');
          expect(added!.rule.injectAfter).to.equal(new Date(SPEC_NOW.getTime() + 600_000).toISOString());
        }));

    it('leaves a delayed rule to the injector only once its delay has passed (rule 16)', () => {
      let ruleId = '';
      return spec
        .given(async (context, settle) => {
          await withTarget({})(context, settle);
          [ruleId] = (await addRules(context, aRuleRequest('ds', 'T', { delayInjection: 600 }), as('root')))
            .ruleIds as [string];
        })
        .when((context) => injectRule(context, { ruleId }, as('root')))
        .thenNothingHappened();
    });

    it('refuses a rule whose RSEs are all closed for writing', () =>
      spec
        .given(withTarget({ properties: { availability_write: false } }))
        .when((context) => addRules(context, aRuleRequest('ds', 'T'), as('root')))
        .thenRefused(RSEWriteBlocked));

    it('leaves out RSEs closed for writing when others remain', () =>
      spec
        .given(withTarget({ properties: { availability_write: false } }))
        .when((context) => addRules(context, aRuleRequest('ds', 'T|SITE_A', { copies: 2 }), as('root')))
        .thenRefused(InsufficientTargetRSEs, /RSE set size 1/));

    it('refuses a weight attribute that is not a number', () =>
      spec
        .given(withTarget({ attributes: { freespace: 'lots' } }))
        .when((context) => addRules(context, aRuleRequest('ds', 'T', { weight: 'freespace' }), as('root')))
        .thenRefused(InvalidRuleWeight));

    it('keeps only the RSEs carrying the weight attribute', () =>
      spec
        .given(withTarget({ attributes: { freespace: '10' } }))
        .when((context) =>
          addRules(context, aRuleRequest('ds', 'T|SITE_A', { weight: 'freespace', copies: 2 }), as('root')),
        )
        .thenRefused(InsufficientTargetRSEs, /RSE set size 1/));
  });

  it('needs a scope of its own only for DIDs, not for the owner (a plain user may own rules on root data)', () =>
    spec
      .given(async (context, settle) => {
        await twoRses(context, settle);
        await createAccount(context, { account: 'alice', accountType: 'USER', email: null }, as('root'));
        await addScope(context, { scope: 'user.alice', account: 'alice' }, as('root'));
        await setLocalAccountLimit(context, { account: 'alice', rse: 'SITE_B', bytes: -1 }, as('root'));
      })
      .when((context) => addRules(context, aRuleRequest('ds', 'SITE_B', { account: 'alice' }), as('alice')))
      .thenAppended((events) => expect(ofType(events, 'RuleAdded')).to.have.length(1)));
});
