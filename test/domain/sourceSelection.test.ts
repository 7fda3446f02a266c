import { expect } from 'chai';
import { selectSources, type SourceSelection } from '../../domain/request/sourceSelection.ts';
import { aSelectionRequest, aTopology, copyProtocol, replicaOn, transferRse } from '../support/topology.ts';

const DEST = transferRse('DEST');
const sourcesOf = (selection: SourceSelection): string[] =>
  selection.kind === 'selected' ? selection.sources.map((source) => source.rse) : [selection.kind];

describe('Source selection: which sources a transfer may use (behaviour rule 23)', () => {
  it('takes an AVAILABLE copy on a linked RSE, with the URLs of the matching protocols', () => {
    const topology = aTopology([DEST, transferRse('A')], [['A', 'DEST', 1]]);
    expect(selectSources(topology, aSelectionRequest('DEST'), [replicaOn('A')])).to.deep.equal({
      kind: 'selected',
      sources: [{ rseId: 'a-id', rse: 'A', ranking: 0, pfn: 'root://a.example.org:1094/data/user/jdoe/f1' }],
      destUrl: 'root://dest.example.org:1094/data/user/jdoe/f1',
      transfertool: 'mock',
    });
  });

  it('drops sources without a distance to the destination, or with a null one: NO_SOURCES', () => {
    const topology = aTopology([DEST, transferRse('A'), transferRse('B')], [['B', 'DEST', null]]);
    expect(selectSources(topology, aSelectionRequest('DEST'), [replicaOn('A'), replicaOn('B')])).to.include({
      kind: 'unavailable',
      state: 'NO_SOURCES',
    });
  });

  it('copies a file whose name or scope would climb out of the prefix nowhere: NO_SOURCES, saying why (issue 33)', () => {
    const topology = aTopology([DEST, transferRse('A')], [['A', 'DEST', 1]]);
    for (const [scope, name] of [
      ['user.jdoe', 'x/../../../../../outside/t1'],
      ['..', 'dotdot.txt'],
    ] as const)
      expect(selectSources(topology, aSelectionRequest('DEST', { scope, name }), [replicaOn('A')])).to.deep.equal({
        kind: 'unavailable',
        state: 'NO_SOURCES',
        reason: `${scope}:${name} holds the path segment '..': it has no path below an RSE's prefix`,
      });
  });

  it('drops a source on a non-deterministic RSE whose stored path climbs (issue 33)', () => {
    const topology = aTopology([DEST, transferRse('A', { properties: { deterministic: false } })], [['A', 'DEST', 1]]);
    expect(selectSources(topology, aSelectionRequest('DEST'), [replicaOn('A', '/../outside/f1')])).to.include({
      kind: 'unavailable',
      state: 'NO_SOURCES',
    });
  });

  it('drops sources closed for reading, restricted ones (unless a transfer admin asks) and those outside the source expression', () => {
    const rses = [
      DEST,
      transferRse('A', { properties: { availability_read: false } }),
      transferRse('B', { attributes: { restricted_read: true } }),
      transferRse('C'),
    ];
    const topology = aTopology(
      rses,
      [
        ['A', 'DEST', 1],
        ['B', 'DEST', 1],
        ['C', 'DEST', 1],
      ],
      { transferAdmins: ['ops'] },
    );
    const replicas = [replicaOn('A'), replicaOn('B'), replicaOn('C')];
    expect(sourcesOf(selectSources(topology, aSelectionRequest('DEST'), replicas))).to.deep.equal(['C']);
    expect(sourcesOf(selectSources(topology, aSelectionRequest('DEST', { account: 'ops' }), replicas))).to.deep.equal([
      'B',
      'C',
    ]);
    expect(
      sourcesOf(
        selectSources(topology, aSelectionRequest('DEST', { account: 'ops', sourceReplicaExpression: 'B' }), replicas),
      ),
    ).to.deep.equal(['B']);
  });

  it('answers ONLY_TAPE_SOURCES when tape sources are not allowed and only tape holds the file', () => {
    const topology = aTopology(
      [DEST, transferRse('TAPE', { properties: { rse_type: 'TAPE' } })],
      [['TAPE', 'DEST', 1]],
    );
    expect(
      selectSources(topology, aSelectionRequest('DEST', { allowTapeSource: false }), [replicaOn('TAPE')]),
    ).to.include({ kind: 'unavailable', state: 'ONLY_TAPE_SOURCES' });
  });

  it('answers MISMATCH_SCHEME when a linked source shares no protocol with the destination', () => {
    const topology = aTopology(
      [DEST, transferRse('A', { protocols: [copyProtocol('davs', 'a.example.org')] })],
      [['A', 'DEST', 1]],
    );
    expect(selectSources(topology, aSelectionRequest('DEST'), [replicaOn('A')])).to.include({
      kind: 'unavailable',
      state: 'MISMATCH_SCHEME',
    });
  });

  it('prefers a higher ranking, then disk over tape, then the shorter distance (negative counting as 0)', () => {
    const rses = [
      DEST,
      transferRse('NEAR'),
      transferRse('FAR'),
      transferRse('TAPE', { properties: { rse_type: 'TAPE' } }),
      transferRse('MINUS'),
    ];
    const topology = aTopology(rses, [
      ['NEAR', 'DEST', 2],
      ['FAR', 'DEST', 5],
      ['TAPE', 'DEST', 1],
      ['MINUS', 'DEST', -3],
    ]);
    const replicas = [replicaOn('FAR'), replicaOn('TAPE'), replicaOn('NEAR'), replicaOn('MINUS')];
    expect(sourcesOf(selectSources(topology, aSelectionRequest('DEST'), replicas))[0]).to.equal('MINUS');
    const ranked = aSelectionRequest('DEST', {
      rankings: [
        { rseId: 'minus-id', rse: 'MINUS', ranking: -1 },
        { rseId: 'near-id', rse: 'NEAR', ranking: -1 },
      ],
    });
    // The others join as extra sources, by ranking then distance; tape never joins.
    expect(sourcesOf(selectSources(topology, ranked, replicas))).to.deep.equal(['FAR', 'MINUS', 'NEAR']);
  });

  it('adds up to four more linked disk sources to a multi-source transfer', () => {
    const names = ['S1', 'S2', 'S3', 'S4', 'S5', 'S6'];
    const topology = aTopology(
      [DEST, ...names.map((name) => transferRse(name))],
      names.map((name, index) => [name, 'DEST', index + 1] as const),
    );
    expect(
      sourcesOf(
        selectSources(
          topology,
          aSelectionRequest('DEST'),
          names.map((name) => replicaOn(name)),
        ),
      ),
    ).to.deep.equal(['S1', 'S2', 'S3', 'S4', 'S5']);
  });

  it('keeps to the preparer’s choice while it is usable', () => {
    const topology = aTopology(
      [DEST, transferRse('NEAR'), transferRse('FAR')],
      [
        ['NEAR', 'DEST', 1],
        ['FAR', 'DEST', 9],
      ],
    );
    const selection = selectSources(topology, aSelectionRequest('DEST', { preferredSourceRseId: 'far-id' }), [
      replicaOn('NEAR'),
      replicaOn('FAR'),
    ]);
    expect(sourcesOf(selection)).to.deep.equal(['FAR', 'NEAR']);
  });

  it('leaves requests to a destination closed for writing for later', () => {
    const topology = aTopology(
      [transferRse('DEST', { properties: { availability_write: false } }), transferRse('A')],
      [['A', 'DEST', 1]],
    );
    expect(selectSources(topology, aSelectionRequest('DEST'), [replicaOn('A')])).to.deep.equal({
      kind: 'blocked',
      reason: 'DEST is blocked for write',
    });
  });

  it('chooses the tool: the transfertool attribute, posix between file protocols, the default elsewhere', () => {
    const file = (rse: string, attributes: Record<string, string> = {}) =>
      transferRse(rse, {
        attributes,
        protocols: [
          copyProtocol('file', 'localhost', 1, { impl: 'rucio.rse.protocols.posix.Default', prefix: `/srv/${rse}` }),
        ],
      });
    const toolOf = (selection: SourceSelection) =>
      selection.kind === 'selected' ? selection.transfertool : selection.kind;
    expect(
      toolOf(
        selectSources(aTopology([file('DEST'), file('A')], [['A', 'DEST', 1]]), aSelectionRequest('DEST'), [
          replicaOn('A'),
        ]),
      ),
    ).to.equal('posix');
    expect(
      toolOf(
        selectSources(
          aTopology([file('DEST', { transfertool: 'fts3' }), file('A')], [['A', 'DEST', 1]]),
          aSelectionRequest('DEST'),
          [replicaOn('A')],
        ),
      ),
    ).to.equal('fts3');
    expect(
      toolOf(
        selectSources(
          aTopology([DEST, transferRse('A')], [['A', 'DEST', 1]], { defaultTransfertool: 'fts3' }),
          aSelectionRequest('DEST'),
          [replicaOn('A')],
        ),
      ),
    ).to.equal('fts3');
  });

  it('reads a non-deterministic source at its stored path', () => {
    const topology = aTopology(
      [DEST, transferRse('ND', { properties: { deterministic: false } })],
      [['ND', 'DEST', 1]],
    );
    const selection = selectSources(topology, aSelectionRequest('DEST'), [replicaOn('ND', 'stored/here/f1')]);
    expect(selection.kind === 'selected' && selection.sources[0]!.pfn).to.equal(
      'root://nd.example.org:1094/data/stored/here/f1',
    );
  });
});
