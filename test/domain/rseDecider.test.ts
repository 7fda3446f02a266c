import { DEFAULT_RSE_PROPERTIES, type RseEvent, type RseProperties } from '../../domain/rse/rse.ts';
import { rseDecider } from '../../domain/rse/rseDecider.ts';
import { noPriorities, type RseProtocol } from '../../domain/rse/protocol.ts';
import { protocolChangesFromRequest } from '../../domain/rse/protocolInput.ts';
import {
  Duplicate,
  RSEAttributeNotFound,
  RSENotFound,
  RSEOperationNotSupported,
  RSEProtocolNotSupported,
} from '../../domain/shared/errors.ts';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

const given = deciderSpec(rseDecider);
const ref = { rseId: 'a'.repeat(32), rse: 'CERN_DISK' };
const properties: RseProperties = { ...DEFAULT_RSE_PROPERTIES, city: 'Geneva', country_name: 'Switzerland' };
const created: RseEvent[] = [
  { type: 'RseCreated', data: { ...ref, properties, createdAt: AT } },
  { type: 'RseAttributeSet', data: { ...ref, key: 'CERN_DISK', value: true } },
  { type: 'RseAttributeSet', data: { ...ref, key: 'city', value: 'Geneva' } },
  { type: 'RseAttributeSet', data: { ...ref, key: 'country_name', value: 'Switzerland' } },
  { type: 'RseUsageSet', data: { ...ref, source: 'rucio', used: 0, free: null, files: 0, updatedAt: AT } },
];
const deleted: RseEvent[] = [...created, { type: 'RseDeleted', data: { ...ref, deletedAt: AT } }];
const command = <T extends string, D extends object>(type: T, data: D) => ({
  type,
  data: { rse: 'CERN_DISK', ...data },
  metadata: metadata(),
});

const protocol = (overrides: Partial<RseProtocol> = {}): RseProtocol => ({
  scheme: 'https',
  hostname: 'eos.cern.ch',
  port: 443,
  prefix: '/eos/data',
  impl: 'rucio.rse.protocols.gfal.Default',
  domains: noPriorities(),
  extended_attributes: null,
  ...overrides,
});

describe('RSE decider', () => {
  describe('creation and deletion', () => {
    it('creates an RSE with its name attribute, its settings as attributes and a zero rucio counter', () =>
      given([])
        .when({ type: 'CreateRse', data: { ...ref, properties }, metadata: metadata() })
        .then(created));

    describe('refuses a name in use', () => {
      const create = { type: 'CreateRse', data: { ...ref, properties }, metadata: metadata() } as const;
      it('by an RSE', () =>
        given(created)
          .when(create)
          .thenThrows(Duplicate, /RSE 'CERN_DISK' already exists!/));
      it('by a deleted RSE', () => given(deleted).when(create).thenThrows(Duplicate));
    });

    it('deletes an empty RSE and drops its name attribute', () =>
      given(created)
        .when(command('DeleteRse', { catalogueBytes: 0 }))
        .then([
          { type: 'RseDeleted', data: { ...ref, deletedAt: AT } },
          { type: 'RseAttributeRemoved', data: { ...ref, key: 'CERN_DISK' } },
        ]));

    describe('refuses to delete an RSE that is not empty or is gone', () => {
      it('one whose rucio counter holds bytes', () =>
        given([
          ...created,
          { type: 'RseUsageSet', data: { ...ref, source: 'rucio', used: 10, free: null, files: 1, updatedAt: AT } },
        ])
          .when(command('DeleteRse', { catalogueBytes: 0 }))
          .thenThrows(RSEOperationNotSupported, /RSE 'CERN_DISK' is not empty/));
      it('one holding replicas', () =>
        given(created)
          .when(command('DeleteRse', { catalogueBytes: 5 }))
          .thenThrows(RSEOperationNotSupported, /is not empty/));
      it('a deleted one', () =>
        given(deleted)
          .when(command('DeleteRse', { catalogueBytes: 0 }))
          .thenThrows(RSENotFound, /RSE 'CERN_DISK' cannot be found in vo 'def'/));
      it('a missing one', () =>
        given([])
          .when(command('DeleteRse', { catalogueBytes: 0 }))
          .thenThrows(RSENotFound));
    });
  });

  describe('updates', () => {
    it('records only what changes and keeps the setting attributes in step', () =>
      given(created)
        .when(
          command('UpdateRse', {
            changes: { city: 'Meyrin', country_name: null, volatile: false, availability_write: false },
          }),
        )
        .then([
          {
            type: 'RseUpdated',
            data: { ...ref, changes: { city: 'Meyrin', country_name: null, availability_write: false }, updatedAt: AT },
          },
          { type: 'RseAttributeSet', data: { ...ref, key: 'city', value: 'Meyrin' } },
          { type: 'RseAttributeRemoved', data: { ...ref, key: 'country_name' } },
        ]));

    it('does nothing when every value is already the asked one', () =>
      given(created)
        .when(command('UpdateRse', { changes: { city: 'Geneva', deterministic: true } }))
        .thenNothingHappened());

    it('refuses to change a deleted RSE', () =>
      given(deleted)
        .when(command('UpdateRse', { changes: { city: 'x' } }))
        .thenThrows(RSENotFound));
  });

  describe('attributes', () => {
    describe('when attributes are set and removed', () => {
      it('sets one', () =>
        given(created)
          .when(command('SetRseAttribute', { key: 'tier', value: '1' }))
          .then([{ type: 'RseAttributeSet', data: { ...ref, key: 'tier', value: '1' } }]));
      it('sets nothing when the value is the same', () =>
        given(created)
          .when(command('SetRseAttribute', { key: 'city', value: 'Geneva' }))
          .thenNothingHappened());
      it('removes one', () =>
        given(created)
          .when(command('RemoveRseAttribute', { key: 'city' }))
          .then([{ type: 'RseAttributeRemoved', data: { ...ref, key: 'city' } }]));
      it('refuses to remove an attribute the RSE does not have', () =>
        given(created)
          .when(command('RemoveRseAttribute', { key: 'tier' }))
          .thenThrows(RSEAttributeNotFound, /RSE attribute 'tier' cannot be found/));
    });
  });

  describe('protocols', () => {
    const added: RseEvent = { type: 'RseProtocolAdded', data: { ...ref, protocol: protocol() } };

    describe('when a protocol is added', () => {
      it('adds it', () =>
        given(created)
          .when(command('AddRseProtocol', { protocol: protocol() }))
          .then([added]));
      it('refuses the same scheme, hostname and port twice', () =>
        given([...created, added])
          .when(command('AddRseProtocol', { protocol: protocol({ prefix: '/other' }) }))
          .thenThrows(
            Duplicate,
            /Protocol 'https' on port 443 already registered for {2}'CERN_DISK' with hostname 'eos.cern.ch'./,
          ));
      it('adds the same scheme on another port', () =>
        given([...created, added])
          .when(command('AddRseProtocol', { protocol: protocol({ port: 8443 }) }))
          .then([{ type: 'RseProtocolAdded', data: { ...ref, protocol: protocol({ port: 8443 }) } }]));
    });

    describe('updates every protocol of a scheme, narrowed by hostname and port when given', () => {
      const second: RseEvent = {
        type: 'RseProtocolAdded',
        data: { ...ref, protocol: protocol({ hostname: 'other.cern.ch' }) },
      };
      const changes = protocolChangesFromRequest(
        { prefix: '/new', priorities: [{ domain: 'wan', operation: 'read', priority: 1 }] },
        'root',
      );
      const updated = (hostname: string): RseEvent => {
        const base = protocol({ hostname, prefix: '/new' });
        return {
          type: 'RseProtocolUpdated',
          data: { ...ref, protocol: { ...base, domains: { ...base.domains, wan: { ...base.domains.wan, read: 1 } } } },
        };
      };
      it('every one of the scheme', () =>
        given([...created, added, second])
          .when(command('UpdateRseProtocols', { scheme: 'https', changes }))
          .then([updated('eos.cern.ch'), updated('other.cern.ch')]));
      it('the one of a hostname and port', () =>
        given([...created, added, second])
          .when(command('UpdateRseProtocols', { scheme: 'https', hostname: 'other.cern.ch', port: 443, changes }))
          .then([updated('other.cern.ch')]));
      it('refuses when none matches', () =>
        given([...created, added])
          .when(command('UpdateRseProtocols', { scheme: 'https', hostname: 'eos.cern.ch', port: 80, changes }))
          .thenThrows(
            RSEProtocolNotSupported,
            /RSE 'CERN_DISK' does not support protocol 'https' for hostname 'eos.cern.ch' on port '80'/,
          ));
    });

    describe('when protocols are removed', () => {
      it('removes the matching ones', () =>
        given([...created, added])
          .when(command('RemoveRseProtocols', { scheme: 'https', hostname: 'eos.cern.ch' }))
          .then([
            { type: 'RseProtocolRemoved', data: { ...ref, scheme: 'https', hostname: 'eos.cern.ch', port: 443 } },
          ]));
      it('refuses when none matches', () =>
        given([...created, added])
          .when(command('RemoveRseProtocols', { scheme: 'root' }))
          .thenThrows(RSEProtocolNotSupported, /does not support protocol 'root'$/));
    });
  });

  describe('usage, limits, QoS policies and distances', () => {
    it('replaces the usage of a source whole', () =>
      given(created)
        .when(command('SetRseUsage', { source: 'storage', used: 5, free: null, files: null }))
        .then([
          { type: 'RseUsageSet', data: { ...ref, source: 'storage', used: 5, free: null, files: null, updatedAt: AT } },
        ]));

    describe('when limits are set and removed', () => {
      const set: RseEvent = { type: 'RseLimitSet', data: { ...ref, name: 'MinFreeSpace', value: 100 } };
      it('sets one', () =>
        given(created)
          .when(command('SetRseLimit', { name: 'MinFreeSpace', value: 100 }))
          .then([set]));
      it('sets nothing when the value is the same', () =>
        given([...created, set])
          .when(command('SetRseLimit', { name: 'MinFreeSpace', value: 100 }))
          .thenNothingHappened());
      it('removes one', () =>
        given([...created, set])
          .when(command('RemoveRseLimit', { name: 'MinFreeSpace' }))
          .then([{ type: 'RseLimitRemoved', data: { ...ref, name: 'MinFreeSpace' } }]));
      it('removes nothing, silently, when the limit is absent', () =>
        given(created)
          .when(command('RemoveRseLimit', { name: 'MinFreeSpace' }))
          .thenNothingHappened());
    });

    describe('when QoS policies are added and removed', () => {
      const added: RseEvent = { type: 'RseQosPolicyAdded', data: { ...ref, policy: 'SSD' } };
      it('adds one', () =>
        given(created)
          .when(command('AddRseQosPolicy', { policy: 'SSD' }))
          .then([added]));
      it('adds one only once', () =>
        given([...created, added])
          .when(command('AddRseQosPolicy', { policy: 'SSD' }))
          .thenThrows(Duplicate, /QoS policy SSD already exists!/));
      it('removes one silently when absent', () =>
        given(created)
          .when(command('RemoveRseQosPolicy', { policy: 'SSD' }))
          .thenNothingHappened());
    });

    describe('when distances are added, updated and removed', () => {
      const destination = { destRseId: 'b'.repeat(32), destRse: 'BNL_DISK' };
      const set: RseEvent = { type: 'RseDistanceSet', data: { ...ref, ...destination, distance: 3, at: AT } };
      it('adds one', () =>
        given(created)
          .when(command('AddRseDistance', { ...destination, distance: 3 }))
          .then([set]));
      it('adds one only once', () =>
        given([...created, set])
          .when(command('AddRseDistance', { ...destination, distance: 4 }))
          .thenThrows(Duplicate, /Distance from CERN_DISK to BNL_DISK already exists!/));
      it('updates nothing that does not exist', () =>
        given(created)
          .when(command('UpdateRseDistance', { ...destination, distance: 4 }))
          .thenNothingHappened());
      it('updates one', () =>
        given([...created, set])
          .when(command('UpdateRseDistance', { ...destination, distance: 4 }))
          .then([{ type: 'RseDistanceSet', data: { ...ref, ...destination, distance: 4, at: AT } }]));
      it('removes one', () =>
        given([...created, set])
          .when(command('RemoveRseDistance', destination))
          .then([{ type: 'RseDistanceRemoved', data: { ...ref, ...destination } }]));
    });
  });
});
