import { expect } from 'chai';
import { ALL_EVENT_TYPES, DOMAIN_AREAS } from '../../domain/areas.ts';
import { auditIndexProjection } from '../../projections/audit/auditIndex.ts';

/**
 * The auditors' feed misses nothing: the audit index handles the domain's own list of events
 * (domain/areas.ts, every area's record), so an area's events reach the feed without the audit
 * naming them.
 */
describe('The audit covers every event the domain declares', () => {
  it('finds the event types to check', () => expect(Object.keys(ALL_EVENT_TYPES).length).to.be.greaterThan(100));

  for (const area of DOMAIN_AREAS.areas.filter((candidate) => candidate.eventTypes.length > 0)) {
    it(`indexes every event of the ${area.name} area`, () => {
      const left = area.eventTypes.filter((type) => !Object.hasOwn(auditIndexProjection.handles, type));
      expect(left, `event types of ${area.name} the audit leaves out`).to.deep.equal([]);
    });
  }

  it('is what the audit projection handles', () =>
    expect(Object.keys(auditIndexProjection.handles).sort()).to.deep.equal(Object.keys(ALL_EVENT_TYPES).sort()));
});
