import { expect } from 'chai';
import { pfnsToRses } from '../../domain/replica/pfnRses.ts';
import { cleanPfn, didCandidatesOfPath, expectedPfns, parsePfn, storedPathOf } from '../../domain/replica/pfns.ts';
import { noPriorities, type RseProtocol } from '../../domain/rse/protocol.ts';
import { InvalidPath, InvalidType } from '../../domain/shared/errors.ts';

const protocol = (overrides: Partial<RseProtocol> = {}): RseProtocol => ({
  scheme: 'root',
  hostname: 'xrd.example.org',
  port: 1094,
  prefix: '//atlas',
  impl: 'rucio.rse.protocols.xrootd.Default',
  domains: noPriorities(),
  extended_attributes: null,
  ...overrides,
});

describe('PFNs: taking them apart and putting them back', () => {
  it('parses a PFN against its protocol as Rucio does: doubled slashes collapse, the prefix goes', () => {
    const parsed = parsePfn(protocol(), 'root://xrd.example.org:1094//atlas/data/run1/file.root');
    expect(parsed).to.deep.equal({
      scheme: 'root',
      hostname: 'xrd.example.org',
      port: 1094,
      path: '/data/run1/',
      name: 'file.root',
    });
    expect(storedPathOf(parsed)).to.equal('/data/run1/file.root');
    expect(parsePfn(protocol(), 'root://xrd.example.org:1094/atlas/file').path).to.equal('/');
  });

  it('refuses another host, port or prefix', () => {
    expect(() => parsePfn(protocol(), 'root://other.org:1094//atlas/f')).to.throw(InvalidPath, /Invalid hostname/);
    expect(() => parsePfn(protocol(), 'root://xrd.example.org:1095//atlas/f')).to.throw(InvalidPath, /Invalid port/);
    expect(() => parsePfn(protocol(), 'root://xrd.example.org:1094/cms/f')).to.throw(InvalidPath, /Invalid prefix/);
  });

  it('cleans SRM PFNs and signed URLs so that their forms compare equal', () => {
    expect(cleanPfn('srm://se.example.org:8443/srm/managerv2?SFN=/pnfs/f')).to.equal('srm://se.example.org/pnfs/f');
    expect(cleanPfn('https://bucket.example.org/f?X-Amz-Signature=abc')).to.equal('https://bucket.example.org/f');
  });

  it('generates the PFNs a deterministic RSE expects (behaviour rule 9 paths)', () => {
    const expected = expectedPfns([protocol()], [{ scope: 'user.jdoe', name: 'file1' }], 'hash');
    expect([...expected]).to.deep.equal(['root://xrd.example.org:1094//atlas/user/jdoe/a2/cb/file1']);
  });

  it('finds the DID of a deterministic path, also for user scopes and names with slashes', () => {
    expect(didCandidatesOfPath('/user/jdoe/a2/cb/file1', 'hash')).to.deep.equal([
      { scope: 'user.jdoe', name: 'file1' },
    ]);
    expect(didCandidatesOfPath('/user/jdoe/a2/cb/other', 'hash')).to.deep.equal([]);
    expect(didCandidatesOfPath('/data17/run/f1', 'identity')).to.deep.equal([{ scope: 'data17', name: 'run/f1' }]);
    expect(didCandidatesOfPath('/user/jdoe/f1', 'identity')).to.deep.equal([
      { scope: 'user', name: 'jdoe/f1' },
      { scope: 'user.jdoe', name: 'f1' },
    ]);
  });
});

describe('PFNs: which RSE serves them (Rucio get_pfn_to_rse)', () => {
  const rses = [
    { id: 'a', rse: 'A_DISK', stagingArea: false, protocols: [protocol()] },
    { id: 'b', rse: 'B_DISK', stagingArea: false, protocols: [protocol({ hostname: 'b.example.org', prefix: '/b' })] },
    { id: 'c', rse: 'C_STAGING', stagingArea: true, protocols: [protocol({ hostname: 'c.example.org' })] },
  ];

  it('groups PFNs by RSE and reports those no RSE serves', () => {
    const mapped = pfnsToRses(
      [
        'root://xrd.example.org:1094//atlas/f1',
        'root://b.example.org:1094/b/f2',
        'root://c.example.org:1094//atlas/f3',
        'root://xrd.example.org:1094//atlas/f4',
      ],
      rses,
    );
    expect(mapped.scheme).to.equal('root');
    expect([...mapped.byRse]).to.deep.equal([
      ['a', ['root://xrd.example.org:1094//atlas/f1', 'root://xrd.example.org:1094//atlas/f4']],
      ['b', ['root://b.example.org:1094/b/f2']],
    ]);
    expect(mapped.unknown).to.deep.equal(['root://c.example.org:1094//atlas/f3']);
  });

  it('refuses PFNs of several schemes, and PFNs two RSEs could serve', () => {
    expect(() => pfnsToRses(['root://xrd.example.org:1094//atlas/f1', 'https://x/f2'], rses)).to.throw(
      InvalidType,
      /same protocol/,
    );
    const twins = [...rses, { id: 'd', rse: 'D_DISK', stagingArea: false, protocols: [protocol()] }];
    expect(() => pfnsToRses(['root://xrd.example.org:1094//atlas/f1'], twins)).to.throw(
      InvalidPath,
      /matches several RSEs: A_DISK, D_DISK/,
    );
  });
});
