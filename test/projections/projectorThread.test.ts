import { expect } from 'chai';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../infra/config.ts';
import { silentLogger } from '../../infra/logger.ts';
import { openStores } from '../../infra/stores.ts';
import { allProjections } from '../../projections/index.ts';
import { ProjectorThread } from '../../projections/runtime/projectorThread.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { accountsCollection } from '../../projections/account/accounts.ts';
import { newEvent, uniqueName } from '../support/events.ts';
import { makeTempDir } from '../support/tempDir.ts';

describe('Projection thread', () => {
  let dir: ReturnType<typeof makeTempDir>;
  beforeEach(() => (dir = makeTempDir()));
  afterEach(() => dir.dispose());

  it('applies what this thread appends and answers waitFor once the read models show it', async () => {
    const config = loadConfig({ DMS_DATA_DIR: dir.path, DMS_LOG_LEVEL: 'silent' });
    const { eventStore, readStore } = await openStores(config);
    const readModels = new ReadModels(readStore, allProjections);
    const thread = await ProjectorThread.start(config, readModels, silentLogger());
    try {
      const account = uniqueName('threaded');
      const event = newEvent('AccountCreated', {
        account,
        accountType: 'USER',
        email: 'a@example.org',
        createdAt: new Date().toISOString(),
      });
      const { position } = await eventStore.appendToStream(`account-${account}`, [event], 'no_stream');
      expect(await thread.waitFor(position, 10_000)).to.equal(true);
      expect(await readModels.collection(accountsCollection).get(account)).to.include({ account });
    } finally {
      await thread.stop();
      await eventStore.close();
      await readStore.close();
    }
  });

  it('fails to start, with the reason, when its stores cannot be opened', async () => {
    const blocker = join(dir.path, 'not-a-directory');
    writeFileSync(blocker, '');
    const config = loadConfig({ DMS_DATA_DIR: join(blocker, 'data'), DMS_LOG_LEVEL: 'silent' });
    const readModels = new ReadModels({} as never, allProjections);
    let failure: unknown;
    try {
      await ProjectorThread.start(config, readModels, silentLogger());
    } catch (error) {
      failure = error;
    }
    expect(String(failure)).to.match(/ENOTDIR|not a directory/);
  });

  it('starts a thread that died again, which resumes from its checkpoints', async () => {
    const config = loadConfig({ DMS_DATA_DIR: dir.path, DMS_LOG_LEVEL: 'silent' });
    const { eventStore, readStore } = await openStores(config);
    const readModels = new ReadModels(readStore, allProjections);
    const diesOnce = new URL('../fixtures/projectorThreadDiesOnce.ts', import.meta.url);
    const thread = await ProjectorThread.start(config, readModels, silentLogger(), diesOnce);
    const create = async (account: string) => {
      const event = newEvent('AccountCreated', {
        account,
        accountType: 'USER',
        email: 'a@example.org',
        createdAt: new Date().toISOString(),
      });
      return (await eventStore.appendToStream(`account-${account}`, [event], 'no_stream')).position;
    };
    // The successor says it is ready as the first thread did (which `start` awaited).
    const restarted = new Promise<void>((resolve) =>
      thread.onReport((report) => {
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
      expect(await thread.waitFor(await create(after), 15_000)).to.equal(true);
      const accounts = readModels.collection(accountsCollection);
      expect(await accounts.get(before)).to.include({ account: before });
      expect(await accounts.get(after)).to.include({ account: after });
    } finally {
      await thread.stop();
      await eventStore.close();
      await readStore.close();
    }
  });
});
