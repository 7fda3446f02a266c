import { expect } from 'chai';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { startRuntime } from '../../bin/runtime.ts';
import { loadServiceConfig } from '../../infra/serviceConfig.ts';
import type { EventStore } from '../../infra/eventstore/eventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import { openStores } from '../../infra/stores.ts';
import { allProjections } from '../../projections/index.ts';
import {
  projectionCheckpointsCollection,
  servingCheckpointId,
  type ProjectionCheckpointDocument,
} from '../../projections/runtime/projectionState.ts';
import type { ProjectionStores } from '../../projections/runtime/projectionStores.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { makeTempDir } from './tempDir.ts';

/**
 * "Projections converge to a rebuild" (the house's standard), checked from outside a data
 * directory: its read models against the ones a fresh projector makes from a copy of its events
 * alone. The crash tests end with it.
 */

/** The lowest serving checkpoint of every projection (in its group's store), against the head of the event store. */
export const lagOf = async (eventStore: EventStore, stores: ProjectionStores): Promise<bigint> => {
  const head = await eventStore.headPosition();
  let lag = 0n;
  for (const projection of allProjections) {
    const checkpoints = stores
      .storeOf(projection.name)!
      .collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection);
    const checkpoint = BigInt((await checkpoints.get(servingCheckpointId(projection.name)))?.checkpoint ?? '0');
    if (head - checkpoint > lag) lag = head - checkpoint;
  }
  return lag;
};

export const waitForZeroLag = async (
  eventStore: EventStore,
  stores: ProjectionStores,
  timeoutMs = 30_000,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (let lag = await lagOf(eventStore, stores); lag > 0n; lag = await lagOf(eventStore, stores)) {
    if (Date.now() > deadline) throw new Error(`the projections still lag ${lag} events behind`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** Every document of every projection's serving collections, by collection, in id order. */
export const readModelContents = async (readModels: ReadModels): Promise<Record<string, unknown[]>> => {
  await readModels.refresh();
  const contents: Record<string, unknown[]> = {};
  for (const projection of allProjections) {
    for (const collection of projection.collections) {
      contents[collection.name] = await readModels
        .collection(collection)
        .find({}, { sort: { _id: 1 } })
        .toArray();
    }
  }
  return contents;
};

/**
 * The stores of a data directory (the event log, the shared read store, and every projection
 * group's through `readModels`), for looking from outside while a service runs on it (or after).
 */
export const storesOf = async (dataDir: string) => {
  const config = loadServiceConfig({ DMS_DATA_DIR: dataDir, DMS_LOG_LEVEL: 'silent' });
  const { eventStore, readStore } = await openStores(config);
  const readModels = await ReadModels.open(config, readStore);
  return {
    eventStore,
    readStore,
    readModels,
    close: async () => {
      await eventStore.close();
      await readModels.close();
      await readStore.close();
    },
  };
};

/** Waits, from outside the service running on `dataDir`, until every projection has applied the whole log. */
export const waitForCaughtUp = async (dataDir: string, timeoutMs = 60_000): Promise<void> => {
  const stores = await storesOf(dataDir);
  try {
    await waitForZeroLag(stores.eventStore, stores.readModels.stores, timeoutMs);
  } finally {
    await stores.close();
  }
};

/**
 * With the service on `dataDir` stopped: projects a copy of its events from the start in a fresh
 * directory, lets the original's projections finish from their checkpoints, and expects every
 * read model to be the same, collection by collection. Answers the original read models.
 */
export const expectReadModelsEqualRebuild = async (
  dataDir: string,
  timeoutMs = 120_000,
): Promise<Record<string, unknown[]>> => {
  const rebuildDir = makeTempDir('dms-rebuild-');
  try {
    for (const file of ['events.sqlite', 'events.sqlite-wal']) {
      if (existsSync(join(dataDir, file))) copyFileSync(join(dataDir, file), join(rebuildDir.path, file));
    }
    const rebuilt = await startRuntime(
      loadServiceConfig({ DMS_DATA_DIR: rebuildDir.path, DMS_LOG_LEVEL: 'silent' }),
      { api: false, projector: true, workers: false },
      silentLogger(),
    );
    try {
      await waitForZeroLag(rebuilt.eventStore, rebuilt.services.readModels.stores, timeoutMs);
      // The original's projections resume from their checkpoints, for what the service wrote last.
      const original = await startRuntime(
        loadServiceConfig({ DMS_DATA_DIR: dataDir, DMS_LOG_LEVEL: 'silent' }),
        { api: false, projector: true, workers: false },
        silentLogger(),
      );
      try {
        await waitForZeroLag(original.eventStore, original.services.readModels.stores, timeoutMs);
        const before = await readModelContents(original.services.readModels);
        const after = await readModelContents(rebuilt.services.readModels);
        for (const name of Object.keys(before)) expect(after[name], `read model ${name}`).to.deep.equal(before[name]);
        return before;
      } finally {
        await original.stop();
      }
    } finally {
      await rebuilt.stop();
    }
  } finally {
    rebuildDir.dispose();
  }
};
