import { expect } from 'chai';
import fc from 'fast-check';
import { canonicalJson, canonicalJsonByWalk } from '../../infra/eventstore/eventHashes.ts';

/**
 * The canonical JSON every event hash covers has one definition (the walk) and a fast path
 * through JSON.stringify; they must never disagree, or a hash computed at append time would not
 * verify later.
 */
describe('Canonical JSON', () => {
  it('sorts keys by code unit at every depth, with no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null }, '10': true, '9': false })).to.equal(
      '{"10":true,"9":false,"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
  });

  it('writes what JSON.stringify writes for undefined, non-finite numbers, dates and empty values', () => {
    const value = {
      gone: undefined,
      list: [undefined, Number.NaN, Infinity, -0],
      at: new Date('2026-11-23T00:00:00.000Z'),
      empty: {},
      none: [],
    };
    expect(canonicalJson(value)).to.equal(
      '{"at":"2026-11-23T00:00:00.000Z","empty":{},"list":[null,null,null,0],"none":[]}',
    );
    expect(canonicalJson(undefined)).to.equal('null');
  });

  it('keeps keys that plain objects inherit as data of their own (__proto__, toString, constructor)', () => {
    const value = JSON.parse(
      '{"__proto__":{"x":1},"meta":{"toString":"t","constructor":2},"other":{"a":1}}',
    ) as unknown;
    expect(canonicalJson(value)).to.equal(
      '{"__proto__":{"x":1},"meta":{"constructor":2,"toString":"t"},"other":{"a":1}}',
    );
  });

  it('agrees with the walk on any JSON value', () => {
    const key = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.constantFrom('__proto__', 'toString', 'valueOf', 'constructor', '0', '10', '9', 'a', 'é', '\u{1F600}'),
    );
    const { json } = fc.letrec((tie) => ({
      json: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.double(),
        fc.integer(),
        fc.string(),
        fc.constant(undefined),
        fc.array(tie('json'), { maxLength: 4 }),
        fc.dictionary(key, tie('json'), { maxKeys: 5 }),
      ),
    }));
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalJson(value)).to.equal(canonicalJsonByWalk(value));
      }),
      { numRuns: 2000 },
    );
  });
});
