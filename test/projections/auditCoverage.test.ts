import { expect } from 'chai';
import { ALL_EVENT_TYPES, EVENT_TYPES_BY_AREA } from '../../domain/events.ts';
import { auditIndexProjection } from '../../projections/audit/auditIndex.ts';
import { AUDITED_EVENT_TYPES } from '../../projections/audit/auditSubjects.ts';

/**
 * The auditors' feed misses nothing: every event type the domain declares (domain/events.ts, each
 * area's record) is indexed by the audit. An area added to domain/events.ts and forgotten by
 * projections/audit/auditSubjects.ts fails here, by name (and does not compile there).
 */
describe('The audit covers every event the domain declares', () => {
  it('finds the event types to check', () => expect(Object.keys(ALL_EVENT_TYPES).length).to.be.greaterThan(100));

  for (const [area, types] of Object.entries(EVENT_TYPES_BY_AREA)) {
    it(`indexes every event of the ${area} area`, () => {
      const left = Object.keys(types).filter((type) => !Object.hasOwn(AUDITED_EVENT_TYPES, type));
      expect(left, `event types of ${area} the audit leaves out`).to.deep.equal([]);
    });
  }

  it('indexes nothing but the events the domain declares', () => {
    const unknown = Object.keys(AUDITED_EVENT_TYPES).filter((type) => !Object.hasOwn(ALL_EVENT_TYPES, type));
    expect(unknown).to.deep.equal([]);
  });

  it('is what the audit projection handles', () =>
    expect(Object.keys(auditIndexProjection.handles).sort()).to.deep.equal(Object.keys(ALL_EVENT_TYPES).sort()));
});
