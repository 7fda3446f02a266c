import { expect } from 'chai';
import { SchemaVersionTooNewError, upcaster, upcasterRegistry } from '../../domain/shared/upcasting.ts';
import type { Event } from '../../domain/shared/event.ts';
import { eventUpcasters } from '../../domain/areas.ts';

type Renamed = Event<'Renamed', { fullName: string; at: string }>;

describe('Upcasters', () => {
  const registry = upcasterRegistry([
    // Version 2 named the field `name`; version 3 calls it `fullName`.
    upcaster<Renamed>('Renamed', 2, (data) => ({ fullName: data.name as string, at: data.at as string })),
    // Version 1 had no time.
    { type: 'Renamed', fromVersion: 1, upcast: (data) => ({ ...data, at: '1970-01-01T00:00:00.000Z' }) },
  ]);

  it('brings data of an old version to the current shape through every step after it', () => {
    expect(registry.upcast({ type: 'Renamed', data: { name: 'a' }, schemaVersion: 1 })).to.deep.equal({
      fullName: 'a',
      at: '1970-01-01T00:00:00.000Z',
    });
    expect(registry.upcast({ type: 'Renamed', data: { name: 'b', at: 'then' }, schemaVersion: 2 })).to.deep.equal({
      fullName: 'b',
      at: 'then',
    });
  });

  it('leaves data of the current version, and of types without upcasters, as they are', () => {
    const current = { fullName: 'c', at: 'now' };
    expect(registry.upcast({ type: 'Renamed', data: current, schemaVersion: 3 })).to.equal(current);
    const other = { x: 1 };
    expect(registry.upcast({ type: 'Other', data: other, schemaVersion: 1 })).to.equal(other);
    expect(registry.upcast({ type: 'Other', data: other, schemaVersion: undefined })).to.equal(other);
  });

  it('names the version new events of each type are written with', () => {
    expect(registry.currentVersion('Renamed')).to.equal(3);
    expect(registry.currentVersion('Other')).to.equal(1);
  });

  it('refuses an event written with a version newer than the code knows', () => {
    expect(() => registry.upcast({ type: 'Other', data: {}, schemaVersion: 2 })).to.throw(SchemaVersionTooNewError);
  });

  it('refuses a chain of upcasters with a gap', () => {
    expect(() => upcasterRegistry([{ type: 'Gap', fromVersion: 2, upcast: (data) => data }])).to.throw(/without gaps/);
  });

  describe('ReplicaLocksChanged (changed twice with events stored)', () => {
    const ref = {
      scope: 'user.jdoe',
      name: 'file1',
      rse: 'DISK',
      rseId: 'a'.repeat(32),
      locks: { rule1: 'OK' },
      changedAt: '2026-11-22T10:00:00.000Z',
    };

    it('names no transfer request for events written before requests were recorded', () => {
      expect(eventUpcasters.upcast({ type: 'ReplicaLocksChanged', data: ref, schemaVersion: 1 })).to.deep.equal({
        ...ref,
        requestId: null,
        requestStream: null,
      });
    });

    it('keeps the request of version 1 events written after the change, in its own stream as requests were then', () => {
      expect(
        eventUpcasters.upcast({ type: 'ReplicaLocksChanged', data: { ...ref, requestId: 'r1' }, schemaVersion: 1 }),
      ).to.deep.equal({ ...ref, requestId: 'r1', requestStream: 'request-r1' });
    });

    it('names the stream of the request of version 2 events (before batches: its own)', () => {
      expect(
        eventUpcasters.upcast({ type: 'ReplicaLocksChanged', data: { ...ref, requestId: 'r1' }, schemaVersion: 2 }),
      ).to.deep.equal({ ...ref, requestId: 'r1', requestStream: 'request-r1' });
    });

    it('is written as version 3 from now on', () => {
      expect(eventUpcasters.currentVersion('ReplicaLocksChanged')).to.equal(3);
    });
  });

  it('reads a DidCreated of version 1 as a DID created without replicas (they followed apart)', () => {
    const data = { scope: 'user.jdoe', name: 'f1', didType: 'FILE', bytes: 1 };
    expect(eventUpcasters.upcast({ type: 'DidCreated', data, schemaVersion: 1 })).to.deep.equal({
      ...data,
      replicas: [],
    });
    expect(eventUpcasters.currentVersion('DidCreated')).to.equal(2);
  });

  describe('replica events folded to one per replica and step', () => {
    const ref = { scope: 'user.jdoe', name: 'file1', rse: 'DISK', rseId: 'a'.repeat(32) };

    it('reads a ReplicaAdded of version 1 as a replica added without a lock (its lock followed apart)', () => {
      const added = { ...ref, bytes: 1, md5: null, adler32: null, path: null, state: 'COPYING', tombstone: null };
      expect(
        eventUpcasters.upcast({ type: 'ReplicaAdded', data: { ...added, addedAt: 'then' }, schemaVersion: 1 }),
      ).to.deep.equal({ ...added, lock: null, addedAt: 'then' });
      expect(eventUpcasters.currentVersion('ReplicaAdded')).to.equal(2);
    });

    it('reads a ReplicaLocked of version 1 as a lock that left the state alone, its request in its own stream', () => {
      const locked = { ...ref, ruleId: 'rule1', lockState: 'REPLICATING', requestId: 'r1', lockedAt: 'then' };
      expect(eventUpcasters.upcast({ type: 'ReplicaLocked', data: locked, schemaVersion: 1 })).to.deep.equal({
        ...locked,
        requestStream: 'request-r1',
        previousState: null,
      });
      expect(eventUpcasters.currentVersion('ReplicaLocked')).to.equal(3);
    });

    it('reads a ReplicaStateChanged of version 1 as a change that moved no lock and queued no transfer', () => {
      const changed = { ...ref, previousState: 'COPYING', state: 'AVAILABLE', tombstone: null, recovered: false };
      expect(eventUpcasters.upcast({ type: 'ReplicaStateChanged', data: changed, schemaVersion: 1 })).to.deep.equal({
        ...changed,
        locks: {},
        requestId: null,
        requestStream: null,
      });
      expect(eventUpcasters.currentVersion('ReplicaStateChanged')).to.equal(2);
    });
  });
});
