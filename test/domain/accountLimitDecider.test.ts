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
  describe('when a local limit is set', () => {
    const set = (bytes: number) =>
      ({ type: 'SetLocalAccountLimit', data: { ...local, bytes }, metadata: metadata() }) as const;
    it('sets it', () => given([]).when(set(100)).then([localSet]));
    it('sets nothing when the limit is already that', () => given([localSet]).when(set(100)).thenNothingHappened());
    it('replaces another limit', () =>
      given([localSet])
        .when(set(5))
        .then([{ type: 'LocalAccountLimitSet', data: { ...local, bytes: 5 } }]));
  });

  describe('when a local limit is removed', () => {
    const remove = { type: 'RemoveLocalAccountLimit', data: local, metadata: metadata() } as const;
    it('removes it', () =>
      given([localSet])
        .when(remove)
        .then([{ type: 'LocalAccountLimitRemoved', data: local }]));
    it('removes nothing, silently, when there is none', () => given([]).when(remove).thenNothingHappened());
  });

  describe('when global limits are set and removed, per expression', () => {
    it('sets one', () =>
      given([])
        .when({
          type: 'SetGlobalAccountLimit',
          data: { account: 'jdoe', rseExpression: 'tier=1', bytes: -1 },
          metadata: metadata(),
        })
        .then([globalSet]));
    it('removes one', () =>
      given([globalSet])
        .when({
          type: 'RemoveGlobalAccountLimit',
          data: { account: 'jdoe', rseExpression: 'tier=1' },
          metadata: metadata(),
        })
        .then([{ type: 'GlobalAccountLimitRemoved', data: { account: 'jdoe', rseExpression: 'tier=1' } }]));
    it('removes nothing, silently, for an expression without one', () =>
      given([])
        .when({
          type: 'RemoveGlobalAccountLimit',
          data: { account: 'jdoe', rseExpression: 'x' },
          metadata: metadata(),
        })
        .thenNothingHappened());
  });

  it('accepts whole bytes and -1 for no limit, nothing else', () => {
    expect(limitBytes(0)).to.equal(0);
    expect(limitBytes(-1)).to.equal(-1);
    for (const bad of [-2, 1.5, '10', null, true])
      expect(() => limitBytes(bad), String(bad)).to.throw(InvalidObject, /bytes/);
  });
});
