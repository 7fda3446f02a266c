import { expect } from 'chai';
import {
  planExceptions,
  type ExceptionDidFacts,
  type ExceptionRequest,
} from '../../domain/lifetimeException/exceptionRequest.ts';
import type {
  LifetimeExceptionEvent,
  LifetimeExceptionRecord,
} from '../../domain/lifetimeException/lifetimeException.ts';
import { lifetimeExceptionDecider } from '../../domain/lifetimeException/lifetimeExceptionDecider.ts';
import { InvalidObject, UnsupportedOperation } from '../../domain/shared/errors.ts';
import {
  LifetimeExceptionDuplicate,
  LifetimeExceptionNotFound,
} from '../../domain/lifetimeException/lifetimeExceptionErrors.ts';
import { AT, deciderSpec, metadata, NOW } from '../support/deciderSpec.ts';

const given = deciderSpec(lifetimeExceptionDecider);
const exception: LifetimeExceptionRecord = {
  id: 'e1',
  account: 'jdoe',
  pattern: null,
  comments: 'needed for my analysis',
  expiresAt: '2027-01-01T00:00:00.000Z',
  dids: [{ scope: 'data18', name: 'ds1', didType: 'DATASET' }],
  createdAt: AT,
};
const requested: LifetimeExceptionEvent = { type: 'ExceptionRequested', data: { exception } };
const decide = (state: unknown, account = 'admin') => ({
  type: 'DecideException' as const,
  data: { id: 'e1', state },
  metadata: metadata(account),
});

describe('Decider: lifetime exceptions (§8)', () => {
  it('records a request, WAITING', () =>
    given([])
      .when({ type: 'RequestException', data: { exception }, metadata: metadata('jdoe') })
      .then([requested]));
  describe('when an exception is approved', () => {
    it('records who approved it, with A', () =>
      given([requested])
        .when(decide('A'))
        .then([
          { type: 'ExceptionApproved', data: { id: 'e1', approver: 'admin', previousState: 'WAITING', at: AT } },
        ]));
    it('records who approved it, with APPROVED', () =>
      given([requested])
        .when(decide('APPROVED'))
        .then([
          { type: 'ExceptionApproved', data: { id: 'e1', approver: 'admin', previousState: 'WAITING', at: AT } },
        ]));
  });
  it('records who rejected it, also after an approval', () =>
    given([
      requested,
      { type: 'ExceptionApproved', data: { id: 'e1', approver: 'admin', previousState: 'WAITING', at: AT } },
    ])
      .when(decide('R', 'root'))
      .then([{ type: 'ExceptionRejected', data: { id: 'e1', approver: 'root', previousState: 'APPROVED', at: AT } }]));
  it('changes nothing when asked for the state it has', () =>
    given([
      requested,
      { type: 'ExceptionRejected', data: { id: 'e1', approver: 'admin', previousState: 'WAITING', at: AT } },
    ])
      .when(decide('R'))
      .thenNothingHappened());
  describe('refuses any state but APPROVED and REJECTED (UnsupportedOperation)', () => {
    it('WAITING included', () =>
      given([requested])
        .when(decide('W'))
        .thenThrows(UnsupportedOperation, /only be APPROVED \(A\) or REJECTED \(R\)/));
    it('an unknown state', () => given([requested]).when(decide('X')).thenThrows(UnsupportedOperation));
    it('no state', () => given([requested]).when(decide(null)).thenThrows(UnsupportedOperation));
  });
  it('refuses an exception that does not exist (LifetimeExceptionNotFound)', () =>
    given([]).when(decide('A')).thenThrows(LifetimeExceptionNotFound));
});

describe('Asking for lifetime exceptions (§8 add_exception)', () => {
  const request = (extra: Partial<ExceptionRequest> = {}): ExceptionRequest => ({
    dids: [
      { scope: 'data18', name: 'aod1' },
      { scope: 'data18', name: 'esd1' },
      { scope: 'mc16', name: 'aod2' },
      { scope: 'data18', name: 'recent' },
      { scope: 'data18', name: 'ghost' },
      { scope: 'data18', name: 'aod3' },
    ],
    account: 'jdoe',
    pattern: 'data18.*',
    comments: 'analysis',
    expiresAt: '2026-12-31T00:00:00.000Z',
    now: NOW,
    cutoffDate: '2027-01-01',
    maxExtensionDays: 0,
    ...extra,
  });
  const old = '2026-06-01T00:00:00.000Z';
  const facts = new Map<string, ExceptionDidFacts>([
    ['data18:aod1', { didType: 'DATASET', datatype: 'AOD', endOfLife: old, openException: false }],
    ['data18:esd1', { didType: 'DATASET', datatype: 'ESD', endOfLife: old, openException: false }],
    ['mc16:aod2', { didType: 'CONTAINER', datatype: 'AOD', endOfLife: old, openException: false }],
    [
      'data18:recent',
      { didType: 'DATASET', datatype: 'AOD', endOfLife: '2027-06-01T00:00:00.000Z', openException: false },
    ],
    ['data18:aod3', { didType: 'DATASET', datatype: 'AOD', endOfLife: null, openException: false }],
  ]);
  const ids = () => {
    let next = 0;
    return () => `e${(next += 1)}`;
  };

  it('groups the affected DIDs by scope and datatype, one WAITING exception each, and reports the others', () => {
    const planned = planExceptions(request(), facts, ids());
    expect(planned.exceptions.map((item) => [item.id, item.dids.map((did) => did.name)])).to.deep.equal([
      ['e1', ['aod1']],
      ['e2', ['esd1']],
      ['e3', ['aod2']],
    ]);
    expect(planned.exceptions[0]).to.deep.include({
      account: 'jdoe',
      pattern: 'data18.*',
      comments: 'analysis',
      expiresAt: '2026-12-31T00:00:00.000Z',
      createdAt: AT,
    });
    expect(planned.unknown).to.deep.equal([{ scope: 'data18', name: 'ghost', didType: 'DATASET' }]);
    expect(planned.notAffected.map((did) => did.name)).to.deep.equal(['recent', 'aod3']);
  });
  it('refuses requests without a cutoff date in the future (UnsupportedOperation)', () => {
    for (const cutoffDate of ['', '2026-01-01', 'soon', '2026-13-45']) {
      expect(() => planExceptions(request({ cutoffDate }), facts, ids()), cutoffDate).to.throw(
        UnsupportedOperation,
        'Cannot submit exception at that date.',
      );
    }
  });
  it('defaults and caps the end at max_extension days', () => {
    expect(
      planExceptions(request({ expiresAt: null, maxExtensionDays: 10 }), facts, ids()).exceptions[0]!.expiresAt,
    ).to.equal('2026-12-02T10:00:00.000Z');
    expect(planExceptions(request({ maxExtensionDays: 10 }), facts, ids()).exceptions[0]!.expiresAt).to.equal(
      '2026-12-02T10:00:00.000Z',
    );
    expect(planExceptions(request({ expiresAt: null }), facts, ids()).exceptions[0]!.expiresAt).to.equal(null);
  });
  it('refuses an end in the past', () =>
    expect(() => planExceptions(request({ expiresAt: '2026-11-01T00:00:00.000Z' }), facts, ids())).to.throw(
      InvalidObject,
      /in the past/,
    ));
  it('refuses a DID named twice, or one the requester holds an exception for (LifetimeExceptionDuplicate)', () => {
    expect(() =>
      planExceptions(
        request({
          dids: [
            { scope: 'data18', name: 'aod1' },
            { scope: 'data18', name: 'aod1' },
          ],
        }),
        facts,
        ids(),
      ),
    ).to.throw(LifetimeExceptionDuplicate, /named twice/);
    const held = new Map(facts).set('data18:aod1', { ...facts.get('data18:aod1')!, openException: true });
    expect(() => planExceptions(request(), held, ids())).to.throw(
      LifetimeExceptionDuplicate,
      /has a lifetime exception for data18:aod1 already/,
    );
  });
});
