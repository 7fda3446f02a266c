import { expect } from 'chai';
import { OBSOLETE_TOMBSTONE } from '../../domain/replica/replica.ts';
import { planReplicas, tombstoneFromDelay, type RegistrationRse } from '../../domain/replica/replicaRegistration.ts';
import { noPriorities, type RseProtocol } from '../../domain/rse/protocol.ts';
import { InvalidPath, ResourceTemporaryUnavailable, UnsupportedOperation } from '../../domain/shared/errors.ts';
import { NOW } from '../support/deciderSpec.ts';

const writable = (priority: number, domain: 'wan' | 'lan' = 'wan'): RseProtocol['domains'] => {
  const domains = noPriorities();
  domains[domain].write = priority;
  domains[domain].read = priority;
  return domains;
};

const https: RseProtocol = {
  scheme: 'https',
  hostname: 'eos.example.org',
  port: 443,
  prefix: '/eos',
  impl: 'rucio.rse.protocols.webdav.Default',
  domains: writable(1),
  extended_attributes: null,
};

const rse = (overrides: Partial<RegistrationRse> = {}): RegistrationRse => ({
  rse: 'SITE_DISK',
  rseId: 'a'.repeat(32),
  volatile: false,
  deterministic: true,
  availabilityWrite: true,
  lfn2pfnAlgorithm: 'hash',
  protocols: [https, { ...https, hostname: 'lan.example.org', domains: writable(1, 'lan') }],
  tombstoneDelay: undefined,
  ...overrides,
});

const file = (name: string, extra: object = {}) => ({ scope: 'user.jdoe', name, bytes: 1, ...extra });
const options = { ignoreAvailability: false, now: NOW };

describe('Replica registration checks (behaviour rule 8)', () => {
  it('accepts on a deterministic RSE the PFNs its write protocols generate, WAN or LAN', () => {
    const planned = planReplicas(
      rse(),
      [
        file('file1', { pfn: 'https://eos.example.org:443/eos/user/jdoe/a2/cb/file1' }),
        file('f2', { state: 'COPYING' }),
      ],
      options,
    );
    expect(planned.get('user.jdoe:file1')).to.deep.equal({ path: null, state: 'AVAILABLE', tombstone: null });
    expect(planned.get('user.jdoe:f2')).to.deep.equal({ path: null, state: 'COPYING', tombstone: null });
    expect(
      planReplicas(rse(), [file('file1', { pfn: 'https://lan.example.org:443/eos/user/jdoe/a2/cb/file1' })], options)
        .size,
    ).to.equal(1);
  });

  it('refuses a PFN a deterministic RSE would not generate with InvalidPath', () => {
    expect(() =>
      planReplicas(rse(), [file('file1', { pfn: 'https://eos.example.org:443/eos/elsewhere/file1' })], options),
    ).to.throw(
      InvalidPath,
      /One of the PFNs provided \['https:\/\/eos.example.org:443\/eos\/elsewhere\/file1'\] for \['user.jdoe:file1'\] does not match/,
    );
  });

  it('stores the path of a non-deterministic replica, and needs a PFN there', () => {
    const planned = planReplicas(
      rse({ deterministic: false }),
      [file('f1', { pfn: 'https://eos.example.org:443/eos/raw/2026/f1' })],
      options,
    );
    expect(planned.get('user.jdoe:f1')!.path).to.equal('/raw/2026/f1');
    expect(() => planReplicas(rse({ deterministic: false }), [file('f1')], options)).to.throw(
      UnsupportedOperation,
      /PFN needed/,
    );
  });

  it('refuses volatile RSEs, and RSEs not writable unless availability is ignored', () => {
    expect(() => planReplicas(rse({ volatile: true }), [file('f1')], options)).to.throw(
      UnsupportedOperation,
      /volatile/,
    );
    expect(() => planReplicas(rse({ availabilityWrite: false }), [file('f1')], options)).to.throw(
      ResourceTemporaryUnavailable,
      /temporary unavailable for writing/,
    );
    expect(
      planReplicas(rse({ availabilityWrite: false }), [file('f1')], { ...options, ignoreAvailability: true }).size,
    ).to.equal(1);
  });

  it('derives the tombstone from the RSE tombstone_delay', () => {
    expect(tombstoneFromDelay('3600', NOW)).to.equal(new Date(NOW.getTime() + 3_600_000).toISOString());
    expect(tombstoneFromDelay('-1', NOW)).to.equal(OBSOLETE_TOMBSTONE);
    expect(tombstoneFromDelay(undefined, NOW)).to.equal(null);
    expect(tombstoneFromDelay('0', NOW)).to.equal(null);
    expect(planReplicas(rse({ tombstoneDelay: '-5' }), [file('f1')], options).get('user.jdoe:f1')!.tombstone).to.equal(
      OBSOLETE_TOMBSTONE,
    );
  });
});
