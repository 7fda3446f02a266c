import { expect } from 'chai';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { AccountLimitEvent } from '../../domain/accountLimit/accountLimit.ts';
import { noPriorities } from '../../domain/rse/protocol.ts';
import { DEFAULT_RSE_PROPERTIES, type RseEvent } from '../../domain/rse/rse.ts';
import type { Event } from '../../domain/shared/event.ts';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import {
  accountLimitsCollection,
  accountLimitsProjection,
  type AccountLimitDocument,
} from '../../projections/account/accountLimitsProjection.ts';
import type { AnyProjection } from '../../projections/projection.ts';
import { ProjectionRunner } from '../../projections/runtime/projectionRunner.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { loadRseFacts } from '../../projections/rse/rseFacts.ts';
import {
  rseDistancesCollection,
  rsesCollection,
  rsesProjection,
  rseUsageHistoryCollection,
  type RseDistanceDocument,
  type RseDocument,
  type RseUsageHistoryDocument,
} from '../../projections/rse/rsesProjection.ts';
import { AT } from '../support/deciderSpec.ts';
import { makeTempDir } from '../support/tempDir.ts';

/** given(events on streams).then(read models): the projections run over a real event store. */
const given = async (projections: AnyProjection[], streams: Record<string, Event[]>) => {
  const dir = makeTempDir();
  const eventStore = new SqliteEventStore(join(dir.path, 'events.sqlite'), { pollIntervalMs: 10 });
  const readStore = new SqliteReadStore(join(dir.path, 'read.sqlite'));
  const readModels = ReadModels.in(readStore, projections);
  const runner = new ProjectionRunner({ eventStore, readStore, readModels, projections, logger: silentLogger() });
  await runner.start();
  let position = 0n;
  for (const [streamName, events] of Object.entries(streams)) {
    const appended = await eventStore.appendToStream(
      streamName,
      events.map((event) => ({
        id: randomUUID(),
        ...event,
        metadata: { account: 'root', requestId: 'r', at: AT, schemaVersion: 1 },
      })),
    );
    if (appended.position > position) position = appended.position;
  }
  expect(await runner.waitFor(position, 5000)).to.equal(true);
  return {
    readModels,
    async close() {
      await runner.stop();
      await eventStore.close();
      await readStore.close();
      dir.dispose();
    },
  };
};

const disk = { rseId: 'a'.repeat(32), rse: 'DISK' };
const tape = { rseId: 'b'.repeat(32), rse: 'TAPE' };
const created = (ref: typeof disk, city: string | null = null): RseEvent[] => [
  { type: 'RseCreated', data: { ...ref, properties: { ...DEFAULT_RSE_PROPERTIES, city }, createdAt: AT } },
  { type: 'RseAttributeSet', data: { ...ref, key: ref.rse, value: true } },
];
const protocol = {
  scheme: 'https',
  hostname: 'h',
  port: 443,
  prefix: null,
  impl: 'x',
  domains: noPriorities(),
  extended_attributes: null,
};

describe('RSE projections', () => {
  it('keep one document per RSE with its record, attributes, protocols, limits, usage and policies', async () => {
    const events: RseEvent[] = [
      ...created(disk, 'Geneva'),
      {
        type: 'RseUpdated',
        data: {
          ...disk,
          changes: { city: 'Meyrin', availability_write: false },
          updatedAt: '2026-11-23T00:00:00.000Z',
        },
      },
      { type: 'RseAttributeSet', data: { ...disk, key: 'tier', value: '1' } },
      { type: 'RseProtocolAdded', data: { ...disk, protocol } },
      { type: 'RseProtocolUpdated', data: { ...disk, protocol: { ...protocol, prefix: '/p' } } },
      { type: 'RseLimitSet', data: { ...disk, name: 'MinFreeSpace', value: 5 } },
      { type: 'RseQosPolicyAdded', data: { ...disk, policy: 'SSD' } },
      { type: 'RseUsageSet', data: { ...disk, source: 'storage', used: 1, free: 2, files: 3, updatedAt: AT } },
      { type: 'RseUsageSet', data: { ...disk, source: 'storage', used: 4, free: 5, files: null, updatedAt: AT } },
    ];
    const world = await given([rsesProjection], { 'rse-DISK': events });
    try {
      const document = await world.readModels.collection<RseDocument>(rsesCollection).get('DISK');
      expect(document).to.deep.include({
        id: disk.rseId,
        deleted: false,
        updatedAt: '2026-11-23T00:00:00.000Z',
        limits: { MinFreeSpace: 5 },
        qosPolicies: ['SSD'],
      });
      expect(document!.properties).to.deep.include({ city: 'Meyrin', availability_write: false });
      expect(document!.attributes).to.deep.equal({ DISK: true, tier: '1' });
      expect(document!.protocols).to.deep.equal([{ ...protocol, prefix: '/p' }]);
      expect(document!.usage.storage).to.deep.equal({ used: 4, free: 5, files: null, updatedAt: AT });
      const history = await world.readModels
        .collection<RseUsageHistoryDocument>(rseUsageHistoryCollection)
        .find({}, { sort: { _id: 1 } })
        .toArray();
      expect(history.map((entry) => entry.used)).to.deep.equal([1, 4]);
    } finally {
      await world.close();
    }
  });

  it('keep distances per pair and drop deleted RSEs from the expression facts', async () => {
    const world = await given([rsesProjection], {
      'rse-TAPE': created(tape),
      'rse-DISK': [
        ...created(disk),
        { type: 'RseDistanceSet', data: { ...disk, destRseId: tape.rseId, destRse: 'TAPE', distance: 1, at: AT } },
        {
          type: 'RseDistanceSet',
          data: { ...disk, destRseId: tape.rseId, destRse: 'TAPE', distance: 2, at: '2026-11-23T00:00:00.000Z' },
        },
      ],
    });
    try {
      const distances = await world.readModels
        .collection<RseDistanceDocument>(rseDistancesCollection)
        .find({})
        .toArray();
      expect(distances).to.have.length(1);
      expect(distances[0]).to.deep.include({
        srcRse: 'DISK',
        destRse: 'TAPE',
        distance: 2,
        createdAt: AT,
        updatedAt: '2026-11-23T00:00:00.000Z',
      });
      expect((await loadRseFacts(world.readModels)).map((facts) => facts.rse)).to.deep.equal(['DISK', 'TAPE']);
    } finally {
      await world.close();
    }
    const deleted = await given([rsesProjection], {
      'rse-DISK': [
        ...created(disk),
        { type: 'RseDeleted', data: { ...disk, deletedAt: AT } },
        { type: 'RseAttributeRemoved', data: { ...disk, key: 'DISK' } },
      ],
    });
    try {
      expect(await loadRseFacts(deleted.readModels)).to.deep.equal([]);
      expect(await deleted.readModels.collection<RseDocument>(rsesCollection).get('DISK')).to.deep.include({
        deleted: true,
        deletedAt: AT,
        attributes: {},
      });
    } finally {
      await deleted.close();
    }
  });

  it('keep one document per account limit, local by RSE id and global by expression', async () => {
    const events: AccountLimitEvent[] = [
      { type: 'LocalAccountLimitSet', data: { account: 'jdoe', ...disk, bytes: 10 } },
      { type: 'LocalAccountLimitSet', data: { account: 'jdoe', ...disk, bytes: 20 } },
      { type: 'GlobalAccountLimitSet', data: { account: 'jdoe', rseExpression: 'tier=1', bytes: -1 } },
      { type: 'GlobalAccountLimitSet', data: { account: 'jdoe', rseExpression: 'tier=2', bytes: 5 } },
      { type: 'GlobalAccountLimitRemoved', data: { account: 'jdoe', rseExpression: 'tier=2' } },
    ];
    const world = await given([accountLimitsProjection], { 'accountlimits-jdoe': events });
    try {
      const limits = await world.readModels
        .collection<AccountLimitDocument>(accountLimitsCollection)
        .find({ account: 'jdoe' }, { sort: { _id: 1 } })
        .toArray();
      expect(limits.map(({ kind, rse, rseExpression, bytes }) => ({ kind, rse, rseExpression, bytes }))).to.deep.equal([
        { kind: 'global', rse: null, rseExpression: 'tier=1', bytes: -1 },
        { kind: 'local', rse: 'DISK', rseExpression: null, bytes: 20 },
      ]);
    } finally {
      await world.close();
    }
  });
});
