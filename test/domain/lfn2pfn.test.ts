import { expect } from 'chai';
import { deterministicPath, lfnsToPfns, localRootOf, pfnFromProtocol, replicaPath } from '../../domain/rse/lfn2pfn.ts';
import {
  noPriorities,
  withPriorities,
  type PrioritySetting,
  type Priority,
  type ProtocolDomain,
  type ProtocolOperation,
  type RseProtocol,
} from '../../domain/rse/protocol.ts';
import { protocolFromRequest } from '../../domain/rse/protocolInput.ts';
import { selectProtocol } from '../../domain/rse/protocolSelection.ts';
import {
  InvalidObject,
  RSEOperationNotSupported,
  RSEProtocolDomainNotSupported,
  RSEProtocolNotSupported,
} from '../../domain/shared/errors.ts';
import { keysOf } from '../../domain/shared/narrowing.ts';

type Domains = Partial<Record<ProtocolDomain, Partial<Record<ProtocolOperation, Priority>>>>;

/** A request's `domains` as the route's schema hands them on: one setting each, in order. */
const settingsOf = (domains: Domains): PrioritySetting[] =>
  keysOf(domains).flatMap((domain) => {
    const operations = domains[domain] ?? {};
    return keysOf(operations).map((operation) => ({ domain, operation, priority: operations[operation] ?? null }));
  });

const protocol = (
  scheme: string,
  hostname: string,
  domains: Domains,
  overrides: Partial<RseProtocol> = {},
): RseProtocol => ({
  scheme,
  hostname,
  port: 443,
  prefix: '/data/',
  impl: 'rucio.rse.protocols.gfal.Default',
  domains: withPriorities(noPriorities(), settingsOf(domains)),
  extended_attributes: null,
  ...overrides,
});

describe('lfn → pfn', () => {
  it('hashes the path as scope/md5[0:2]/md5[2:4]/name, splitting user and group scopes on dots', () => {
    // md5('user.jdoe:file1') = a2cb…, md5('data18:AOD.01234._000001.pool.root.1') = 6167…
    expect(deterministicPath('user.jdoe', 'file1')).to.equal('user/jdoe/a2/cb/file1');
    expect(deterministicPath('data18', 'AOD.01234._000001.pool.root.1', 'hash')).to.equal(
      'data18/61/67/AOD.01234._000001.pool.root.1',
    );
    expect(deterministicPath('group.phys.higgs', 'x')).to.equal('group/phys/higgs/ee/2d/x');
    expect(deterministicPath('user.jdoe', 'file1', 'identity')).to.equal('user/jdoe/file1');
    expect(deterministicPath('mc16', 'a/b', 'identity')).to.equal('mc16/a/b');
    expect(() => deterministicPath('s', 'n', 'fancy')).to.throw(RSEOperationNotSupported, /'fancy'/);
  });

  it('gives no path to a scope or name that would climb out of the prefix (issue 33), whatever stored it', () => {
    expect(() => deterministicPath('s', 'x/../../../../../outside/t1')).to.throw(
      InvalidObject,
      /Problem validating name: 'x\/\.\.\/.*' holds the path segment '\.\.': it has no path below an RSE's prefix/,
    );
    expect(() => deterministicPath('..', 'dotdot.txt')).to.throw(InvalidObject, /Problem validating scope: '\.\.'/);
    expect(() => deterministicPath('user..x', 'f', 'identity')).to.throw(InvalidObject, /empty path segment/);
    expect(deterministicPath('s', '/vo/d/f', 'identity')).to.equal('s//vo/d/f');
    const hash = { deterministic: true, lfn2pfnAlgorithm: 'hash' };
    const stored = { deterministic: false, lfn2pfnAlgorithm: 'hash' };
    expect(replicaPath(hash, 's', 'a/../../b', null)).to.equal(undefined);
    expect(replicaPath(hash, 'user.jdoe', 'file1', '/ignored')).to.equal('user/jdoe/a2/cb/file1');
    expect(replicaPath(stored, 's', 'f', '/../outside/f')).to.equal(undefined);
    expect(replicaPath(stored, 's', 'f', '/dir/f')).to.equal('/dir/f');
    expect(replicaPath(stored, 's', 'f', null)).to.equal(undefined);
  });

  it('builds PFNs as the protocol implementations do', () => {
    const https = protocol(
      'https',
      'eos.cern.ch',
      {},
      { impl: 'rucio.rse.protocols.webdav.Default', prefix: 'eos/data' },
    );
    expect(pfnFromProtocol(https, 'user/jdoe/a2/cb/file1')).to.equal(
      'https://eos.cern.ch:443/eos/data/user/jdoe/a2/cb/file1',
    );
    const posix = protocol(
      'file',
      'localhost',
      {},
      { impl: 'rucio.rse.protocols.posix.Default', port: 0, prefix: '/tmp/rse' },
    );
    expect(pfnFromProtocol(posix, 'a/b')).to.equal('file://localhost/tmp/rse/a/b');
    const srm = protocol(
      'srm',
      'srm://se.example.org',
      {},
      {
        impl: 'rucio.rse.protocols.srm.Default',
        port: 8446,
        extended_attributes: { web_service_path: '/srm/managerv2?SFN=' },
      },
    );
    expect(pfnFromProtocol(srm, '/a/b')).to.equal('srm://se.example.org:8446/srm/managerv2?SFN=/data/a/b');
    expect(pfnFromProtocol({ ...srm, port: 0 }, 'a/b')).to.equal('srm://se.example.org/srm/managerv2?SFN=/data/a/b');
    expect(pfnFromProtocol({ ...https, prefix: null }, 'a')).to.equal('https://eos.cern.ch:443/a');
  });

  it('finds the local directory a posix PFN lies in: the prefix of the protocol that built it, the longest when several fit', () => {
    const posix = (hostname: string, prefix: string | null) =>
      protocol('file', hostname, {}, { impl: 'rucio.rse.protocols.posix.Default', port: 0, prefix });
    const protocols = [posix('localhost', '/data'), posix('localhost', '/data/rse'), posix('other', null)];
    expect(localRootOf(protocols, 'file://localhost/data/rse/a/b')).to.equal('/data/rse');
    expect(localRootOf(protocols, 'file://localhost/data/x')).to.equal('/data');
    expect(localRootOf(protocols, 'file://other/data/x')).to.equal(undefined);
    expect(localRootOf(protocols, 'root://localhost/data/x')).to.equal(undefined);
  });

  it('chooses the protocol with the lowest priority for the operation and domain, ties in listing order', () => {
    const protocols = [
      protocol('root', 'xrd.cern.ch', { wan: { read: 1, write: 2 }, lan: { read: 1 } }),
      protocol('https', 'eos.cern.ch', { wan: { read: 2, write: 1 } }),
      protocol('davs', 'dav.cern.ch', { wan: { read: 1 } }),
    ];
    expect(selectProtocol(protocols, { operation: 'write', domain: 'wan' }).scheme).to.equal('https');
    expect(selectProtocol(protocols, { operation: 'read', domain: 'wan' }).scheme).to.equal('davs');
    expect(selectProtocol(protocols, { operation: 'read', domain: 'wan', scheme: 'https,root' }).scheme).to.equal(
      'root',
    );
    expect(selectProtocol(protocols, { operation: 'read', domain: 'lan' }).scheme).to.equal('root');
    expect(() => selectProtocol(protocols, { operation: 'delete', domain: 'wan' })).to.throw(RSEProtocolNotSupported);
    expect(() => selectProtocol(protocols, { operation: 'read', domain: 'wan', scheme: 'srm' })).to.throw(
      RSEProtocolNotSupported,
    );
    expect(() => selectProtocol(protocols, { operation: 'copy', domain: 'wan' })).to.throw(
      RSEOperationNotSupported,
      /Operation copy is not supported/,
    );
    expect(() => selectProtocol(protocols, { operation: 'read', domain: 'WAN' })).to.throw(
      RSEProtocolDomainNotSupported,
      /Domain WAN not supported/,
    );
  });

  it('maps lfns of deterministic RSEs and only stored paths of non-deterministic ones', () => {
    const protocols = [
      protocol('https', 'eos.cern.ch', { wan: { write: 1, read: 1 } }, { impl: 'rucio.rse.protocols.webdav.Default' }),
    ];
    const lfns = [
      { scope: 'user.jdoe', name: 'file1' },
      { scope: 'user.jdoe', name: 'file2' },
    ];
    expect(
      lfnsToPfns({ deterministic: true, lfn2pfnAlgorithm: 'identity', protocols }, lfns, {
        operation: 'write',
        domain: 'wan',
      }),
    ).to.deep.equal({
      'user.jdoe:file1': 'https://eos.cern.ch:443/data/user/jdoe/file1',
      'user.jdoe:file2': 'https://eos.cern.ch:443/data/user/jdoe/file2',
    });
    const stored = new Map([['user.jdoe:file2', '/some/where/file2']]);
    expect(
      lfnsToPfns(
        { deterministic: false, lfn2pfnAlgorithm: 'hash', protocols },
        lfns,
        { operation: 'read', domain: 'wan' },
        stored,
      ),
    ).to.deep.equal({
      'user.jdoe:file2': 'https://eos.cern.ch:443/data/some/where/file2',
    });
  });
});

describe('protocol requests', () => {
  it('fills Rucio defaults and applies the priorities in order, third-party copies on wan', () => {
    const added = protocolFromRequest('https', {
      impl: 'rucio.rse.protocols.webdav.Default',
      priorities: settingsOf({ wan: { read: 0 }, lan: { third_party_copy_read: 2 } }),
    });
    expect(added).to.deep.include({ scheme: 'https', hostname: 'localhost', port: 0, prefix: null });
    expect(added.domains.wan).to.deep.equal({
      read: 0,
      write: null,
      delete: null,
      third_party_copy_read: 2,
      third_party_copy_write: null,
    });
  });

  it('needs impl for a whole protocol, and web_service_path for srm', () => {
    expect(() => protocolFromRequest('https', { priorities: [] })).to.throw(InvalidObject, /^Missing values!$/);
    expect(() => protocolFromRequest('https', { impl: '', priorities: [] })).to.throw(
      InvalidObject,
      /^Missing values!$/,
    );
    expect(() => protocolFromRequest('srm', { impl: 'x', priorities: [] })).to.throw(
      InvalidObject,
      /web_service_path must be specified/,
    );
    expect(
      protocolFromRequest('srm', { impl: 'x', extended_attributes: { web_service_path: '/srm' }, priorities: [] }),
    ).to.deep.include({ extended_attributes: { web_service_path: '/srm' } });
  });
});
