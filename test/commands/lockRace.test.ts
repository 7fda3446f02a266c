import { expect } from 'chai';
import { loadFileReplicas } from '../../commands/did/didStreams.ts';
import { setTombstones, updateReplicaStates } from '../../commands/replica/replicaUpdates.ts';
import { addRules } from '../../commands/rule/ruleCreationCommands.ts';
import { RucioError } from '../../domain/shared/errors.ts';
import { as, commandSpec } from '../support/commandSpec.ts';
import { aDataset, aRuleRequest, aWorld, SCOPE } from '../support/rules.ts';

/**
 * The lock invariant, raced: a replica that a rule locks is never left tombstoned nor being
 * deleted. Locking and deleting are decisions on the file's stream, so of two racing writers one
 * decides again on what the other did: the tombstone or the deletion is refused once a lock holds
 * the replica, and a lock taken after them clears the tombstone and brings the replica back.
 */
describe('Invariant: a lock and a deletion of the same replica cannot both win', () => {
  const spec = commandSpec();
  const files = Array.from({ length: 20 }, (_, index) => `f${index}`);

  const race = (deletion: 'tombstone' | 'being-deleted') =>
    spec
      .given(async (context, settle) => {
        await aWorld(context, { SITE_A: {} });
        for (const file of files) await aDataset(context, `ds-${file}`, [file], 'SITE_A');
        await settle();
      })
      .when(async (context) => {
        const outcomes = await Promise.allSettled(
          files.flatMap((file) => [
            addRules(context, aRuleRequest(`ds-${file}`, 'SITE_A'), as('root')),
            deletion === 'tombstone'
              ? setTombstones(context, { replicas: [{ scope: SCOPE, name: file, rse: 'SITE_A' }] }, as('root'))
              : updateReplicaStates(
                  context,
                  { rse: 'SITE_A', files: [{ scope: SCOPE, name: file, state: 'BEING_DELETED' }] },
                  as('root'),
                ),
          ]),
        );
        for (const outcome of outcomes) {
          if (outcome.status === 'rejected' && !(outcome.reason instanceof RucioError)) throw outcome.reason;
        }
        for (const file of files) {
          const replica = (await loadFileReplicas(context, SCOPE, file)).replicas.values().next().value!;
          expect(replica.locks.size, `${file} keeps its lock`).to.equal(1);
          expect(replica.tombstone, `${file} is not left tombstoned`).to.equal(null);
          expect(replica.state, `${file} is not left being deleted`).to.not.equal('BEING_DELETED');
        }
      })
      .thenAppended(() => undefined);

  it('holds against tombstones set at the same time', () => race('tombstone'));
  it('holds against deletions started at the same time', () => race('being-deleted'));
});
