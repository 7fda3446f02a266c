import { expect } from 'chai';
import {
  listedFile,
  listingProtocols,
  pfnsToSign,
  withQuery,
  type ListingRse,
} from '../../domain/replica/replicaListing.ts';
import { storageHostOf } from '../../domain/replica/replicaSorting.ts';
import { noPriorities, type RseProtocol } from '../../domain/rse/protocol.ts';

const protocol = (scheme: string, hostname: string, wan: number): RseProtocol => {
  const domains = noPriorities();
  domains.wan.read = wan;
  return { scheme, hostname, port: 443, prefix: '/data', impl: 'x', domains, extended_attributes: null };
};

const rse: ListingRse = {
  id: 'a1',
  rse: 'CLOUD',
  rseType: 'DISK',
  volatile: false,
  deterministic: true,
  lfn2pfnAlgorithm: 'identity',
  protocols: [protocol('https', 'bucket.example.org', 1), protocol('root', 'xrd.example.org', 2)],
  latitude: null,
  longitude: null,
  signUrl: 's3',
};
const file = { scope: 'mc', name: 'a b.log', bytes: 5, md5: null, adler32: null };
const inArchive = {
  rse,
  state: 'AVAILABLE',
  path: null,
  protocols: listingProtocols(rse, 'wan', ['https'], ['root']),
  archive: { scope: 'mc', name: 'logs.zip' },
};

describe('Replica PFNs: inside archives, signed, located', () => {
  it('adds a query as Rucio’s add_url_query: pairs read again, encoded with quote_plus', () => {
    expect(withQuery('root://h:1094//data/a.zip', 'xrdcl.unzip', 'a b/c.log')).to.equal(
      'root://h:1094//data/a.zip?xrdcl.unzip=a+b%2Fc.log',
    );
    expect(withQuery('srm://h:8443/srm/managerv2?SFN=/d/a.zip&empty=&x=1#top', 'x', '2')).to.equal(
      'srm://h:8443/srm/managerv2?SFN=%2Fd%2Fa.zip&x=2#top',
    );
  });

  it('names the https PFNs of a sign_url RSE for signing, and signs them before asking inside the archive', () => {
    expect(pfnsToSign(file, [inArchive])).to.deep.equal([
      { rse, pfn: 'https://bucket.example.org:443/data/mc/logs.zip' },
    ]);
    const line = listedFile(file, [inArchive], (_rse, pfn) => `${pfn}?X-Amz-Signature=abc`);
    expect(Object.keys(line.pfns)).to.deep.equal([
      'root://xrd.example.org:443/data/mc/logs.zip?xrdcl.unzip=a+b.log',
      'https://bucket.example.org:443/data/mc/logs.zip?X-Amz-Signature=abc&xrdcl.unzip=a+b.log',
    ]);
  });

  it('leaves out a PFN that cannot be signed', () => {
    expect(Object.keys(listedFile(file, [inArchive], () => null).pfns)).to.deep.equal([
      'root://xrd.example.org:443/data/mc/logs.zip?xrdcl.unzip=a+b.log',
    ]);
  });

  it('finds the storage host of a PFN, behind a root proxy too', () => {
    expect(storageHostOf('https://Web.Example.org:443/data/f')).to.equal('web.example.org');
    expect(storageHostOf('root://10.0.0.1//root://192.168.1.1:1094//dpm/f')).to.equal('192.168.1.1');
    expect(storageHostOf('davs://user@[2001:db8::1]:443/f')).to.equal('2001:db8::1');
    expect(storageHostOf('/no/scheme')).to.equal(undefined);
  });
});
