import { expect } from 'chai';
import { StateCache, weightOf } from '../../commands/stateCache.ts';

/** The command side's state cache keeps within its two bounds: states, and what they hold. */
describe('StateCache', () => {
  const dataset = (children: number) => ({
    status: 'LIVE',
    content: { children: new Map(Array.from({ length: children }, (_, index) => [`s:f${index}`, { index }])) },
    rules: new Map(),
  });

  it('weighs a state by the entries of its collections', () => {
    expect(weightOf({ status: 'ABSENT' })).to.equal(1);
    expect(weightOf(dataset(1000))).to.equal(1001);
    expect(weightOf({ replicas: new Map([['rse', {}]]), locks: [1, 2], tags: new Set(['a']) })).to.equal(5);
  });

  it('drops the least recently used states beyond the number of entries', () => {
    const cache = new StateCache(2);
    cache.set('did', 'a', 0n, { n: 1 });
    cache.set('did', 'b', 0n, { n: 2 });
    cache.get('did', 'a');
    cache.set('did', 'c', 0n, { n: 3 });
    expect(cache.get('did', 'b')).to.equal(undefined);
    expect(cache.get('did', 'a')).to.deep.equal({ revision: 0n, state: { n: 1 } });
    expect(cache.size).to.deep.equal({ entries: 2, weight: 2 });
  });

  it('drops the least recently used states beyond the weight, however few they are', () => {
    const cache = new StateCache(10_000, 2500);
    cache.set('did', 'one', 0n, dataset(1000));
    cache.set('did', 'two', 0n, dataset(1000));
    cache.set('did', 'three', 0n, dataset(1000));
    expect(cache.get('did', 'one')).to.equal(undefined);
    expect(cache.size).to.deep.equal({ entries: 2, weight: 2002 });
  });

  it('keeps no state heavier than the whole bound, and forgets the older one of its stream', () => {
    const cache = new StateCache(10_000, 2500);
    cache.set('did', 'big', 0n, dataset(10));
    cache.set('did', 'big', 5n, dataset(5000));
    expect(cache.get('did', 'big')).to.equal(undefined);
    expect(cache.size).to.deep.equal({ entries: 0, weight: 0 });
  });
});
