import { expect } from 'chai';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { startDms, type ServerProcess } from '../../bench/lib/serverProcess.ts';
import { startRuntime } from '../../bin/runtime.ts';
import { loadConfig } from '../../infra/config.ts';
import type { EventStore } from '../../infra/eventstore/eventStore.ts';
import { silentLogger } from '../../infra/logger.ts';
import type { ReadStore } from '../../infra/readstore/readStore.ts';
import { openStores } from '../../infra/stores.ts';
import { allProjections } from '../../projections/index.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import {
  projectionCheckpointsCollection,
  servingCheckpointId,
  type ProjectionCheckpointDocument,
} from '../../projections/runtime/projectionState.ts';
import { request } from '../support/http.ts';
import { makeTempDir } from '../support/tempDir.ts';

const PASSWORD = 'crash-test-secret';
const WRITERS = 8;

const login = async (url: string): Promise<string> => {
  const response = await request(url, 'GET', '/auth/userpass', {
    headers: { 'X-Svc-Username': 'ddmlab', 'X-Svc-Password': PASSWORD },
  });
  expect(response.status, response.text).to.equal(200);
  return String(response.headers['x-svc-auth-token']);
};

/** The lowest serving checkpoint of every projection, against the head of the event store. */
const lagOf = async (eventStore: EventStore, readStore: ReadStore): Promise<bigint> => {
  const head = await eventStore.headPosition();
  const checkpoints = readStore.collection<ProjectionCheckpointDocument>(projectionCheckpointsCollection);
  let lag = 0n;
  for (const projection of allProjections) {
    const checkpoint = BigInt((await checkpoints.get(servingCheckpointId(projection.name)))?.checkpoint ?? '0');
    if (head - checkpoint > lag) lag = head - checkpoint;
  }
  return lag;
};

const waitForZeroLag = async (eventStore: EventStore, readStore: ReadStore, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (let lag = await lagOf(eventStore, readStore); lag > 0n; lag = await lagOf(eventStore, readStore)) {
    if (Date.now() > deadline) throw new Error(`the projections still lag ${lag} events behind`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** Every document of every projection's serving collections, by collection, in id order. */
const readModelContents = async (readStore: ReadStore): Promise<Record<string, unknown[]>> => {
  const readModels = new ReadModels(readStore, allProjections);
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
 * Issue 14: `kill -9` of a real server process (`dms serve`) in the middle of concurrent writes.
 * After a restart every write that was acknowledged is readable, the projections catch up to
 * zero lag, and the read models equal the ones a fresh rebuild from the same events makes.
 */
describe('crash recovery: kill -9 under concurrent writes', function () {
  this.timeout(120_000);
  const dir = makeTempDir('dms-crash-');
  const rebuildDir = makeTempDir('dms-rebuild-');
  let server: ServerProcess | undefined;
  after(async () => {
    await server?.stop();
    dir.dispose();
    rebuildDir.dispose();
  });

  it('keeps every acknowledged write and projects all of them again, equal to a rebuild', async () => {
    const environment = { DMS_ROOT_PASSWORD: PASSWORD, DMS_LOG_LEVEL: 'warn' };
    server = await startDms(dir.path, { ...environment, DMS_LOG_LEVEL: 'info' });
    let token = await login(server.url);
    const scope = 'crash.test';
    expect((await request(server.url, 'POST', `/scopes/root/${scope}`, { token })).status).to.equal(201);

    // Writers: accounts and datasets, each acknowledged one remembered.
    const acknowledged = { accounts: [] as string[], datasets: [] as string[] };
    let stop = false;
    let sent = 0;
    const url = server.url;
    const writers = Array.from({ length: WRITERS }, async (_, writer) => {
      for (let index = 0; !stop; index += 1) {
        const name = `w${writer}n${index}`;
        sent += 1;
        try {
          if (index % 2 === 0) {
            const response = await request(url, 'POST', `/accounts/${name}`, {
              token,
              body: { type: 'USER', email: `${name}@example.org` },
            });
            if (response.status === 201) acknowledged.accounts.push(name);
          } else {
            const response = await request(url, 'POST', `/dids/${scope}/${name}`, {
              token,
              body: { type: 'DATASET', meta: { writer } },
            });
            if (response.status === 201) acknowledged.datasets.push(name);
          }
        } catch {
          // The connection died with the server: not acknowledged.
          return;
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    process.kill(server.pid, 'SIGKILL');
    stop = true;
    await Promise.all(writers);
    server = undefined;
    const written = acknowledged.accounts.length + acknowledged.datasets.length;
    expect(written, `of ${sent} writes sent`).to.be.greaterThan(20);
    console.log(`      killed with ${sent - written} of ${sent} writes unanswered; ${written} acknowledged`);

    // Restart on the same files: everything acknowledged is there.
    server = await startDms(dir.path, { ...environment, DMS_LOG_LEVEL: 'info' });
    token = await login(server.url);
    const missing: string[] = [];
    for (const account of acknowledged.accounts) {
      if ((await request(server.url, 'GET', `/accounts/${account}`, { token })).status !== 200)
        missing.push(`account ${account}`);
    }
    for (const dataset of acknowledged.datasets) {
      if ((await request(server.url, 'GET', `/dids/${scope}/${dataset}`, { token })).status !== 200)
        missing.push(`dataset ${dataset}`);
    }
    expect(missing, 'acknowledged writes lost').to.deep.equal([]);

    // Zero lag, seen from outside the server while it runs; then a clean stop.
    const config = loadConfig({ DMS_DATA_DIR: dir.path, DMS_LOG_LEVEL: 'silent' });
    const stores = await openStores(config);
    try {
      await waitForZeroLag(stores.eventStore, stores.readStore);
    } finally {
      await stores.eventStore.close();
      await stores.readStore.close();
    }
    await server.stop();
    server = undefined;

    // A fresh rebuild from a copy of the events only, compared collection by collection.
    for (const file of ['events.sqlite', 'events.sqlite-wal']) {
      if (existsSync(join(dir.path, file))) copyFileSync(join(dir.path, file), join(rebuildDir.path, file));
    }
    const rebuilt = await startRuntime(
      loadConfig({ DMS_DATA_DIR: rebuildDir.path, DMS_LOG_LEVEL: 'silent' }),
      { api: false, projector: true, workers: false },
      silentLogger(),
    );
    try {
      await waitForZeroLag(rebuilt.eventStore, rebuilt.readStore);
      const original = await openStores(config);
      try {
        expect(await lagOf(original.eventStore, original.readStore)).to.equal(0n);
        const before = await readModelContents(original.readStore);
        const after = await readModelContents(rebuilt.readStore);
        for (const name of Object.keys(before)) expect(after[name], `read model ${name}`).to.deep.equal(before[name]);
        expect(before.accounts!.length).to.be.greaterThan(acknowledged.accounts.length);
      } finally {
        await original.eventStore.close();
        await original.readStore.close();
      }
    } finally {
      await rebuilt.stop();
    }
  });
});
