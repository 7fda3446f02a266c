import { expect } from 'chai';
import { limitBytes, type AccountLimitEvent } from '../../domain/accountLimit/accountLimit.ts';
import { accountLimitsDecider } from '../../domain/accountLimit/accountLimitDecider.ts';
import { InvalidObject } from '../../domain/shared/errors.ts';
import { deciderSpec, metadata } from '../support/deciderSpec.ts';

const given = deciderSpec(accountLimitsDecider);
const local = { account: 'jdoe', rseId: 'a'.repeat(32), rse: 'CERN_DISK' };
const localSet: AccountLimitEvent = { type: 'LocalAccountLimitSet', data: { ...local, bytes: 100 } };
const globalSet: AccountLimitEvent = {
  type: 'GlobalAccountLimitSet',
  data: { account: 'jdoe', rseExpression: 'tier=1', bytes: -1 },
};

describe('account limits decider', () => {
  it('sets local limits as an upsert and removes them silently when absent', () => {
    given([])
      .when({ type: 'SetLocalAccountLimit', data: { ...local, bytes: 100 }, metadata: metadata() })
      .then([localSet]);
    given([localSet])
      .when({ type: 'SetLocalAccountLimit', data: { ...local, bytes: 100 }, metadata: metadata() })
      .thenNothingHappened();
    given([localSet])
      .when({ type: 'SetLocalAccountLimit', data: { ...local, bytes: 5 }, metadata: metadata() })
      .then([{ type: 'LocalAccountLimitSet', data: { ...local, bytes: 5 } }]);
    given([localSet])
      .when({ type: 'RemoveLocalAccountLimit', data: local, metadata: metadata() })
      .then([{ type: 'LocalAccountLimitRemoved', data: local }]);
    given([]).when({ type: 'RemoveLocalAccountLimit', data: local, metadata: metadata() }).thenNothingHappened();
  });

  it('sets and removes global limits per expression', () => {
    given([])
      .when({
        type: 'SetGlobalAccountLimit',
        data: { account: 'jdoe', rseExpression: 'tier=1', bytes: -1 },
        metadata: metadata(),
      })
      .then([globalSet]);
    given([globalSet])
      .when({
        type: 'RemoveGlobalAccountLimit',
        data: { account: 'jdoe', rseExpression: 'tier=1' },
        metadata: metadata(),
      })
      .then([{ type: 'GlobalAccountLimitRemoved', data: { account: 'jdoe', rseExpression: 'tier=1' } }]);
    given([])
      .when({ type: 'RemoveGlobalAccountLimit', data: { account: 'jdoe', rseExpression: 'x' }, metadata: metadata() })
      .thenNothingHappened();
  });

  it('accepts whole bytes and -1 for no limit, nothing else', () => {
    expect(limitBytes(0)).to.equal(0);
    expect(limitBytes(-1)).to.equal(-1);
    for (const bad of [-2, 1.5, '10', null, true])
      expect(() => limitBytes(bad), String(bad)).to.throw(InvalidObject, /bytes/);
  });
});
