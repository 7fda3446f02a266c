import { expect } from 'chai';
import { atropos, type AtroposTick, type RuleBeyondEndOfLife } from '../../domain/lifetimeException/atropos.ts';
import { workflowSpec } from '../support/workflowSpec.ts';

const now = '2026-11-22T10:00:00.000Z';
const tick = (extra: Partial<AtroposTick> = {}): AtroposTick => ({
  now,
  dryRun: false,
  gracePeriod: 86_400,
  spreadPeriod: 0,
  purgeReplicas: false,
  unlock: false,
  ...extra,
});
const rule = (ruleId: string, name: string, extra: Partial<RuleBeyondEndOfLife> = {}): RuleBeyondEndOfLife => ({
  ruleId,
  scope: 'data18',
  name,
  eolAt: '2026-11-01T00:00:00.000Z',
  expiresAt: null,
  locked: false,
  ...extra,
});
const given = workflowSpec(atropos);
const expire = (ruleId: string, name: string, extra: object = {}) => ({
  type: 'ExpireRule' as const,
  data: {
    ruleId,
    scope: 'data18',
    name,
    eolAt: '2026-11-01T00:00:00.000Z',
    lifetime: 86_400,
    purgeReplicas: false,
    unlock: false,
    ...extra,
  },
});

describe('Workflow: atropos (§8)', () => {
  it('gives rules past their end of life the grace period as lifetime, soonest end first', () =>
    given({
      rules: [rule('late', 'ds2', { eolAt: '2026-11-10T00:00:00.000Z' }), rule('early', 'ds1')],
      exceptions: new Map(),
    })
      .when(tick())
      .then([
        expire('early', 'ds1'),
        { ...expire('late', 'ds2'), data: { ...expire('late', 'ds2').data, eolAt: '2026-11-10T00:00:00.000Z' } },
      ]));

  it('leaves rules whose end of life has not come', () =>
    given({ rules: [rule('r', 'ds', { eolAt: '2026-11-22T10:00:00.001Z' })], exceptions: new Map() })
      .when(tick())
      .thenNothing());

  it('moves the end of life of a rule whose DID has an approved exception ending later, instead of condemning it', () =>
    given({
      rules: [rule('kept', 'ds1'), rule('other', 'ds2')],
      exceptions: new Map([['data18:ds1', '2027-01-01T00:00:00.000Z']]),
    })
      .when(tick())
      .then([
        { type: 'ExtendEndOfLife', data: { ruleId: 'kept', eolAt: '2027-01-01T00:00:00.000Z' } },
        expire('other', 'ds2'),
      ]));

  it('leaves a rule alone for good under an exception without end', () =>
    given({ rules: [rule('kept', 'ds1')], exceptions: new Map([['data18:ds1', null]]) })
      .when(tick())
      .then([
        {
          type: 'Skipped',
          data: {
            what: 'rule kept on data18:ds1',
            reason: 'an approved lifetime exception without end covers its DID',
          },
        },
      ]));

  it('condemns a rule whose exception has ended too', () =>
    given({ rules: [rule('r', 'ds1')], exceptions: new Map([['data18:ds1', '2026-11-15T00:00:00.000Z']]) })
      .when(tick())
      .then([{ ...expire('r', 'ds1'), data: { ...expire('r', 'ds1').data, eolAt: '2026-11-15T00:00:00.000Z' } }]));

  it('purges, unlocks locked rules and spreads the lifetimes as configured', () => {
    const [output] = atropos.decide(tick({ purgeReplicas: true, unlock: true, spreadPeriod: 3600 }), {
      rules: [rule('r', 'ds', { locked: true })],
      exceptions: new Map(),
    });
    expect(output).to.deep.include({ type: 'ExpireRule' });
    const data = output!.data as { lifetime: number; purgeReplicas: boolean; unlock: boolean };
    expect(data.lifetime).to.be.within(86_400, 86_400 + 3600);
    expect(data).to.include({ purgeReplicas: true, unlock: true });
    expect(
      atropos.decide(tick({ purgeReplicas: true, unlock: true, spreadPeriod: 3600 }), {
        rules: [rule('r', 'ds', { locked: true })],
        exceptions: new Map(),
      }),
    ).to.deep.equal([output]);
  });

  it('leaves a rule that expires soon already (Rucio would push its deletion back at every cycle)', () =>
    given({ rules: [rule('r', 'ds', { expiresAt: '2026-11-22T12:00:00.000Z' })], exceptions: new Map() })
      .when(tick())
      .then([
        {
          type: 'Skipped',
          data: { what: 'rule r on data18:ds', reason: 'expires at 2026-11-22T12:00:00.000Z already' },
        },
      ]));

  it('only reports in a dry run', () =>
    given({
      rules: [rule('r', 'ds1'), rule('kept', 'ds2')],
      exceptions: new Map([['data18:ds2', '2027-01-01T00:00:00.000Z']]),
    })
      .when(tick({ dryRun: true }))
      .then([
        {
          type: 'Skipped',
          data: {
            what: 'rule r on data18:ds1',
            reason: 'dry run: would expire in 86400 s (end of life 2026-11-01T00:00:00.000Z)',
          },
        },
        {
          type: 'Skipped',
          data: {
            what: 'rule kept on data18:ds2',
            reason: 'dry run: its end of life would move to 2027-01-01T00:00:00.000Z (approved lifetime exception)',
          },
        },
      ]));
});
