import { expect } from 'chai';
import { attachDids, detachDids } from '../../commands/did/didContentCommands.ts';
import { addCollections } from '../../commands/did/didCreationCommands.ts';
import { addReplicas } from '../../commands/replica/replicaRegistrationCommands.ts';
import { addRules } from '../../commands/rule/ruleCreationCommands.ts';
import { deleteRuleNow, requestRuleDeletion } from '../../commands/rule/ruleDeletion.ts';
import { approveRule, updateRule } from '../../commands/rule/ruleUpdates.ts';
import { createAccount } from '../../commands/account/accountCommands.ts';
import { AccessDenied, UnsupportedOperation } from '../../domain/shared/errors.ts';
import { RuleReplaceFailed } from '../../domain/rule/ruleErrors.ts';
import { moveRule, reduceRule } from '../../commands/rule/ruleReplacement.ts';
import { deleteExpiredDid } from '../../commands/did/didLifecycleCommands.ts';
import { setMetadata } from '../../commands/did/didMetadataCommands.ts';
import { setDidStatus } from '../../commands/did/didLifecycleCommands.ts';
import { evaluateAttach, evaluateDetach } from '../../commands/rule/ruleEvaluation.ts';
import { injectRule } from '../../commands/rule/ruleInjection.ts';
import type { CommandContext } from '../../commands/commandContext.ts';
import { as, commandSpec, SPEC_NOW } from '../support/commandSpec.ts';
import { repairRule } from '../../commands/rule/ruleRepair.ts';
import { transferFailed } from '../../commands/rule/ruleTransfers.ts';
import type { StreamedEvent } from '../support/projectionHarness.ts';
import { aDataset, aRuleRequest, aWorld, SCOPE } from '../support/rules.ts';

const ofType = (events: readonly StreamedEvent[], type: string) =>
  events.filter((event) => event.type === type).map((event) => event.data as Record<string, unknown>);
/** The requests the batch events of a type name, in order. */
const requestItems = (events: readonly StreamedEvent[], type: string) =>
  ofType(events, type).flatMap((data) => data.requests as Record<string, unknown>[]);

/** The judge's commands: injection, attach and detach evaluation, deletion. */
describe('Commands: the judge', () => {
  const spec = commandSpec();
  let ruleId = '';
  const withRule =
    (extra: Parameters<typeof aRuleRequest>[2] = {}) =>
    async (context: CommandContext, settle: () => Promise<void>) => {
      await aWorld(context, { SITE_A: {}, SITE_B: {} });
      await aDataset(context, 'ds', ['f1', 'f2'], 'SITE_A');
      await settle();
      [ruleId] = (await addRules(context, aRuleRequest('ds', 'SITE_B', extra), as('root'))).ruleIds as [string];
      await settle();
    };

  describe('injecting an asynchronous rule (rule 16)', () => {
    it('gives it its locks and the state they make', () =>
      spec
        .given(withRule({ asynchronous: true }))
        .when((context) => injectRule(context, { ruleId }, as('root')))
        .thenAppended((events) => {
          // Each file's replica created and locked in one event.
          expect(ofType(events, 'ReplicaLocked')).to.have.length(0);
          expect(
            ofType(events, 'ReplicaAdded').map((data) => (data.lock as { lockState: string }).lockState),
          ).to.deep.equal(['REPLICATING', 'REPLICATING']);
          // The two requests of the rule on SITE_B are one batch: one event, on a stream of their own.
          expect(events.filter((event) => event.type === 'RequestQueued').map((event) => event.stream)).to.satisfy(
            (streams: string[]) => streams.length === 1 && streams[0]!.startsWith(`requests-${ruleId}-SITE_B-`),
          );
          expect(requestItems(events, 'RequestQueued')).to.have.length(2);
          expect(ofType(events, 'RuleStateChanged').map((data) => [data.previousState, data.state])).to.deep.equal([
            ['INJECT', 'REPLICATING'],
          ]);
        }));

    it('sends no RULE_OK for a notify=C rule injected OK while its dataset is open (rule 17)', () =>
      spec
        .given(async (context, settle) => {
          await aWorld(context, { SITE_A: {} });
          await aDataset(context, 'ds', ['f1'], 'SITE_A');
          await settle();
          [ruleId] = (
            await addRules(
              context,
              aRuleRequest('ds', 'SITE_A', { asynchronous: true, notification: 'CLOSE' }),
              as('root'),
            )
          ).ruleIds as [string];
          await settle();
        })
        .when((context) => injectRule(context, { ruleId }, as('root')))
        .thenAppended((events) => {
          expect(ofType(events, 'RuleStateChanged').map((data) => [data.previousState, data.state])).to.deep.equal([
            ['INJECT', 'OK'],
          ]);
          expect(ofType(events, 'RuleNotified')).to.have.length(0);
        }));

    it('sends RULE_OK for a notify=C rule injected OK on a closed dataset (rule 17)', () =>
      spec
        .given(async (context, settle) => {
          await aWorld(context, { SITE_A: {} });
          await aDataset(context, 'ds', ['f1'], 'SITE_A');
          await setDidStatus(context, { scope: SCOPE, name: 'ds', open: false }, as('root'));
          await settle();
          [ruleId] = (
            await addRules(
              context,
              aRuleRequest('ds', 'SITE_A', { asynchronous: true, notification: 'CLOSE' }),
              as('root'),
            )
          ).ruleIds as [string];
          await settle();
        })
        .when((context) => injectRule(context, { ruleId }, as('root')))
        .thenAppended((events) =>
          expect(
            ofType(events, 'RuleNotified').flatMap((data) =>
              (data.messages as { eventType: string }[]).map((message) => message.eventType),
            ),
          ).to.deep.equal(['RULE_OK', 'DATASETLOCK_OK']),
        ));

    it('splits a split_container rule into one asynchronous DATASET rule per dataset, skipping datasets with a like rule, and deletes it (rule 16)', () => {
      let existing = '';
      return spec
        .given(async (context, settle) => {
          await aWorld(context, { SITE_A: {}, SITE_B: {} });
          await aDataset(context, 'ds1', ['f1'], 'SITE_A');
          await aDataset(context, 'ds2', ['f2'], 'SITE_A');
          await aDataset(context, 'ds3', ['f3'], 'SITE_A');
          await addCollections(
            context,
            {
              dids: [
                {
                  scope: SCOPE,
                  name: 'cont',
                  didType: 'CONTAINER',
                  monotonic: false,
                  lifetime: null,
                  meta: {},
                  children: [],
                },
              ],
              single: true,
            },
            as('root'),
          );
          const children = ['ds1', 'ds2', 'ds3'].map((name) => ({ scope: SCOPE, name }));
          await attachDids(
            context,
            { attachments: [{ scope: SCOPE, name: 'cont', children }], ignoreDuplicates: false, single: true },
            as('root'),
          );
          await settle();
          [existing] = (await addRules(context, aRuleRequest('ds3', 'SITE_B', { copies: 1 }), as('root'))).ruleIds as [
            string,
          ];
          [ruleId] = (
            await addRules(
              context,
              aRuleRequest('cont', 'SITE_B', {
                splitContainer: true,
                grouping: 'ALL',
                activity: 'Express',
                lifetime: 7200,
              }),
              as('root'),
            )
          ).ruleIds as [string];
          await settle();
        })
        .when((context) => injectRule(context, { ruleId }, as('root')))
        .thenAppended((events) => {
          const added = ofType(events, 'RuleAdded').map((data): Record<string, unknown> => ({
            ...(data.rule as Record<string, unknown>),
            state: data.state,
          }));
          expect(added.map((rule) => rule.name).sort()).to.deep.equal(['ds1', 'ds2']);
          for (const rule of added) {
            expect(rule).to.include({
              state: 'INJECT',
              grouping: 'DATASET',
              rseExpression: 'SITE_B',
              activity: 'Express',
              ignoreAccountLimit: true,
              locked: false,
              splitContainer: true,
            });
            expect(rule.expiresAt).to.equal(new Date(SPEC_NOW.getTime() + 7_200_000).toISOString());
          }
          expect(ofType(events, 'RuleDeleted').map((data) => data.ruleId)).to.deep.equal([ruleId]);
          expect(ofType(events, 'ReplicaLocked')).to.have.length(0);
          expect(ofType(events, 'RuleAdded').map((data) => (data.rule as { id: string }).id)).to.not.include(existing);
        });
    });

    it("leaves a rule expiring within five minutes to the cleaner, as Rucio's injector does", () =>
      spec
        .given(withRule({ asynchronous: true, lifetime: 60 }))
        .when((context) => injectRule(context, { ruleId }, as('root')))
        .thenNothingHappened());

    it('does nothing to a rule that is not waiting for injection', () =>
      spec
        .given(withRule())
        .when((context) => injectRule(context, { ruleId }, as('root')))
        .thenNothingHappened());
  });

  describe('evaluating an attach below a rule (rule 19)', () => {
    it('locks the new file on the RSE the dataset is held on and queues its transfer', () =>
      spec
        .given(async (context, settle) => {
          await withRule()(context, settle);
          await addReplicas(
            context,
            {
              rse: 'SITE_A',
              files: [{ scope: SCOPE, name: 'f3', bytes: 100, adler32: '0cc737eb' }],
              ignoreAvailability: true,
            },
            as('root'),
          );
          await attachDids(
            context,
            {
              attachments: [{ scope: SCOPE, name: 'ds', children: [{ scope: SCOPE, name: 'f3' }] }],
              ignoreDuplicates: false,
              single: true,
            },
            as('root'),
          );
          await settle();
        })
        .when((context) =>
          evaluateAttach(context, { scope: SCOPE, name: 'ds', children: [{ scope: SCOPE, name: 'f3' }] }, as('root')),
        )
        .thenAppended((events) => {
          expect(
            ofType(events, 'ReplicaAdded').map((data) => [
              data.name,
              data.rse,
              data.state,
              (data.lock as { lockState: string }).lockState,
            ]),
          ).to.deep.equal([['f3', 'SITE_B', 'COPYING', 'REPLICATING']]);
          expect(ofType(events, 'RuleLocksCreated').map((data) => data.counters as object)).to.deep.equal([
            { ok: 0, replicating: 3, stuck: 0 },
          ]);
        }));
  });

  describe('evaluating a detach below a rule (rule 19)', () => {
    it("removes the rule's lock on the detached file, cancels its transfer and marks its copy obsolete", () =>
      spec
        .given(async (context, settle) => {
          await withRule()(context, settle);
          await detachDids(context, { scope: SCOPE, name: 'ds', children: [{ scope: SCOPE, name: 'f1' }] }, as('root'));
          await settle();
        })
        .when((context) =>
          evaluateDetach(context, { scope: SCOPE, name: 'ds', children: [{ scope: SCOPE, name: 'f1' }] }, as('root')),
        )
        .thenAppended((events) => {
          expect(
            ofType(events, 'ReplicaUnlocked').map((data) => [data.name, data.state, data.tombstone]),
          ).to.deep.equal([['f1', 'UNAVAILABLE', '1970-01-01T00:00:00.000Z']]);
          expect(requestItems(events, 'RequestCancelled')).to.have.length(1);
          expect(ofType(events, 'RuleLocksRemoved').map((data) => data.counters)).to.deep.equal([
            { ok: 0, replicating: 1, stuck: 0 },
          ]);
        }));
  });

  describe('deleting a rule now (rule 20)', () => {
    it('unlocks every file, cancels the transfers and detaches the rule from its DID', () =>
      spec
        .given(withRule())
        .when((context) =>
          deleteRuleNow(
            context,
            { ruleId, purgeReplicas: null, cause: { kind: 'deletion' }, ignoreLock: false, deleteParent: false },
            as('root'),
          ),
        )
        .thenAppended((events) => {
          expect(ofType(events, 'ReplicaUnlocked')).to.have.length(2);
          // Both requests were queued in one batch: their cancellation is one event.
          expect(ofType(events, 'RequestCancelled')).to.have.length(1);
          expect(requestItems(events, 'RequestCancelled')).to.have.length(2);
          expect(ofType(events, 'DidRuleDetached')).to.have.length(1);
          expect(events.map((event) => event.type).slice(-2)).to.deep.equal(['RuleLocksRemoved', 'RuleDeleted']);
        }));
  });
});

describe('Commands: changing a rule', () => {
  const spec = commandSpec();
  let ruleId = '';
  const withRule =
    (extra: Parameters<typeof aRuleRequest>[2] = {}) =>
    async (context: CommandContext, settle: () => Promise<void>) => {
      await aWorld(context, { SITE_A: {}, SITE_B: {} });
      await aDataset(context, 'ds', ['f1'], 'SITE_A');
      await settle();
      [ruleId] = (await addRules(context, aRuleRequest('ds', 'SITE_B', extra), as('root'))).ruleIds as [string];
      await settle();
    };

  it('locks a rule and tells its DID, so the undertaker leaves the DID alone', () =>
    spec
      .given(withRule())
      .when((context) => updateRule(context, { ruleId, update: { locked: true, comment: 'keep' } }, as('root')))
      .thenAppended((events) => {
        expect(ofType(events, 'DidRuleChanged').map((data) => (data.rule as { locked: boolean }).locked)).to.deep.equal(
          [true],
        );
        expect(ofType(events, 'RuleUpdated').map((data) => data.changes)).to.deep.equal([
          { locked: true, comments: 'keep' },
        ]);
      }));

  it('refuses a plain account', () =>
    spec
      .given(async (context, settle) => {
        await withRule()(context, settle);
        await createAccount(context, { account: 'jdoe', accountType: 'USER', email: null }, as('root'));
      })
      .when((context) => updateRule(context, { ruleId, update: { locked: true } }, as('jdoe')))
      .thenRefused(AccessDenied));

  it('approves a rule waiting for approval, which goes to the injector (rule 16)', () =>
    spec
      .given(withRule({ askApproval: true }))
      .when((context) => approveRule(context, { ruleId, approve: true, reason: null }, as('root')))
      .thenAppended((events) => expect(events.map((event) => event.type)).to.deep.equal(['RuleApproved'])));

  it('deletes a denied rule and takes it off its DID', () =>
    spec
      .given(withRule({ askApproval: true }))
      .when((context) => approveRule(context, { ruleId, approve: false, reason: 'too big' }, as('root')))
      .thenAppended((events) =>
        expect(events.map((event) => event.type)).to.deep.equal(['RuleDenied', 'DidRuleDetached']),
      ));

  it('lets the API delete a rule only by expiring it within the hour (rule 20)', () =>
    spec
      .given(withRule())
      .when((context) => requestRuleDeletion(context, { ruleId, purgeReplicas: true }, as('root')))
      .thenAppended((events) => {
        const [changes] = ofType(events, 'RuleUpdated').map(
          (data) => data.changes as { expiresAt: string; purgeReplicas: boolean },
        );
        expect(Date.parse(changes!.expiresAt) - Date.parse('2026-11-22T10:00:00.000Z')).to.equal(3_600_000);
        expect(changes!.purgeReplicas).to.equal(true);
      }));

  it('refuses to delete a locked rule (rule 20)', () =>
    spec
      .given(async (context, settle) => {
        await withRule()(context, settle);
        await updateRule(context, { ruleId, update: { locked: true } }, as('root'));
      })
      .when((context) => requestRuleDeletion(context, { ruleId, purgeReplicas: null }, as('root')))
      .thenRefused(UnsupportedOperation));

  /** A rule whose only allowed source holds no copy: its lock is STUCK, and so is the rule. */
  const stuckForWantOfSource = async (context: CommandContext, settle: () => Promise<void>) => {
    await aWorld(context, { SITE_A: {}, SITE_B: {}, SITE_C: {} });
    await aDataset(context, 'ds', ['f1'], 'SITE_A');
    await settle();
    [ruleId] = (
      await addRules(context, aRuleRequest('ds', 'SITE_B', { sourceReplicaExpression: 'SITE_C' }), as('root'))
    ).ruleIds as [string];
    await settle();
  };

  it('repairs a STUCK rule by retrying its stuck locks once asked to boost, when its source has the file (rule 18)', () =>
    spec
      .given(async (context, settle) => {
        await stuckForWantOfSource(context, settle);
        await addReplicas(
          context,
          {
            rse: 'SITE_C',
            files: [{ scope: SCOPE, name: 'f1', bytes: 100, adler32: '0cc737eb' }],
            ignoreAvailability: true,
          },
          as('root'),
        );
        await settle();
      })
      .when((context) => updateRule(context, { ruleId, update: { boostRule: true } }, as('root')))
      .thenAppended((events) => {
        // The replica COPYING again, its lock REPLICATING and its new transfer: one event.
        expect(ofType(events, 'ReplicaLocksChanged')).to.have.length(0);
        expect(
          ofType(events, 'ReplicaStateChanged').map((data) => [data.previousState, data.state, data.locks]),
        ).to.deep.equal([['UNAVAILABLE', 'COPYING', { [ruleId]: 'REPLICATING' }]]);
        expect(ofType(events, 'ReplicaStateChanged')[0]!.requestId).to.equal(
          (requestItems(events, 'RequestQueued')[0]!.request as { id: string }).id,
        );
        expect(
          requestItems(events, 'RequestQueued').map((item) => (item.request as { retryCount: number }).retryCount),
        ).to.deep.equal([1]);
        expect(ofType(events, 'RuleStateChanged').map((data) => [data.previousState, data.state])).to.deep.equal([
          ['STUCK', 'REPLICATING'],
        ]);
      }));

  it('suspends a rule stuck for more than 14 days instead of repairing it (rule 18)', () =>
    spec
      .given(stuckForWantOfSource)
      .when((context) =>
        repairRule(context, { ruleId }, { ...as('root'), now: new Date(SPEC_NOW.getTime() + 15 * 86_400_000) }),
      )
      .thenAppended((events) => {
        expect(ofType(events, 'RuleStateChanged').map((data) => [data.previousState, data.state])).to.deep.equal([
          ['STUCK', 'SUSPENDED'],
        ]);
        expect(ofType(events, 'ReplicaLocksChanged')).to.have.length(0);
        expect(ofType(events, 'ReplicaStateChanged')).to.have.length(0);
      }));

  it('leaves a lock stuck for want of a source alone while no source has the file, boost or not (rule 18)', () =>
    spec
      .given(stuckForWantOfSource)
      .when((context) => updateRule(context, { ruleId, update: { boostRule: true } }, as('root')))
      .thenAppended((events) => {
        expect(ofType(events, 'ReplicaLocksChanged')).to.have.length(0);
        expect(ofType(events, 'ReplicaStateChanged')).to.have.length(0);
        expect(ofType(events, 'RequestQueued')).to.have.length(0);
        expect(ofType(events, 'RuleStateChanged')).to.have.length(0);
      }));

  it('retries a lock the repairer retried before in place once its back-off has passed, with a new transfer (rule 18)', () =>
    spec
      .given(async (context, settle) => {
        await stuckForWantOfSource(context, settle);
        await addReplicas(
          context,
          {
            rse: 'SITE_C',
            files: [{ scope: SCOPE, name: 'f1', bytes: 100, adler32: '0cc737eb' }],
            ignoreAvailability: true,
          },
          as('root'),
        );
        await updateRule(context, { ruleId, update: { boostRule: true } }, as('root'));
        // The retried copy failed for good: the lock is STUCK again, with one repair behind it.
        await transferFailed(context, { scope: SCOPE, name: 'f1', rse: 'SITE_B', error: 'failed' }, as('root'));
        await settle();
      })
      .when((context) =>
        repairRule(context, { ruleId }, { ...as('root'), now: new Date(SPEC_NOW.getTime() + 3 * 3_600_000) }),
      )
      .thenAppended((events) => {
        // The replica COPYING again, its lock REPLICATING and its new transfer: one event.
        expect(ofType(events, 'ReplicaLocksChanged')).to.have.length(0);
        expect(
          ofType(events, 'ReplicaStateChanged').map((data) => [data.previousState, data.state, data.locks]),
        ).to.deep.equal([['UNAVAILABLE', 'COPYING', { [ruleId]: 'REPLICATING' }]]);
        expect(ofType(events, 'ReplicaStateChanged')[0]!.requestId).to.equal(
          (requestItems(events, 'RequestQueued')[0]!.request as { id: string }).id,
        );
        expect(
          requestItems(events, 'RequestQueued').map((item) => (item.request as { retryCount: number }).retryCount),
        ).to.deep.equal([1]);
        expect(ofType(events, 'RuleStateChanged').map((data) => data.state)).to.deep.equal(['REPLICATING']);
      }));
});

describe('Commands: replacing a rule', () => {
  const spec = commandSpec();
  let ruleId = '';

  it('reduces an OK rule to fewer copies on the RSEs that stay, deleting the old one in the same step', () =>
    spec
      .given(async (context, settle) => {
        await aWorld(context, { SITE_A: {}, SITE_B: {} });
        await aDataset(context, 'ds', ['f1'], 'SITE_A');
        await addReplicas(
          context,
          {
            rse: 'SITE_B',
            files: [{ scope: SCOPE, name: 'f1', bytes: 100, adler32: '0cc737eb' }],
            ignoreAvailability: true,
          },
          as('root'),
        );
        await settle();
        [ruleId] = (await addRules(context, aRuleRequest('ds', 'SITE_A|SITE_B', { copies: 2 }), as('root')))
          .ruleIds as [string];
        await settle();
      })
      .when((context) => reduceRule(context, { ruleId, copies: 1, excludeExpression: 'SITE_B' }, as('root')))
      .thenAppended((events) => {
        expect(
          ofType(events, 'RuleAdded').map((data) => [
            (data.rule as { rseExpression: string }).rseExpression,
            data.state,
          ]),
        ).to.deep.equal([['(SITE_A|SITE_B)\\(SITE_B)', 'OK']]);
        expect(ofType(events, 'RuleDeleted').map((data) => data.ruleId)).to.deep.equal([ruleId]);
        expect(ofType(events, 'RequestQueued')).to.have.length(0);
      }));

  it('refuses to reduce a rule that is not OK', () =>
    spec
      .given(async (context, settle) => {
        await aWorld(context, { SITE_A: {}, SITE_B: {}, SITE_C: {} });
        await aDataset(context, 'ds', ['f1'], 'SITE_A');
        await settle();
        [ruleId] = (await addRules(context, aRuleRequest('ds', 'SITE_B|SITE_C', { copies: 2 }), as('root')))
          .ruleIds as [string];
        await settle();
      })
      .when((context) => reduceRule(context, { ruleId, copies: 1, excludeExpression: null }, as('root')))
      .thenRefused(RuleReplaceFailed));

  it('moves a rule: the new rule replicates, the old one expires now with the new one as its child', () =>
    spec
      .given(async (context, settle) => {
        await aWorld(context, { SITE_A: {}, SITE_B: {} });
        await aDataset(context, 'ds', ['f1'], 'SITE_A');
        await settle();
        [ruleId] = (await addRules(context, aRuleRequest('ds', 'SITE_A'), as('root'))).ruleIds as [string];
        await settle();
      })
      .when((context) => moveRule(context, { ruleId, rseExpression: 'SITE_B', override: {} }, as('root')))
      .thenAppended((events) => {
        const [added] = ofType(events, 'RuleAdded');
        expect(added).to.include({ state: 'REPLICATING' });
        const childId = (added!.rule as { id: string }).id;
        expect(ofType(events, 'RuleUpdated').map((data) => data.changes)).to.deep.equal([
          { expiresAt: '2026-11-22T10:00:00.000Z', childRuleId: childId },
        ]);
      }));
});

describe('Commands: the undertaker and rules (rule 7)', () => {
  const spec = commandSpec();
  const expiredWithRule = (locked: boolean) => async (context: CommandContext, settle: () => Promise<void>) => {
    await aWorld(context, { SITE_A: {} });
    await aDataset(context, 'ds', ['f1'], 'SITE_A');
    await settle();
    await addRules(context, aRuleRequest('ds', 'SITE_A', { locked }), as('root'));
    await setMetadata(
      context,
      { scope: SCOPE, name: 'ds', meta: { lifetime: -1 }, recursive: false, single: true },
      as('root'),
    );
    await settle();
  };

  it('deletes an expired dataset with its rules, purging the replicas they held', () =>
    spec
      .given(expiredWithRule(false))
      .when((context) => deleteExpiredDid(context, { scope: SCOPE, name: 'ds' }, as('root')))
      .thenAppended((events) => {
        expect(ofType(events, 'ReplicaUnlocked').map((data) => data.tombstone)).to.deep.equal([
          '1970-01-01T00:00:00.000Z',
        ]);
        expect(
          events.map((event) => event.type).filter((type) => type.startsWith('Rule') || type.startsWith('Did')),
        ).to.deep.equal(['DidRuleDetached', 'DidErased', 'RuleLocksRemoved', 'RuleDeleted']);
      }));

  it('leaves an expired dataset alone while one of its rules is locked', () =>
    spec
      .given(expiredWithRule(true))
      .when((context) => deleteExpiredDid(context, { scope: SCOPE, name: 'ds' }, as('root')))
      .thenRefused(UnsupportedOperation, /locked replication rule/));
});
