import { expect } from 'chai';
import { selectSources, type SourceSelection } from '../../domain/request/sourceSelection.ts';
import { selectStageinSource } from '../../domain/request/stageinSelection.ts';
import { aSelectionRequest, aTopology, copyProtocol, replicaOn, transferRse } from '../support/topology.ts';

/** Source selection with multihop paths and STAGEIN requests (behaviour rule 23, Rucio's strategies). */

const hop = (name: string, extra: Parameters<typeof transferRse>[1] = {}) =>
  transferRse(name, { ...extra, attributes: { available_for_multihop: true, ...extra.attributes } });
const pathOf = (selection: SourceSelection): string[] =>
  selection.kind !== 'selected'
    ? [selection.kind]
    : [
        ...(selection.hops ?? []).map((planned) => `${planned.source.rse}->${planned.destRse}`),
        `${selection.sources[0]!.rse}->`,
      ];

describe('Source selection: multihop paths (Rucio’s transfer paths)', () => {
  it('plans the copy to the intermediate RSE first, and the request’s own copy from there', () => {
    const topology = aTopology(
      [transferRse('DEST'), transferRse('SRC'), hop('MID')],
      [
        ['SRC', 'MID', 1],
        ['MID', 'DEST', 1],
      ],
    );
    expect(selectSources(topology, aSelectionRequest('DEST'), [replicaOn('SRC')])).to.deep.equal({
      kind: 'selected',
      sources: [{ rseId: 'mid-id', rse: 'MID', ranking: 0, pfn: 'root://mid.example.org:1094/data/user/jdoe/f1' }],
      destUrl: 'root://dest.example.org:1094/data/user/jdoe/f1',
      transfertool: 'mock',
      hops: [
        {
          destRseId: 'mid-id',
          destRse: 'MID',
          source: { rseId: 'src-id', rse: 'SRC', ranking: 0, pfn: 'root://src.example.org:1094/data/user/jdoe/f1' },
          destUrl: 'root://mid.example.org:1094/data/user/jdoe/f1',
          transfertool: 'mock',
        },
      ],
    });
  });

  it('prefers a direct source to a multihop one of the same distance (PreferSingleHop)', () => {
    const topology = aTopology(
      [transferRse('DEST'), transferRse('NEAR'), transferRse('FAR'), hop('MID', { attributes: { hop_penalty: '0' } })],
      [
        ['NEAR', 'DEST', 2],
        ['FAR', 'MID', 1],
        ['MID', 'DEST', 1],
      ],
    );
    expect(
      pathOf(selectSources(topology, aSelectionRequest('DEST'), [replicaOn('FAR'), replicaOn('NEAR')])),
    ).to.deep.equal(['NEAR->']);
  });

  it('starts a path at a source it passes through (the file is there already)', () => {
    const topology = aTopology(
      [transferRse('DEST'), transferRse('FAR'), hop('MID'), hop('NEAR', { attributes: { hop_penalty: '0' } })],
      [
        ['FAR', 'MID', 1],
        ['MID', 'NEAR', 1],
        ['NEAR', 'DEST', 30],
        ['FAR', 'DEST', 100],
      ],
    );
    // FAR's cheapest path passes through NEAR, which holds the file too: the copy starts at NEAR.
    expect(
      pathOf(
        selectSources(
          topology,
          aSelectionRequest('DEST', { rankings: [{ rseId: 'near-id', rse: 'NEAR', ranking: -5 }] }),
          [replicaOn('FAR'), replicaOn('NEAR')],
        ),
      ),
    ).to.deep.equal(['NEAR->']);
  });

  it('drops a path that passes through a tape RSE (SkipIntermediateTape)', () => {
    const topology = aTopology(
      [transferRse('DEST'), transferRse('SRC'), hop('TAPEHOP', { properties: { rse_type: 'TAPE' } })],
      [
        ['SRC', 'TAPEHOP', 1],
        ['TAPEHOP', 'DEST', 1],
      ],
    );
    expect(selectSources(topology, aSelectionRequest('DEST'), [replicaOn('SRC')])).to.include({
      kind: 'unavailable',
      state: 'NO_SOURCES',
    });
  });

  it('chooses each copy’s tool by its destination: posix between file protocols, the default elsewhere', () => {
    const file = (name: string, extra: Parameters<typeof transferRse>[1] = {}) =>
      transferRse(name, {
        ...extra,
        protocols: [
          copyProtocol('file', 'localhost', 1, { impl: 'rucio.rse.protocols.posix.Default', prefix: `/srv/${name}` }),
          copyProtocol('davs', `${name.toLowerCase()}.example.org`, 2),
        ],
      });
    const topology = aTopology(
      [
        transferRse('DEST', { protocols: [copyProtocol('davs', 'dest.example.org')] }),
        file('SRC'),
        file('MID', { attributes: { available_for_multihop: true } }),
      ],
      [
        ['SRC', 'MID', 1],
        ['MID', 'DEST', 1],
      ],
      { defaultTransfertool: 'fts3' },
    );
    const selection = selectSources(topology, aSelectionRequest('DEST'), [replicaOn('SRC')]);
    expect(selection.kind === 'selected' && [selection.hops?.[0]?.transfertool, selection.transfertool]).to.deep.equal([
      'posix',
      'fts3',
    ]);
  });
});

describe('Source selection: STAGEIN requests (Rucio’s stagein definitions)', () => {
  const tape = (name: string, attributes: Record<string, string | boolean> = {}) =>
    transferRse(name, { properties: { rse_type: 'TAPE' }, attributes });
  const stagein = aSelectionRequest('BUFFER', { requestType: 'STAGEIN' });

  it('recalls the file on the tape whose staging_buffer is the destination, source and destination URL alike', () => {
    const topology = aTopology([transferRse('BUFFER'), tape('TAPE', { staging_buffer: 'BUFFER' })], []);
    expect(selectStageinSource(topology, stagein, [replicaOn('TAPE')])).to.deep.equal({
      kind: 'selected',
      sources: [{ rseId: 'tape-id', rse: 'TAPE', ranking: 0, pfn: 'root://tape.example.org:1094/data/user/jdoe/f1' }],
      destUrl: 'root://tape.example.org:1094/data/user/jdoe/f1',
      transfertool: 'mock',
    });
  });

  it('finds no source on a tape whose staging buffer is another RSE', () => {
    const topology = aTopology([transferRse('BUFFER'), tape('TAPE', { staging_buffer: 'ELSEWHERE' })], []);
    expect(selectStageinSource(topology, stagein, [replicaOn('TAPE')])).to.include({
      kind: 'unavailable',
      state: 'NO_SOURCES',
    });
  });

  it('pins a file on a staging_required destination that is its own staging buffer', () => {
    const topology = aTopology([tape('QOS', { staging_required: true, staging_buffer: 'QOS' })], []);
    const selection = selectStageinSource(topology, aSelectionRequest('QOS', { requestType: 'STAGEIN' }), []);
    expect(selection.kind === 'selected' && selection.sources.map((source) => source.rse)).to.deep.equal(['QOS']);
  });

  it('answers ONLY_TAPE_SOURCES when the request refuses tape sources', () => {
    const topology = aTopology([transferRse('BUFFER'), tape('TAPE', { staging_buffer: 'BUFFER' })], []);
    expect(selectStageinSource(topology, { ...stagein, allowTapeSource: false }, [replicaOn('TAPE')])).to.include({
      kind: 'unavailable',
      state: 'ONLY_TAPE_SOURCES',
    });
  });
});
