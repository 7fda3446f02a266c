import { expect } from 'chai';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadServiceConfig } from '../../infra/serviceConfig.ts';
import { silentLogger } from '../../infra/logger.ts';
import { openStores } from '../../infra/stores.ts';
import { ProjectorThread } from '../../projections/runtime/projectorThread.ts';
import { RunningProjections } from '../../projections/runtime/runningProjections.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { accountsCollection } from '../../projections/account/accountsProjection.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Projection groups on threads of their own, over real stores in a temporary data directory: what
 * `dms serve` and `dms projector` run (bin/runtime.ts).
 */
describe('Projection threads', () => {
  let dir: ReturnType<typeof makeTempDir>;
  beforeEach(() => (dir = makeTempDir()));
  afterEach(() => dir.dispose());

  const accountCreated = (account: string) =>
    newEvent('AccountCreated', {
      account,
      accountType: 'USER',
      email: 'a@example.org',
      createdAt: new Date().toISOString(),
    });

  it('writes each group into its own file, in parallel threads, and answers waitFor once the groups named show it', async () => {
    const config = loadServiceConfig({ DMS_DATA_DIR: dir.path, DMS_LOG_LEVEL: 'silent' });
    const { eventStore, readStore } = await openStores(config);
    const readModels = await ReadModels.open(config, readStore);
    const running = await RunningProjections.start(readModels.stores.groups, readModels, (group, onReport) =>
      ProjectorThread.start(config, group, onReport, silentLogger()),
    );
    try {
      const account = uniqueName('threaded');
      const { position } = await eventStore.appendToStream(
        `account-${account}`,
        [accountCreated(account)],
        'no_stream',
      );
      expect(await running.waitFor(position, 10_000, ['general'])).to.equal(true);
      expect(await readModels.collection(accountsCollection).get(account)).to.include({ account });
      // Every group reads the whole log, so each reaches the position, whether it handles the event or not.
      expect(await running.waitFor(position, 10_000)).to.equal(true);
      for (const group of readModels.stores.groups)
        expect(existsSync(join(dir.path, `readmodels-${group.name}.sqlite`)), group.name).to.equal(true);
    } finally {
      await running.stop();
      await eventStore.close();
      await readModels.close();
      await readStore.close();
    }
  });

  it('fails to start, with the reason, when its stores cannot be opened', async () => {
    const blocker = join(dir.path, 'not-a-directory');
    writeFileSync(blocker, '');
    const config = loadServiceConfig({ DMS_DATA_DIR: join(blocker, 'data'), DMS_LOG_LEVEL: 'silent' });
    let failure: unknown;
    try {
      await ProjectorThread.start(config, ['general'], () => undefined, silentLogger());
    } catch (error) {
      failure = error;
    }
    expect(String(failure)).to.match(/ENOTDIR|not a directory/);
  });

  it('fails to start with SQLite’s own words when a group’s file is not a database', async () => {
    writeFileSync(
      join(dir.path, 'readmodels-general.sqlite'),
      'not a database, but long enough to be read as a header '.repeat(8),
    );
    const config = loadServiceConfig({ DMS_DATA_DIR: dir.path, DMS_LOG_LEVEL: 'silent' });
    let failure: unknown;
    try {
      await ProjectorThread.start(config, ['general'], () => undefined, silentLogger());
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(Error);
    expect(String(failure)).to.match(/SqliteError: file is not a database/);
    expect(failure).to.have.property('code', 'SQLITE_NOTADB');
  });

  it('starts a thread that died again, which resumes from its checkpoints', async () => {
    const config = loadServiceConfig({ DMS_DATA_DIR: dir.path, DMS_LOG_LEVEL: 'silent' });
    const { eventStore, readStore } = await openStores(config);
    const readModels = await ReadModels.open(config, readStore);
    const diesOnce = new URL('../fixtures/projectorThreadDiesOnce.ts', import.meta.url);
    const general = readModels.stores.groups.filter((group) => group.name === 'general');
    const running = await RunningProjections.start(general, readModels, (group, onReport) =>
      ProjectorThread.start(config, group, onReport, silentLogger(), diesOnce),
    );
    const create = async (account: string) =>
      (await eventStore.appendToStream(`account-${account}`, [accountCreated(account)], 'no_stream')).position;
    // The successor says it is ready as the first thread did (which `start` awaited).
    const restarted = new Promise<void>((resolve) =>
      running.onReport((report) => {
        if (report.type === 'ready') resolve();
      }),
    );
    try {
      const before = uniqueName('before');
      await create(before);
      // The thread dies once it has applied the first write; writes made meanwhile wait for its successor.
      await restarted;
      expect(existsSync(join(dir.path, 'projection-thread-died'))).to.equal(true);
      const after = uniqueName('after');
      expect(await running.waitFor(await create(after), 15_000)).to.equal(true);
      const accounts = readModels.collection(accountsCollection);
      expect(await accounts.get(before)).to.include({ account: before });
      expect(await accounts.get(after)).to.include({ account: after });
    } finally {
      await running.stop();
      await eventStore.close();
      await readModels.close();
      await readStore.close();
    }
  });
});
