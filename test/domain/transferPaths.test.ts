import { expect } from 'chai';
import { shortestPaths, type PathsFromSources } from '../../domain/request/transferPaths.ts';
import type { MultihopSettings, TransferRse } from '../../domain/request/topology.ts';
import { aTopology, copyProtocol, transferRse } from '../support/topology.ts';

/**
 * Path finding (Rucio's `Topology.search_shortest_paths`): given RSEs, links and multihop settings,
 * when paths are asked from sources to a destination, then each source gets its cheapest path
 * (RSE names in order, and its cost), `mismatch`, or none.
 */

type Link = readonly [string, string, number | null];

const hopRse = (name: string, attributes: Record<string, string | boolean> = {}) =>
  transferRse(name, { attributes: { available_for_multihop: true, ...attributes } });
const davsOnly = (name: string) => transferRse(name, { protocols: [copyProtocol('davs', `${name}.example.org`)] });
const bothSchemes = (name: string) =>
  transferRse(name, {
    attributes: { available_for_multihop: true },
    protocols: [copyProtocol('root', `${name}.example.org`), copyProtocol('davs', `${name}.example.org`)],
  });

const given = (rses: readonly TransferRse[], links: readonly Link[], multihop: Partial<MultihopSettings> = {}) => ({
  when: (sources: readonly string[], dest: string) => {
    const topology = aTopology(rses, links, { multihop });
    const ids = new Map(rses.map((rse) => [rse.rse, rse.id]));
    const paths: PathsFromSources = shortestPaths(
      topology,
      sources.map((name) => ids.get(name)!),
      ids.get(dest)!,
    );
    const named = Object.fromEntries(
      [...paths].map(([id, path]) => [
        rses.find((rse) => rse.id === id)!.rse,
        path === 'mismatch'
          ? 'mismatch'
          : { through: [path.hops[0]!.source.rse, ...path.hops.map((hop) => hop.dest.rse)], cost: path.cost },
      ]),
    );
    return { then: (expected: Record<string, unknown>) => expect(named).to.deep.equal(expected) };
  },
});

// Behaviour rule 23: shorter distance and single hops come first.
describe('Path finding: the cheapest path from each source (Rucio’s search_shortest_paths)', () => {
  it('takes the direct link when no RSE is marked for multihop', () =>
    given(
      [transferRse('SRC'), transferRse('DST'), transferRse('MID')],
      [
        ['SRC', 'DST', 3],
        ['SRC', 'MID', 1],
        ['MID', 'DST', 1],
      ],
    )
      .when(['SRC'], 'DST')
      .then({ SRC: { through: ['SRC', 'DST'], cost: 3 } }));

  it('finds no path without a link when multihop is off, even through an RSE that could relay', () =>
    given(
      [transferRse('SRC'), transferRse('DST'), transferRse('MID')],
      [
        ['SRC', 'MID', 1],
        ['MID', 'DST', 1],
      ],
    )
      .when(['SRC'], 'DST')
      .then({}));

  it('goes through an available_for_multihop RSE when no direct link exists, paying its hop penalty', () =>
    given(
      [transferRse('SRC'), transferRse('DST'), hopRse('MID')],
      [
        ['SRC', 'MID', 2],
        ['MID', 'DST', 3],
      ],
    )
      .when(['SRC'], 'DST')
      .then({ SRC: { through: ['SRC', 'MID', 'DST'], cost: 15 } }));

  it('prefers a multihop path that costs less than the direct link, as Rucio does', () =>
    given(
      [transferRse('SRC'), transferRse('DST'), hopRse('MID')],
      [
        ['SRC', 'DST', 20],
        ['SRC', 'MID', 1],
        ['MID', 'DST', 1],
      ],
    )
      .when(['SRC'], 'DST')
      .then({ SRC: { through: ['SRC', 'MID', 'DST'], cost: 12 } }));

  it('keeps the direct link when the hop penalty makes the detour dearer', () =>
    given(
      [transferRse('SRC'), transferRse('DST'), hopRse('MID', { hop_penalty: '30' })],
      [
        ['SRC', 'DST', 20],
        ['SRC', 'MID', 1],
        ['MID', 'DST', 1],
      ],
    )
      .when(['SRC'], 'DST')
      .then({ SRC: { through: ['SRC', 'DST'], cost: 20 } }));

  it('crosses a scheme gap through an RSE speaking both protocols', () =>
    given(
      [transferRse('SRC'), davsOnly('DST'), bothSchemes('MID')],
      [
        ['SRC', 'DST', 1],
        ['SRC', 'MID', 1],
        ['MID', 'DST', 1],
      ],
    )
      .when(['SRC'], 'DST')
      .then({ SRC: { through: ['SRC', 'MID', 'DST'], cost: 12 } }));

  it('answers mismatch for a linked source when no path shares protocols', () =>
    given([transferRse('SRC'), davsOnly('DST')], [['SRC', 'DST', 1]])
      .when(['SRC'], 'DST')
      .then({ SRC: 'mismatch' }));

  it('never passes through an RSE not marked for multihop, nor one closed for reading or writing', () =>
    given(
      [
        transferRse('SRC'),
        transferRse('DST'),
        transferRse('PLAIN'),
        transferRse('CLOSED', {
          attributes: { available_for_multihop: true },
          properties: { availability_write: false },
        }),
      ],
      [
        ['SRC', 'PLAIN', 1],
        ['PLAIN', 'DST', 1],
        ['SRC', 'CLOSED', 1],
        ['CLOSED', 'DST', 1],
      ],
    )
      .when(['SRC'], 'DST')
      .then({}));

  it('chains several intermediate RSEs', () =>
    given(
      [transferRse('SRC'), transferRse('DST'), hopRse('H1'), hopRse('H2')],
      [
        ['SRC', 'H1', 1],
        ['H1', 'H2', 1],
        ['H2', 'DST', 1],
      ],
    )
      .when(['SRC'], 'DST')
      .then({ SRC: { through: ['SRC', 'H1', 'H2', 'DST'], cost: 23 } }));

  it('keeps within multihop_max_hops copies, taking a dearer path that fits the bound', () =>
    given(
      [transferRse('SRC'), transferRse('DST'), hopRse('H1'), hopRse('H2'), hopRse('FAR', { hop_penalty: '100' })],
      [
        ['SRC', 'H1', 1],
        ['H1', 'H2', 1],
        ['H2', 'DST', 1],
        ['SRC', 'FAR', 1],
        ['FAR', 'DST', 1],
      ],
      { maxHops: 2 },
    )
      .when(['SRC'], 'DST')
      .then({ SRC: { through: ['SRC', 'FAR', 'DST'], cost: 102 } }));

  it('finds no path when every path needs more copies than multihop_max_hops', () =>
    given(
      [transferRse('SRC'), transferRse('DST'), hopRse('H1'), hopRse('H2')],
      [
        ['SRC', 'H1', 1],
        ['H1', 'H2', 1],
        ['H2', 'DST', 1],
      ],
      { maxHops: 2 },
    )
      .when(['SRC'], 'DST')
      .then({}));

  it('answers every source at once, each by its own cheapest path', () =>
    given(
      [transferRse('A'), transferRse('B'), transferRse('DST'), hopRse('MID')],
      [
        ['A', 'DST', 5],
        ['B', 'MID', 1],
        ['MID', 'DST', 1],
      ],
    )
      .when(['A', 'B'], 'DST')
      .then({ A: { through: ['A', 'DST'], cost: 5 }, B: { through: ['B', 'MID', 'DST'], cost: 12 } }));

  it('turns multihop off with an empty multihop_rse_expression', () =>
    given(
      [transferRse('SRC'), transferRse('DST'), hopRse('MID')],
      [
        ['SRC', 'MID', 1],
        ['MID', 'DST', 1],
      ],
      { rseExpression: '' },
    )
      .when(['SRC'], 'DST')
      .then({}));

  it('takes the configured hop penalty for RSEs without their own', () =>
    given(
      [transferRse('SRC'), transferRse('DST'), hopRse('MID')],
      [
        ['SRC', 'MID', 1],
        ['MID', 'DST', 1],
      ],
      { hopPenalty: 3 },
    )
      .when(['SRC'], 'DST')
      .then({ SRC: { through: ['SRC', 'MID', 'DST'], cost: 5 } }));
});
