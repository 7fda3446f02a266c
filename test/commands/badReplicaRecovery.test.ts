import { expect } from 'chai';
import type { CommandContext } from '../../commands/commandContext.ts';
import { loadDid, loadFileReplicas } from '../../commands/did/didStreams.ts';
import { declareBadDids } from '../../commands/replica/replicaDeclarations.ts';
import { addReplicas } from '../../commands/replica/replicaRegistrationCommands.ts';
import {
  endTemporaryUnavailabilities,
  resolveBadReplica,
  RECOVERY_ACTIVITY,
} from '../../commands/replica/replicaRecoveryCommands.ts';
import { loadRse } from '../../commands/rse/rseCommands.ts';
import { addRules } from '../../commands/rule/ruleCreationCommands.ts';
import { handleCommand } from '../../commands/handleCommand.ts';
import { didStreamDecider } from '../../domain/did/didStreamDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { as, commandSpec, SPEC_NOW } from '../support/commandSpec.ts';
import type { StreamedEvent } from '../support/projectionHarness.ts';
import { aDataset, aRuleRequest, aWorld, SCOPE } from '../support/rules.ts';

/**
 * The necromancer's command (behaviour rule 25): a BAD replica with another copy is copied again
 * through the rule machinery (COPYING, its locks and rules REPLICATING, a Recovery transfer); one
 * without is lost (its locks removed, the file LOST and detached from its datasets); and the end
 * of temporary unavailabilities.
 */
describe('Commands: a BAD replica is recovered or lost (rule 25)', () => {
  const spec = commandSpec();
  const rseIdOf = async (context: CommandContext, rse: string) => {
    const state = await loadRse(context, rse);
    if (state.status !== 'Active') throw new Error(`no ${rse}`);
    return state.id;
  };
  const ofType = (events: readonly StreamedEvent[], type: string) =>
    events.filter((event) => event.type === type).map((event) => event.data as Readonly<Record<string, unknown>>);

  /** ds [f1] on SITE_A under a rule to SITE_A (OK), f1 also on SITE_B when `copy`, the replica on SITE_A declared BAD. */
  const badReplica =
    (copy: boolean, rule = true) =>
    async (context: CommandContext, settle: () => Promise<void>) => {
      await aWorld(context, { SITE_A: {}, SITE_B: {} });
      await aDataset(context, 'ds', ['f1'], 'SITE_A');
      if (copy)
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
      if (rule) await addRules(context, aRuleRequest('ds', 'SITE_A'), as('root'));
      await declareBadDids(
        context,
        { dids: [{ scope: SCOPE, name: 'f1' }], rse: 'SITE_A', reason: 'corrupted' },
        as('root'),
      );
      await settle();
    };
  const resolve = async (context: CommandContext) =>
    resolveBadReplica(
      context,
      {
        scope: SCOPE,
        name: 'f1',
        rse: 'SITE_A',
        rseId: await rseIdOf(context, 'SITE_A'),
        reason: 'no other copy can be read',
      },
      as('root'),
    );

  it('copies a BAD replica again from another copy: COPYING, its lock and rule REPLICATING, a Recovery transfer queued', () =>
    spec
      .given(badReplica(true))
      .when(async (context) => expect((await resolve(context)).outcome).to.equal('recover'))
      .thenAppended((events) => {
        // The replica COPYING, its lock REPLICATING and the transfer that brings it: one event.
        expect(
          ofType(events, 'ReplicaStateChanged').map((data) => [
            data.rse,
            data.previousState,
            data.state,
            Object.values(data.locks as object),
          ]),
        ).to.deep.equal([['SITE_A', 'BAD', 'COPYING', ['REPLICATING']]]);
        expect(ofType(events, 'ReplicaLocksChanged')).to.have.length(0);
        const [queued] = ofType(events, 'RequestQueued').flatMap(
          (data) => data.requests as { request: { id: string } }[],
        );
        expect(queued!.request).to.include({ name: 'f1', destRse: 'SITE_A', activity: RECOVERY_ACTIVITY });
        expect(ofType(events, 'ReplicaStateChanged')[0]!.requestId).to.equal(queued!.request.id);
        expect(
          ofType(events, 'RuleLocksChanged').map((data) =>
            (data.locks as { state: string }[]).map((lock) => lock.state),
          ),
        ).to.deep.equal([['REPLICATING']]);
        expect(ofType(events, 'RuleStateChanged').map((data) => [data.previousState, data.state])).to.deep.equal([
          ['OK', 'REPLICATING'],
        ]);
      }));

  it('leaves a BAD replica no lock holds to the reaper: UNAVAILABLE with an obsolete tombstone', () =>
    spec
      .given(badReplica(true, false))
      .when(async (context) => expect((await resolve(context)).outcome).to.equal('obsolete'))
      .thenAppended((events) => {
        expect(ofType(events, 'ReplicaStateChanged').map((data) => [data.state, data.tombstone])).to.deep.equal([
          ['UNAVAILABLE', '1970-01-01T00:00:00.000Z'],
        ]);
      }));

  it('loses a BAD replica without another copy: its locks removed, the file LOST and detached from its dataset', () =>
    spec
      .given(badReplica(false))
      .when(async (context) => {
        expect((await resolve(context)).outcome).to.equal('lost');
        const file = await loadFileReplicas(context, SCOPE, 'f1');
        expect(file.did.status === 'Live' && file.did.record.availability).to.equal('LOST');
        const dataset = await loadDid(context, SCOPE, 'ds');
        expect(dataset.status === 'Live' && dataset.content.children.size).to.equal(0);
      })
      .thenAppended((events) => {
        expect(events.map((event) => event.type)).to.include.members([
          'ReplicaLost',
          'FileAvailabilityChanged',
          'DidsDetached',
          'RuleLocksRemoved',
        ]);
        expect(ofType(events, 'RuleLocksRemoved')[0]!.cause).to.deep.equal({
          kind: 'recovery',
          detail: `${SCOPE}:f1 on SITE_A lost`,
        });
      }));
});

describe('Commands: temporary unavailabilities end (minos-temporary-expiration)', () => {
  const spec = commandSpec();
  const later = (seconds: number): CommandMetadata => ({
    ...as('root'),
    now: new Date(SPEC_NOW.getTime() + seconds * 1000),
  });

  it('makes a replica AVAILABLE again once its declaration expired, and not before', () =>
    spec
      .given(async (context, settle) => {
        await aWorld(context, { SITE_A: {} });
        await aDataset(context, 'ds', ['f1'], 'SITE_A');
        const rse = await loadRse(context, 'SITE_A');
        if (rse.status !== 'Active') throw new Error('no SITE_A');
        await handleCommand(context, didStreamDecider, `did-${SCOPE}:f1`, {
          type: 'DeclareReplicaTemporarilyUnavailable',
          data: {
            scope: SCOPE,
            name: 'f1',
            rse: 'SITE_A',
            rseId: rse.id,
            reason: 'maintenance',
            expiresAt: new Date(SPEC_NOW.getTime() + 60_000).toISOString(),
          },
          metadata: as('root'),
        });
        await settle();
      })
      .when(async (context) => {
        const rse = await loadRse(context, 'SITE_A');
        const replica = { scope: SCOPE, name: 'f1', rse: 'SITE_A', rseId: rse.status === 'Active' ? rse.id : '' };
        expect(
          (await endTemporaryUnavailabilities(context, { replicas: [replica] }, later(30))).restored,
        ).to.deep.equal([]);
        expect(
          (await endTemporaryUnavailabilities(context, { replicas: [replica] }, later(61))).restored,
        ).to.deep.equal([replica]);
      })
      .thenAppended((events) =>
        expect(events.map((event) => [event.type, (event.data as { state?: string }).state])).to.deep.equal([
          ['ReplicaStateChanged', 'AVAILABLE'],
        ]),
      ));
});
