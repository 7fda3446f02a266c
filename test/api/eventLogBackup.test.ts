import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteEventStore } from '../../infra/eventstore/sqliteEventStore.ts';
import type { RecordedEvent } from '../../infra/eventstore/eventStore.ts';
import { allProjections } from '../../projections/index.ts';
import { storesOf } from '../support/readModelRebuild.ts';
import { uniqueName } from '../support/events.ts';
import { newScope, path } from '../support/dids.ts';
import { expectStatus, ROOT_PASSWORD, ROOT_USERNAME, startTestServer } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';
import { addReplicas, fileItem, rseWithProtocols } from './replicaSupport.ts';
import { dmsCommand } from '../../bench/lib/dmsCommand.ts';

/** `dms <args>` with its own data directory. */
const dms = (dataDir: string, ...args: string[]) =>
  spawnSync(dmsCommand().command, [...dmsCommand().args, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      DMS_DATA_DIR: dataDir,
      DMS_ROOT_USERNAME: ROOT_USERNAME,
      DMS_ROOT_PASSWORD: ROOT_PASSWORD,
      DMS_LOG_LEVEL: 'silent',
    },
  });

const allEvents = async (dataDir: string): Promise<RecordedEvent[]> => {
  const store = new SqliteEventStore(join(dataDir, 'events.sqlite'));
  try {
    return await store.readAll({ maxCount: 1_000_000 });
  } finally {
    await store.close();
  }
};

/** Every document of every projection's serving generation, by collection, sorted by id. */
const readModelsOf = async (dataDir: string): Promise<Record<string, unknown[]>> => {
  // Every projection group's file of the data directory, as the service wrote them.
  const stores = await storesOf(dataDir);
  try {
    const { readModels } = stores;
    await readModels.refresh();
    const collections: Record<string, unknown[]> = {};
    for (const projection of allProjections) {
      for (const spec of projection.collections) {
        collections[spec.name] = await readModels
          .collection(spec)
          .find({}, { sort: { _id: 1 } })
          .toArray();
      }
    }
    return collections;
  } finally {
    await stores.close();
  }
};

describe('API: backing up and restoring the event log', function () {
  // Two servers, an export, an import and a full projection run: about 15 s on an idle 2-core machine.
  this.timeout(90_000);

  it('exports a varied history and imports it into a fresh data directory, where every projection builds the same read models', async () => {
    const original = makeTempDir();
    const restored = makeTempDir();
    const backup = join(original.path, 'backup.ndjson');
    try {
      // A history with accounts, an identity, configuration, RSEs, a scope, files with replicas,
      // a dataset with metadata, an account limit and a rule.
      const server = await startTestServer({ dataDir: original.path, removeDataDir: () => undefined });
      try {
        const user = await server.createUser();
        await server.createUser({ admin: true });
        expectStatus(await server.root('POST', '/config', { body: { [uniqueName('section')]: { interval: 5 } } }), 201);
        const a = await rseWithProtocols(server);
        const b = await rseWithProtocols(server);
        const scope = await newScope(server, user.account);
        await addReplicas(server, a.rse, [fileItem(scope, 'f1'), fileItem(scope, 'f2'), fileItem(scope, 'f3')]);
        const dataset = uniqueName('ds');
        expectStatus(
          await server.call('POST', path(scope, dataset), { token: user.token, body: { type: 'DATASET' } }),
          201,
        );
        expectStatus(
          await server.call('POST', path(scope, dataset, '/dids'), {
            token: user.token,
            body: { dids: ['f1', 'f2', 'f3'].map((name) => ({ scope, name })) },
          }),
          201,
        );
        expectStatus(
          await server.call('POST', path(scope, dataset, '/meta'), {
            token: user.token,
            body: { meta: { campaign: 'mc23', colour: 'red' } },
          }),
          201,
        );
        expectStatus(
          await server.root('POST', `/accountlimits/local/${user.account}/${b.rse}`, { body: { bytes: 1_000_000 } }),
          201,
        );
        expectStatus(
          await server.call('POST', '/rules/', {
            token: user.token,
            body: { dids: [{ scope, name: dataset }], copies: 1, rse_expression: b.rse, account: user.account },
          }),
          201,
        );
      } finally {
        await server.stop();
      }

      const exported = dms(original.path, 'events', 'export', backup);
      expect(exported.status, exported.stderr).to.equal(0);
      expect(exported.stderr).to.match(/exported \d+ events/);
      const lines = readFileSync(backup, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { position: number; metadata: { hash?: string } });
      const events = await allEvents(original.path);
      expect(lines.map((line) => line.position)).to.deep.equal(events.map((event) => Number(event.position)));
      expect(lines.every((line) => typeof line.metadata.hash === 'string')).to.equal(true);

      const imported = dms(restored.path, 'events', 'import', backup);
      expect(imported.status, imported.stderr + imported.stdout).to.equal(0);
      expect(imported.stdout)
        .to.include(`imported ${events.length} events`)
        .and.include('every event kept its position');
      const refused = dms(restored.path, 'events', 'import', backup);
      expect(refused.status).to.equal(1);
      expect(refused.stderr).to.match(/not empty/);

      // The same events: ids, streams, revisions, positions, types, data, metadata and hashes.
      const comparable = (event: RecordedEvent) => ({ ...event, recordedAt: undefined });
      expect((await allEvents(restored.path)).map(comparable)).to.deep.equal(events.map(comparable));

      // Projections build from the imported log alone: the service appends nothing at start (root exists).
      const rebuilt = await startTestServer({ dataDir: restored.path, removeDataDir: () => undefined });
      expect(await rebuilt.runtime.services.progress.waitFor(events[events.length - 1]!.position, 10_000)).to.equal(
        true,
      );
      await rebuilt.stop();
      expect(await allEvents(restored.path)).to.have.length(events.length);
      const [before, after] = [await readModelsOf(original.path), await readModelsOf(restored.path)];
      expect(Object.keys(after)).to.deep.equal(Object.keys(before));
      for (const collection of Object.keys(before))
        expect(after[collection], collection).to.deep.equal(before[collection]);
      expect(before.dids!.length).to.be.greaterThan(3);
      expect(before.rules).to.have.length(1);
    } finally {
      original.dispose();
      restored.dispose();
    }
  });
});
