import { undertaker, type ExpiredDid } from '../../domain/did/undertaker.ts';
import { workflowSpec } from '../support/workflowSpec.ts';

const given = workflowSpec(undertaker);
const now = '2026-11-22T10:00:00.000Z';
const expired = (name: string, expiredAt: string, lockedRules = 0): ExpiredDid => ({
  scope: 'user.jdoe',
  name,
  expiredAt,
  lockedRules,
});

describe('Workflow: the undertaker (behaviour rule 7)', () => {
  describe('when expired DIDs have no locked rule', () => {
    it('deletes them, soonest expired first', () =>
      given({ expired: [expired('late', '2026-11-22T09:00:00.000Z'), expired('early', '2026-11-21T09:00:00.000Z')] })
        .when({ now, dryRun: false })
        .then([
          { type: 'DeleteExpiredDid', data: { scope: 'user.jdoe', name: 'early' } },
          { type: 'DeleteExpiredDid', data: { scope: 'user.jdoe', name: 'late' } },
        ]));
  });

  describe('when a DID has a locked rule', () => {
    it('leaves it, saying why', () =>
      given({ expired: [expired('kept', '2026-11-21T09:00:00.000Z', 1)] })
        .when({ now, dryRun: false })
        .then([
          { type: 'Skipped', data: { what: 'user.jdoe:kept', reason: 'a locked replication rule protects it' } },
        ]));
  });

  describe('when a DID has not expired at the tick', () => {
    it('does nothing with it (the read model may be ahead of the tick)', () =>
      given({ expired: [expired('future', '2026-11-22T10:00:00.001Z')] })
        .when({ now, dryRun: false })
        .thenNothing());
  });

  describe('in a dry run', () => {
    it('deletes nothing and reports each DID it would have deleted', () =>
      given({ expired: [expired('ds', '2026-11-21T09:00:00.000Z')] })
        .when({ now, dryRun: true })
        .then([{ type: 'Skipped', data: { what: 'user.jdoe:ds', reason: 'dry run' } }]));
  });
});
