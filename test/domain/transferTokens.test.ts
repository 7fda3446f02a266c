import { expect } from 'chai';
import { copyTokenGrants, ftsTokenGrant, tokenAudienceOf, tokenScopeOf } from '../../domain/request/transferTokens.ts';
import { aTopology, copyProtocol, transferRse } from '../support/topology.ts';

/** Which copies use tokens, and for what (Rucio's `_use_tokens`, `determine_audience_for_rse`, `determine_scope_for_rse`). */

const davsRse = (name: string, attributes: Record<string, string | boolean> = { oidc_support: true }) =>
  transferRse(name, {
    attributes,
    protocols: [
      copyProtocol('davs', `${name.toLowerCase()}.example.org`, 1, { prefix: '/vo/data' }),
      copyProtocol('davs', `${name.toLowerCase()}-2.example.org`, 2, { prefix: '/vo/data' }),
      copyProtocol('root', `${name.toLowerCase()}.example.org`, 3, { prefix: '/root' }),
    ],
  });
const at = (rse: string, scheme = 'davs') => ({ rseId: `${rse.toLowerCase()}-id`, pfn: `${scheme}://x/f1` });

describe('Transfer tokens: which copies use them, with what audience and scope', () => {
  it('names a storage by the host names of its davs protocols, sorted', () =>
    expect(tokenAudienceOf(davsRse('SRC'))).to.equal('src-2.example.org src.example.org'));

  it('grants each scope on each davs prefix, less the RSE’s oidc_base_path, then the extra scopes', () => {
    expect(tokenScopeOf(davsRse('SRC'), ['storage.read'], ['offline_access'])).to.equal(
      'offline_access storage.read:/vo/data',
    );
    expect(
      tokenScopeOf(davsRse('SRC', { oidc_support: true, oidc_base_path: '/vo' }), ['storage.modify', 'storage.read']),
    ).to.equal('storage.modify:/data storage.read:/data');
  });

  it('gives a copy between token RSEs over davs its grants: read on each source, modify and read on the destination', () => {
    const topology = aTopology([davsRse('SRC'), davsRse('DST')], []);
    expect(copyTokenGrants(topology, [at('SRC')], at('DST'))).to.deep.equal({
      sources: [{ audience: 'src-2.example.org src.example.org', scope: 'offline_access storage.read:/vo/data' }],
      destination: {
        audience: 'dst-2.example.org dst.example.org',
        scope: 'offline_access storage.modify:/vo/data storage.read:/vo/data',
      },
    });
  });

  it('uses certificates when an end lacks oidc_support', () => {
    const topology = aTopology([davsRse('SRC'), davsRse('DST', {})], []);
    expect(copyTokenGrants(topology, [at('SRC')], at('DST'))).to.equal(null);
  });

  it('uses certificates for a copy over another protocol than davs', () => {
    const topology = aTopology([davsRse('SRC'), davsRse('DST')], []);
    expect(copyTokenGrants(topology, [at('SRC', 'root')], at('DST', 'root'))).to.equal(null);
  });

  it('asks a token for an FTS server with its host name and the scope fts', () =>
    expect(ftsTokenGrant('https://fts3.example.org:8446')).to.deep.equal({
      audience: 'fts3.example.org',
      scope: 'fts',
    }));
});
