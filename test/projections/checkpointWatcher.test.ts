import { expect } from 'chai';
import { join } from 'node:path';
import { silentLogger } from '../../infra/logger.ts';
import { RedisPositionSignals } from '../../infra/queue/redisPositionSignals.ts';
import { SqliteReadStore } from '../../infra/readstore/sqlite/sqliteReadStore.ts';
import { appliedSignal } from '../../infra/queue/redisPositionSignals.ts';
import type { AnyProjection } from '../../projections/projection.ts';
import { CheckpointWatcher } from '../../projections/runtime/checkpointWatcher.ts';
import { ProjectionStores } from '../../projections/runtime/projectionStores.ts';
import {
  projectionCheckpointsCollection,
  projectionStateCollection,
  servingCheckpointId,
} from '../../projections/runtime/projectionState.ts';
import { eventually } from '../support/eventually.ts';
import { uniqueName } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * The wait of a process whose projections run in another one (dms api beside dms projector):
 * the projector's announcements over a real Redis, its checkpoints in a real read store, and
 * no projector: the tests write what it would.
 */
describe('CheckpointWatcher', () => {
  const names = ['alpha', 'beta'];
  let dir: ReturnType<typeof makeTempDir>;
  /** Each group in a store of its own, as `readmodels-<group>.sqlite` are. */
  let readStores: Map<string, SqliteReadStore>;
  let listening: RedisPositionSignals;
  let projector: RedisPositionSignals;
  let watcher: CheckpointWatcher;

  beforeEach(async () => {
    dir = makeTempDir();
    readStores = new Map(names.map((name) => [name, new SqliteReadStore(join(dir.path, `readmodels-${name}.sqlite`))]));
    const prefix = uniqueName('watcher');
    const url = process.env.REDIS_URL!;
    [listening, projector] = await Promise.all([
      RedisPositionSignals.open({ url, prefix, listen: names.map(appliedSignal), logger: silentLogger() }),
      RedisPositionSignals.open({ url, prefix, listen: [], logger: silentLogger() }),
    ]);
    const stores = ProjectionStores.of(
      readStores.get('alpha')!,
      names.map((name) => ({ group: { name, projections: [namedProjection(name)] }, store: readStores.get(name)! })),
    );
    watcher = new CheckpointWatcher(stores, { applied: (group) => listening.signal(appliedSignal(group)) });
  });

  afterEach(async () => {
    watcher.close();
    await Promise.all([listening.close(), projector.close()]);
    for (const readStore of readStores.values()) await readStore.close();
    dir.dispose();
  });

  /** What the projector of a group stores with a batch, in the group's store: the state and serving checkpoint. */
  const store = async (name: string, checkpoint: bigint, status: 'running' | 'failed' = 'running') => {
    const readStore = readStores.get(name)!;
    const updatedAt = new Date().toISOString();
    await readStore
      .collection(projectionStateCollection)
      .replaceOne({ _id: name }, { _id: name, version: 1, servingGeneration: 1, status, updatedAt }, { upsert: true });
    const id = servingCheckpointId(name);
    await readStore
      .collection(projectionCheckpointsCollection)
      .replaceOne({ _id: id }, { _id: id, checkpoint: checkpoint.toString(), updatedAt }, { upsert: true });
  };

  /** Both groups' projectors announce `position`. */
  const announce = (position: bigint) => {
    for (const name of names) projector.signal(appliedSignal(name)).publish(position);
  };

  it("ends a wait on the projector's announcement, which the checkpoints do not show", async () => {
    for (const name of names) await store(name, 1n);
    const waiting = watcher.waitFor(5n, 20_000);

    announce(5n);

    expect(await waiting).to.equal(true);
    expect(watcher.waitOutcomes()).to.deep.equal({ signal: 1, checkpoints: 0, timeout: 0 });
  });

  it('ends a wait on an announcement heard before the wait began', async () => {
    for (const name of names) await store(name, 1n);
    announce(7n);
    await eventually(() =>
      names.every((name) =>
        listening
          .signalCounts()
          .some((count) => count.signal === appliedSignal(name) && count.event === 'received' && count.count > 0),
      ),
    );

    expect(await watcher.waitFor(6n, 20_000)).to.equal(true);
    expect(watcher.waitOutcomes()).to.deep.equal({ signal: 1, checkpoints: 0, timeout: 0 });
  });

  it('ends a wait by the stored checkpoints when its announcement is lost', async () => {
    for (const name of names) await store(name, 1n);
    // Announcements come, so the checkpoints are looked at only now and then; this one is lost.
    announce(1n);
    await eventually(() => listening.signalCounts().some((count) => count.event === 'received' && count.count > 0));
    const waiting = watcher.waitFor(5n, 20_000);

    for (const name of names) await store(name, 5n);

    expect(await waiting).to.equal(true);
    expect(watcher.waitOutcomes()).to.deep.equal({ signal: 0, checkpoints: 1, timeout: 0 });
  });

  it('does not wait for a projection the projector has set aside', async () => {
    await store('alpha', 5n);
    await store('beta', 0n, 'failed');

    expect(await watcher.waitFor(5n, 20_000)).to.equal(true);
    expect(watcher.waitOutcomes()).to.deep.equal({ signal: 0, checkpoints: 1, timeout: 0 });
  });

  it('answers false at the timeout while a projection has not been started by any projector', async () => {
    await store('alpha', 5n);

    expect(await watcher.waitFor(5n, 50)).to.equal(false);
    expect(watcher.waitOutcomes()).to.deep.equal({ signal: 0, checkpoints: 0, timeout: 1 });
  });

  it('waits only for the groups named: a group behind does not hold a wait that does not need it', async () => {
    await store('alpha', 5n);
    await store('beta', 1n);

    expect(await watcher.waitFor(5n, 20_000, ['alpha'])).to.equal(true);
    expect(await watcher.waitFor(5n, 50, ['beta'])).to.equal(false);
  });
});

/** A projection that only names itself: the watcher reads nothing else of it. */
const namedProjection = (name: string): AnyProjection => ({
  name,
  version: 1,
  collections: [],
  handles: {},
  apply: async () => undefined,
});
