import { expect } from 'chai';
import { startProcess, type ServerProcess } from '../../bench/lib/serverProcess.ts';
import { accountStreamName } from '../../domain/account/account.ts';
import { identityStreamName } from '../../domain/identity/identity.ts';
import { loadConfig } from '../../infra/config.ts';
import { silentLogger } from '../../infra/logger.ts';
import { openStores } from '../../infra/stores.ts';
import { uniqueName } from '../support/events.ts';
import { ROOT_PASSWORD, ROOT_USERNAME } from '../support/server.ts';
import { makeTempDir } from '../support/tempDir.ts';

/**
 * Processes that start together on an empty store (issue 33, item 2): two `dms api`, a `dms worker`
 * and a `dms projector` started at the same instant on a fresh data directory and the shared
 * Redis of the test run all come up, and root is created exactly once, however their start-up
 * writes interleave. Ten rounds, each on its own store.
 */
const ROUNDS = Number(process.env.START_ROUNDS ?? 10);

/** The line each kind of process logs once it has started everything. */
const READY: Readonly<Record<string, string>> = {
  api: 'API listening',
  worker: 'daemon roles running',
  projector: 'projections running',
};

describe('Processes that start together on an empty store (issue 33)', function () {
  // Four processes per round on a busy machine: each start may take many seconds.
  this.timeout(ROUNDS * 120_000);

  it(`comes up with api, api, worker and projector started at once, root created once (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const dir = makeTempDir('concurrent-start-');
      const environment = {
        DMS_DATA_DIR: dir.path,
        PORT: '0',
        DMS_LOG_LEVEL: 'info',
        DMS_ROOT_USERNAME: ROOT_USERNAME,
        DMS_ROOT_PASSWORD: ROOT_PASSWORD,
        DMS_QUEUE_PREFIX: uniqueName('start'),
        REDIS_URL: process.env.REDIS_URL!,
      };
      const kinds = ['api', 'worker', 'api', 'projector'];
      const starts = await Promise.allSettled(
        kinds.map((kind) => startProcess('bin/dms.ts', [kind], environment, READY[kind]!)),
      );
      const started = starts.flatMap((start) => (start.status === 'fulfilled' ? [start.value] : []));
      try {
        const failures = starts.flatMap((start, index) =>
          start.status === 'rejected' ? [`${kinds[index]}: ${String(start.reason)}`] : [],
        );
        expect(failures, `round ${round}: every process came up`).to.deep.equal([]);
        for (const api of started.filter((_, index) => kinds[index] === 'api')) await loginWorks(api);
      } finally {
        await Promise.all(started.map((child) => child.stop()));
      }
      try {
        expect(await rootEvents(dir.path), `round ${round}: root created once`).to.deep.equal({
          account: ['AccountCreated'],
          identity: ['IdentityAdded', 'IdentityGrantedToAccount'],
        });
      } finally {
        dir.dispose();
      }
    }
  });
});

/** Root's password opens a session on this API process, and its token is accepted. */
const loginWorks = async (api: ServerProcess): Promise<void> => {
  const login = await fetch(`${api.url}/auth/userpass`, {
    headers: { 'X-Svc-Username': ROOT_USERNAME, 'X-Svc-Password': ROOT_PASSWORD },
  });
  expect(login.status, `login on ${api.url}`).to.equal(200);
  const token = login.headers.get('x-svc-auth-token')!;
  const whoami = await fetch(`${api.url}/accounts/root`, { headers: { 'X-Svc-Auth-Token': token } });
  expect(whoami.status, `the token works on ${api.url}`).to.equal(200);
};

/** The types of the events on root's account stream and its userpass identity's, read from the stopped store. */
const rootEvents = async (dataDir: string) => {
  const config = loadConfig({ DMS_DATA_DIR: dataDir, DMS_ROOT_USERNAME: ROOT_USERNAME });
  const { eventStore, readStore } = await openStores(config, { logger: silentLogger() });
  try {
    const types = async (stream: string) => (await eventStore.readStream(stream)).map((event) => event.type);
    return {
      account: await types(accountStreamName('root')),
      identity: await types(identityStreamName('USERPASS', ROOT_USERNAME)),
    };
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
