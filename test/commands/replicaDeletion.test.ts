import { expect } from 'chai';
import type { CommandContext } from '../../commands/commandContext.ts';
import { setDidStatus } from '../../commands/did/didLifecycleCommands.ts';
import { loadDid, loadFileReplicas } from '../../commands/did/didStreams.ts';
import {
  recordReplicaDeletions,
  startReplicaDeletions,
  stillBeingDeleted,
  type DeletionTarget,
} from '../../commands/replica/replicaDeletionCommands.ts';
import { addReplicas } from '../../commands/replica/replicaRegistrationCommands.ts';
import { setTombstones } from '../../commands/replica/replicaUpdates.ts';
import { loadRse } from '../../commands/rse/rseCommands.ts';
import { addRules } from '../../commands/rule/ruleCreationCommands.ts';
import { loadRule } from '../../commands/rule/ruleDeletion.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import { as, commandSpec } from '../support/commandSpec.ts';
import type { StreamedEvent } from '../support/projectionHarness.ts';
import { aDataset, aRuleRequest, aWorld, SCOPE } from '../support/rules.ts';

/**
 * The reaper's steps on the catalogue (behaviour rule 21): BEING_DELETED first on the file's
 * stream, where a lock refuses it; then, once the file is gone from storage, the deletion recorded
 * with the cleanup after it. A rule racing the deletion either wins before the marking or gets
 * the replica back COPYING, with a transfer to bring the file again.
 */
describe('Commands: the reaper’s deletion steps (rule 21)', () => {
  const spec = commandSpec();

  const targetOf = async (context: CommandContext, name: string): Promise<DeletionTarget> => {
    const rse = await loadRse(context, 'SITE_A');
    if (rse.status !== 'Active') throw new Error('no SITE_A');
    return { scope: SCOPE, name, rse: 'SITE_A', rseId: rse.id, reason: 'obsolete' };
  };
  /** Files of a closed dataset on SITE_A with obsolete tombstones. */
  const obsolete =
    (files: readonly string[], dataset = 'ds') =>
    async (context: CommandContext, settle: () => Promise<void>) => {
      await aWorld(context, { SITE_A: {}, SITE_B: {} });
      await aDataset(context, dataset, files, 'SITE_A');
      await setDidStatus(context, { scope: SCOPE, name: dataset, open: false }, as('root'));
      await setTombstones(
        context,
        { replicas: files.map((name) => ({ scope: SCOPE, name, rse: 'SITE_A' })) },
        as('root'),
      );
      await settle();
    };
  const typesByStream = (events: readonly StreamedEvent[]) => events.map((event) => `${event.stream} ${event.type}`);

  it('marks unlocked obsolete replicas BEING_DELETED, each on its file’s stream', () =>
    spec
      .given(obsolete(['f1', 'f2']))
      .when(async (context) => {
        const outcome = await startReplicaDeletions(
          context,
          {
            replicas: [await targetOf(context, 'f1'), await targetOf(context, 'f2')],
            obsoleteOnly: true,
            daemon: 'reaper',
          },
          as('root'),
        );
        expect(outcome.marked.map((target) => target.name)).to.deep.equal(['f1', 'f2']);
      })
      .thenAppended((events) =>
        expect(typesByStream(events)).to.deep.equal([
          `did-${SCOPE}:f1 ReplicaDeletionStarted`,
          `did-${SCOPE}:f2 ReplicaDeletionStarted`,
        ]),
      ));

  it('refuses to mark a replica a rule locks, saying so', () =>
    spec
      .given(async (context, settle) => {
        await aWorld(context, { SITE_A: {} });
        await aDataset(context, 'ds', ['f1'], 'SITE_A');
        await settle();
        await addRules(context, aRuleRequest('ds', 'SITE_A'), as('root'));
        await settle();
      })
      .when(async (context) => {
        const outcome = await startReplicaDeletions(
          context,
          { replicas: [await targetOf(context, 'f1')], obsoleteOnly: false, daemon: 'reaper' },
          as('root'),
        );
        expect(outcome.refused.map((refusal) => refusal.reason)).to.deep.equal(['a replication rule locks it']);
      })
      .thenNothingHappened());

  it('records the deletions and cleans up: files without replicas deleted and detached, the closed dataset they emptied deleted', () =>
    spec
      .given(obsolete(['f1', 'f2']))
      .when(async (context) => {
        const targets = [await targetOf(context, 'f1'), await targetOf(context, 'f2')];
        await startReplicaDeletions(context, { replicas: targets, obsoleteOnly: true, daemon: 'reaper' }, as('root'));
        const recorded = await recordReplicaDeletions(
          context,
          {
            deletions: targets.map((target) => ({ ...target, storage: 'deleted' })),
            daemon: 'reaper',
            removeOpen: false,
          },
          as('root'),
        );
        expect(recorded.deleted.map((target) => target.name)).to.deep.equal(['f1', 'f2']);
        expect(recorded.erased.map((did) => did.name).sort()).to.deep.equal(['ds', 'f1', 'f2']);
        expect((await loadDid(context, SCOPE, 'ds')).status).to.equal('Erased');
      })
      .thenAppended((events) => {
        // A file that goes with its last replica: one DidErased carrying the replica's deletion.
        expect(typesByStream(events).filter((line) => !line.endsWith('ReplicaDeletionStarted'))).to.deep.equal([
          `did-${SCOPE}:f1 DidErased`,
          `did-${SCOPE}:f2 DidErased`,
          `did-${SCOPE}:ds DidsDetached`,
          `did-${SCOPE}:ds DidErased`,
        ]);
        expect(
          events
            .filter((event) => event.type === 'DidErased' && event.stream !== `did-${SCOPE}:ds`)
            .map((event) =>
              (event.data as { replicasDeleted: { name: string; storage: string }[] }).replicasDeleted.map((r) => [
                r.name,
                r.storage,
              ]),
            ),
        ).to.deep.equal([[['f1', 'deleted']], [['f2', 'deleted']]]);
      }));

  it('keeps a file that has another replica, and the dataset that holds it', () =>
    spec
      .given(async (context, settle) => {
        await obsolete(['f1'])(context, settle);
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
      })
      .when(async (context) => {
        const target = await targetOf(context, 'f1');
        await startReplicaDeletions(context, { replicas: [target], obsoleteOnly: true, daemon: 'reaper' }, as('root'));
        const recorded = await recordReplicaDeletions(
          context,
          { deletions: [{ ...target, storage: 'not-found' }], daemon: 'reaper', removeOpen: false },
          as('root'),
        );
        expect(recorded.erased).to.deep.equal([]);
      })
      .thenAppended((events) =>
        expect(typesByStream(events)).to.deep.equal([
          `did-${SCOPE}:f1 ReplicaDeletionStarted`,
          `did-${SCOPE}:f1 ReplicaDeleted`,
        ]),
      ));

  it('gives a replica a lock took back after its file was deleted its transfer, and records no deletion for it', () =>
    spec
      .given(obsolete(['f1']))
      .when(async (context) => {
        const target = await targetOf(context, 'f1');
        await startReplicaDeletions(context, { replicas: [target], obsoleteOnly: true, daemon: 'reaper' }, as('root'));
        // The file is deleted from storage here; meanwhile a rule locks the replica.
        await addRules(context, aRuleRequest('ds', 'SITE_A'), as('root'));
        const recorded = await recordReplicaDeletions(
          context,
          { deletions: [{ ...target, storage: 'deleted' }], daemon: 'reaper', removeOpen: false },
          as('root'),
        );
        expect(recorded.retaken.map((retaken) => retaken.name)).to.deep.equal(['f1']);
        const replica = (await loadFileReplicas(context, SCOPE, 'f1')).replicas.get(target.rseId)!;
        expect(replica.state).to.equal('COPYING');
        expect(replica.pendingRequest?.id).to.be.a('string');
      })
      .thenAppended((events) => {
        expect(events.filter((event) => event.type === 'ReplicaDeleted')).to.deep.equal([]);
        expect(events.filter((event) => event.type === 'RequestQueued')).to.have.length(1);
      }));

  it('lets a new lock and a deletion of the same replica never both win, raced over many files (rule 21)', () => {
    const files = Array.from({ length: 20 }, (_, index) => `f${index}`);
    const deletedOnStorage = new Set<string>();
    return spec
      .given(async (context, settle) => {
        await aWorld(context, { SITE_A: {} });
        for (const file of files) await aDataset(context, `ds-${file}`, [file], 'SITE_A');
        await setTombstones(
          context,
          { replicas: files.map((name) => ({ scope: SCOPE, name, rse: 'SITE_A' })) },
          as('root'),
        );
        await settle();
      })
      .when(async (context) => {
        const reap = async (file: string) => {
          const target = await targetOf(context, file);
          const { marked } = await startReplicaDeletions(
            context,
            { replicas: [target], obsoleteOnly: true, daemon: 'reaper' },
            as('root'),
          );
          if (marked.length === 0) return;
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
          if (!(await stillBeingDeleted(context, target))) return;
          deletedOnStorage.add(file);
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
          await recordReplicaDeletions(
            context,
            { deletions: [{ ...target, storage: 'deleted' }], daemon: 'reaper', removeOpen: false },
            as('root'),
          );
        };
        const outcomes = await Promise.allSettled(
          files.flatMap((file) => [reap(file), addRules(context, aRuleRequest(`ds-${file}`, 'SITE_A'), as('root'))]),
        );
        for (const outcome of outcomes)
          if (outcome.status === 'rejected' && !(outcome.reason instanceof RucioError)) throw outcome.reason;
        const rseId = (await targetOf(context, 'f0')).rseId;
        for (const file of files) {
          const state = await loadFileReplicas(context, SCOPE, file);
          const replica = state.replicas.get(rseId);
          const dataset = await loadDid(context, SCOPE, `ds-${file}`);
          for (const ruleId of dataset.status === 'Live' ? dataset.rules.keys() : []) {
            const rule = await loadRule(context, ruleId);
            if (rule.status !== 'Live' || rule.locks.size === 0) continue;
            // Every lock a rule records holds a replica on the file's stream, never one being deleted.
            expect(replica?.locks.has(ruleId), `${file}: the rule's lock holds the replica`).to.equal(true);
            expect(replica!.state, `${file} is not being deleted under a lock`).to.not.equal('BEING_DELETED');
          }
          if (replica && replica.locks.size > 0 && deletedOnStorage.has(file)) {
            // The lock came after the file was deleted: the replica waits for a transfer to bring it back.
            expect(replica.state, `${file} comes back through a transfer`).to.equal('COPYING');
            expect(replica.pendingRequest?.id, `${file} has its transfer`).to.be.a('string');
          }
          if (!replica)
            expect(deletedOnStorage.has(file), `${file} left the catalogue only once deleted`).to.equal(true);
        }
      })
      .thenAppended(() => undefined);
  });
});
