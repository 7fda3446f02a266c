import { expect } from 'chai';
import { listedFile, listingProtocols, type ListingRse } from '../../domain/replica/replicaListing.ts';
import { checkSortingAlgorithm, distanceKm, orderedPfns, type PfnOrder } from '../../domain/replica/replicaSorting.ts';
import { noPriorities, type RseProtocol } from '../../domain/rse/protocol.ts';
import { SortingAlgorithmNotSupported } from '../../domain/shared/errors.ts';

const readable = (wan: number | null, lan: number | null): RseProtocol['domains'] => {
  const domains = noPriorities();
  domains.wan.read = wan;
  domains.lan.read = lan;
  return domains;
};

const protocol = (scheme: string, hostname: string, wan: number | null, lan: number | null): RseProtocol => ({
  scheme,
  hostname,
  port: 1094,
  prefix: '/data',
  impl: 'rucio.rse.protocols.xrootd.Default',
  domains: readable(wan, lan),
  extended_attributes: null,
});

const site = (id: string, rse: string, protocols: RseProtocol[], extra: Partial<ListingRse> = {}): ListingRse => ({
  id,
  rse,
  rseType: 'DISK',
  volatile: false,
  deterministic: true,
  lfn2pfnAlgorithm: 'identity',
  protocols,
  latitude: null,
  longitude: null,
  ...extra,
});

const near = site('1', 'NEAR_DISK', [protocol('root', 'near', 2, 1), protocol('https', 'near', 1, null)], {
  latitude: 46.2,
  longitude: 6.1,
});
const far = site('2', 'FAR_DISK', [protocol('root', 'far', 1, null)], { latitude: -33.9, longitude: 151.2 });
const facts = { scope: 'mc', name: 'f1', bytes: 10, md5: null, adler32: 'aaaaaaaa' };
const order = (extra: Partial<PfnOrder> = {}): PfnOrder => ({
  algorithm: undefined,
  client: { latitude: 47.4, longitude: 8.5 },
  pfnCoordinates: (_pfn, entry) => (entry.rse_id === '1' ? near : far),
  lanFirst: true,
  limit: undefined,
  random: () => 0,
  ...extra,
});

describe('Replica listing: PFNs of a file (behaviour rule 10)', () => {
  it('uses the best read protocol per domain, or every requested scheme the RSE serves', () => {
    expect(
      listingProtocols(near, 'wan', undefined).map(({ protocol: p, domain, priority }) => [p.scheme, domain, priority]),
    ).to.deep.equal([['https', 'wan', 1]]);
    expect(listingProtocols(near, 'all', undefined).map(({ protocol: p, domain }) => [p.scheme, domain])).to.deep.equal(
      [
        ['https', 'wan'],
        ['root', 'wan'],
        ['root', 'lan'],
      ],
    );
    expect(listingProtocols(near, 'wan', ['root', 'davs']).map(({ protocol: p }) => p.scheme)).to.deep.equal(['root']);
  });

  it('orders PFNs LAN before WAN by protocol priority and numbers them from 1', () => {
    const file = listedFile(facts, [
      { rse: far, state: 'AVAILABLE', path: null, protocols: listingProtocols(far, 'all', ['root']) },
      { rse: near, state: 'AVAILABLE', path: null, protocols: listingProtocols(near, 'all', ['root']) },
    ]);
    expect(Object.entries(file.pfns).map(([pfn, entry]) => [pfn, entry.domain, entry.priority])).to.deep.equal([
      ['root://near:1094/data/mc/f1', 'lan', 1],
      ['root://far:1094/data/mc/f1', 'wan', 2],
    ]);
    expect(file.rses).to.deep.equal({
      NEAR_DISK: ['root://near:1094/data/mc/f1'],
      FAR_DISK: ['root://far:1094/data/mc/f1'],
    });
    expect(file.states).to.deep.equal({ FAR_DISK: 'AVAILABLE', NEAR_DISK: 'AVAILABLE' });
  });

  it('gives a non-deterministic replica the PFN of its stored path, and none without one', () => {
    const tape = site('3', 'TAPE', [protocol('root', 'tape', 1, null)], { deterministic: false });
    expect(
      Object.keys(
        listedFile(facts, [
          { rse: tape, state: 'AVAILABLE', path: '/raw/f1', protocols: listingProtocols(tape, 'wan', undefined) },
        ]).pfns,
      ),
    ).to.deep.equal(['root://tape:1094/data/raw/f1']);
    expect(
      listedFile(facts, [
        { rse: tape, state: 'AVAILABLE', path: null, protocols: listingProtocols(tape, 'wan', undefined) },
      ]).pfns,
    ).to.deep.equal({});
  });
});

describe('Replica listing: sorting PFNs for the client', () => {
  const file = listedFile(facts, [
    { rse: far, state: 'AVAILABLE', path: null, protocols: listingProtocols(far, 'wan', ['root']) },
    { rse: near, state: 'AVAILABLE', path: null, protocols: listingProtocols(near, 'all', ['root']) },
  ]);

  it('sorts WAN PFNs by distance to the client after the LAN ones, and applies the limit', () => {
    const twoWan = listedFile(facts, [
      { rse: far, state: 'AVAILABLE', path: null, protocols: listingProtocols(far, 'wan', ['root']) },
      { rse: near, state: 'AVAILABLE', path: null, protocols: listingProtocols(near, 'wan', ['root']) },
    ]);
    expect(Object.keys(twoWan.pfns)).to.deep.equal(['root://far:1094/data/mc/f1', 'root://near:1094/data/mc/f1']);
    expect(Object.entries(orderedPfns(twoWan, order())).map(([pfn, entry]) => [pfn, entry.priority])).to.deep.equal([
      ['root://near:1094/data/mc/f1', 1],
      ['root://far:1094/data/mc/f1', 2],
    ]);
    expect(Object.keys(orderedPfns(twoWan, order({ limit: 1 })))).to.deep.equal(['root://near:1094/data/mc/f1']);
    expect(distanceKm({ latitude: 0, longitude: 0 }, { latitude: 0, longitude: 1 })).to.be.closeTo(111.3, 0.1);
    expect(distanceKm({ latitude: null, longitude: 0 }, { latitude: 0, longitude: 1 })).to.equal(360_000);
  });

  it('keeps the priority order when the client location is unknown, and shuffles for random', () => {
    const unknown = orderedPfns(file, order({ client: { latitude: null, longitude: null }, lanFirst: false }));
    expect(Object.keys(unknown)).to.deep.equal(['root://near:1094/data/mc/f1', 'root://far:1094/data/mc/f1']);
    expect(Object.values(orderedPfns(file, order({ algorithm: 'random', limit: 1 })))).to.have.length(1);
    expect(() => checkSortingAlgorithm('closest')).to.throw(
      SortingAlgorithmNotSupported,
      /Sorting algorithm: closest is not supported/,
    );
  });
});
